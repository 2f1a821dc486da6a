// Captured PFC frames to the hop they paused (experiments/run/capture_pauses.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/experiments/run/capture_pauses.hpp"

namespace rocelab::experiments {
namespace {

// Two hosts: h1 (02:00:00:00:00:01) on switch port 0 (02:aa:00:00:00:01), h2 on port 1.
const lab_port_macs macs{{"02:00:00:00:00:01", "02:00:00:00:00:02"}, {"02:AA:00:00:00:01", "02:aa:00:00:00:02"}};
const pause_devices devices{0, 2, 3};  // h1, h2, sw, capture

struct captured_pause {
  std::string mac;
  std::int64_t start, end;
};

// An analysis holding these intervals, each on the port its MAC names.
captures::capture_analysis captured(const std::vector<captured_pause>& pauses) {
  captures::capture_analysis a;
  for (const auto& c : pauses) {
    captures::pause_interval p;
    const auto known = std::find(a.ports.begin(), a.ports.end(), c.mac);
    p.port = static_cast<std::uint32_t>(known - a.ports.begin());
    if (known == a.ports.end()) a.ports.push_back(c.mac);
    p.priority = 3;
    p.start_ns = c.start;
    p.end_ns = c.end;
    a.pauses.push_back(p);
  }
  return a;
}

TEST(capture_pauses, a_switch_frame_pauses_the_host_nic_a_host_frame_pauses_the_switch_port) {
  const auto out = attribute_capture_pauses(captured({{"02:aa:00:00:00:02", 1'000, 3'000},   // switch port 1 -> h2
                                                      {"02:00:00:00:00:01", 2'000, 2'500},   // h1 -> switch port 0
                                                      {"02:bb:00:00:00:09", 4'000, 4'100}}),  // unknown
                                            macs, devices, 500);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].device, 1u);  // h2's NIC could not transmit
  EXPECT_EQ(out[0].port, 0u);
  EXPECT_EQ(out[0].start_ns, 500);
  EXPECT_EQ(out[0].end_ns, 2'500);
  EXPECT_EQ(out[1].device, 2u);  // the switch's egress toward h1
  EXPECT_EQ(out[1].port, 0u);
  EXPECT_EQ(out[2].device, 3u);  // stays on the capture
  for (const auto& p : out) {
    EXPECT_EQ(p.priority, 3);
    EXPECT_EQ(p.source, pause_source::capture);
  }
  EXPECT_EQ(paused_ns_total(out), 2'000 + 500 + 100);
}

TEST(capture_pauses, mac_case_does_not_matter) {
  const auto out = attribute_capture_pauses(captured({{"02:AA:00:00:00:01", 0, 10}}), macs, devices, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].device, 0u);
}

}  // namespace
}  // namespace rocelab::experiments
