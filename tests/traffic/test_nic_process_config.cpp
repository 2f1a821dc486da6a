// A soft NIC's config line (nic_process.hpp) as the fleet writes it and the NIC reads it:
// where the NIC holds itself around an armed instant (start_cpu) survives the line, an
// absent one means none, and an impossible one is refused naming the field.
#include "rocelab/traffic/soft_nic/nic_process.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>

#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

std::vector<fleet_host> hosts(std::uint8_t n) {
  std::vector<fleet_host> out;
  for (std::uint8_t i = 0; i < n; ++i) {
    fleet_host h;
    h.name = "h" + std::to_string(i);
    h.address.mac = {0x02, 0x52, 0x4c, 0, 0, i};
    h.address.ip = {198, 18, 0, i};
    out.push_back(h);
  }
  return out;
}

TEST(nic_process_config, the_start_cpu_survives_the_config_line_and_an_absent_one_is_none) {
  fleet_options o;
  o.nic.line_rate_bps = 500'000'000;
  o.start_cpus = {3, 5};
  const auto configs = fleet_configs(hosts(5), o);
  ASSERT_EQ(configs.size(), 5u);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    auto back = nic_process_config_from_json(to_json(configs[i]));
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->start_cpu, i % 2 == 0 ? 3 : 5) << "host " << i << ": hosts go round the CPUs in turn";
    EXPECT_EQ(back->start_rt_priority, 60);
  }
  auto line = to_json(configs[0]);
  line.erase("start_cpu");
  auto back = nic_process_config_from_json(line);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->start_cpu, -1) << "a config from before start_cpu: the NIC is not held anywhere";
}

TEST(nic_process_config, without_cpus_to_spread_over_no_nic_is_held_to_one) {
  fleet_options o;
  o.nic.line_rate_bps = 500'000'000;
  for (const auto& c : fleet_configs(hosts(3), o)) EXPECT_EQ(c.start_cpu, -1);
}

TEST(nic_process_config, an_impossible_start_cpu_is_refused_naming_it) {
  fleet_options o;
  o.nic.line_rate_bps = 500'000'000;
  auto line = to_json(fleet_configs(hosts(2), o)[0]);
  for (const int cpu : {-2, CPU_SETSIZE}) {
    line["start_cpu"] = cpu;
    auto back = nic_process_config_from_json(line);
    ASSERT_FALSE(back.ok()) << cpu;
    EXPECT_NE(back.error().message().find("start_cpu"), std::string::npos) << back.error().message();
  }
}

// The lab's dilation travels with the DCQCN knobs and is checked by the knobs' own
// validation, so the NIC refuses exactly what the spec would.
TEST(nic_process_config, the_dcqcn_dilation_survives_the_line_and_an_impossible_one_is_refused) {
  fleet_options o;
  o.nic.line_rate_bps = 500'000'000;
  o.nic.dcqcn.time_scale = 200;
  auto line = to_json(fleet_configs(hosts(2), o)[0]);
  auto back = nic_process_config_from_json(line);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->nic.dcqcn.time_scale, 200);
  for (const double k : {0.0, -3.0}) {
    line["nic"]["dcqcn_time_scale"] = k;
    auto refused = nic_process_config_from_json(line);
    ASSERT_FALSE(refused.ok()) << k;
    EXPECT_NE(refused.error().message().find("time_scale"), std::string::npos) << refused.error().message();
  }
}

TEST(nic_process_config, this_process_cpus_lists_the_cpu_it_runs_on) {
  const auto cpus = this_process_cpus();
  ASSERT_FALSE(cpus.empty());
  EXPECT_NE(std::find(cpus.begin(), cpus.end(), ::sched_getcpu()), cpus.end());
  EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic
