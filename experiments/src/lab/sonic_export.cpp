#include "rocelab/experiments/lab/sonic_export.hpp"

#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

namespace rocelab::experiments {

result<std::string> sonic_config_db_json(const experiment_spec& spec, const export_options& options) {
  auto settings = export_switch_settings(spec, options);
  if (!settings) return settings.error().with_context("exporting SONiC config_db");
  auto json = fabric::drivers::to_config_db(*settings, fabric::drivers::sonic_options{});
  if (!json) return json.error().with_context("exporting SONiC config_db");
  return json->dump(2) + "\n";
}

}  // namespace rocelab::experiments
