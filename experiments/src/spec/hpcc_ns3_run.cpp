// Running an HPCC ns-3 scenario on the twin, apart from the parsing so that reading and
// writing the formats needs no engine.
#include "rocelab/experiments/spec/hpcc_ns3.hpp"
#include "rocelab/traffic/message_list.hpp"

namespace rocelab::experiments {

result<run_records> run_hpcc_scenario(const hpcc_scenario& scenario) {
  traffic::message_list_workload load(hpcc_messages(scenario));
  return fabric::twin::run_twin(scenario.config, load).with_context("running the HPCC ns-3 scenario");
}

}  // namespace rocelab::experiments
