// `rocelab capture --iface` through libpcap: every frame sent is in the file, and the
// kernel reports no drops.
#include "rocelab/captures/pcap_source.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include "../support/capture_lab.hpp"
#include "../support/test_netns.hpp"

namespace rocelab::test {
namespace {

TEST(lab_pcap_capture, veth_capture_holds_every_frame_sent_without_drops) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();

  constexpr std::uint32_t frames = 2000;
  const scoped_file file{"/tmp/rl-lab-pcap-" + std::to_string(::getpid()) + ".pcapng"};
  const auto out = run_capture_lab(*ns, {"--iface", test_netns::veth_b}, frames, file.path);

  ASSERT_NO_FATAL_FAILURE(expect_complete_capture(out, frames));
  EXPECT_NE(out.output.find("kernel_dropped=0 if_dropped=0"), std::string::npos) << out.output;
  std::cout << out.output;
}

TEST(lab_pcap_capture, missing_interface_is_a_runtime_error_naming_it) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();
  auto child = child_process::spawn({std::string(ROCELAB_BINARY_DIR) + "/rocelab", "capture",
                                     "--iface", "rl-nope", "-w", "/tmp/rl-lab-unused.pcapng"},
                                    ns->name());
  ASSERT_TRUE(child.ok()) << child.error().message();
  const auto rc = child->wait(std::chrono::seconds(20));
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 1);
  EXPECT_NE(child->output().find("rl-nope"), std::string::npos) << child->output();
}

TEST(lab_pcap_capture, open_reports_interface_and_timestamp_source) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();
  // Opened from a thread inside the namespace; the capture socket stays in it.
  auto source = ns->run_inside([] {
    captures::pcap_source_options options;
    options.interface = test_netns::veth_b;
    return captures::pcap_source::open(options);
  });
  ASSERT_TRUE(source.ok()) << source.error().message();
  const auto interfaces = (*source)->interfaces();
  ASSERT_EQ(interfaces.size(), 1u);
  EXPECT_EQ(interfaces[0].name, test_netns::veth_b);
  EXPECT_EQ(interfaces[0].link, captures::link_type::ethernet);
  // veth has no hardware clock.
  EXPECT_EQ((*source)->timestamps(), captures::timestamp_source::software);
  // Nothing is sent: poll returns at its timeout with no packets.
  const auto start = std::chrono::steady_clock::now();
  auto polled = (*source)->poll(std::chrono::milliseconds(50), [](const captures::packet_view&) {});
  ASSERT_TRUE(polled.ok()) << polled.error().message();
  EXPECT_EQ(*polled, 0u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(45));
}

}  // namespace
}  // namespace rocelab::test
