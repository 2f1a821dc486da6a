// `rocelab capture --dpdk` on DPDK's af_packet PMD: every frame sent is in the file, and
// DPDK reports no missed packets and no mbuf shortage.
#include "rocelab/captures/dpdk_source.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "../support/capture_lab.hpp"
#include "../support/test_netns.hpp"

namespace rocelab::test {
namespace {

// Removes a directory tree at scope exit.
struct scoped_dir {
  std::string path;
  ~scoped_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

TEST(lab_dpdk_capture, af_packet_port_captures_every_frame_sent_without_drops) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();

  constexpr std::uint32_t frames = 2000;
  const std::string tag = std::to_string(::getpid());
  const scoped_file file{"/tmp/rl-lab-dpdk-" + tag + ".pcapng"};
  // No hugepages and no PCI scan: the port is the af_packet vdev on veth_b. A unique file
  // prefix and --no-shconf keep parallel runs apart (DPDK 22.11 refuses --in-memory with
  // --no-huge); -l 0 keeps DPDK to one lcore. DPDK leaves its empty runtime directory
  // behind, so the test removes it.
  const scoped_dir runtime_dir{"/var/run/dpdk/rl" + tag};
  const std::string eal = "-l 0 --no-huge --no-pci -m 256 --no-shconf --no-telemetry"
                          " --file-prefix=rl" + tag +
                          " --vdev=net_af_packet0,iface=" + std::string(test_netns::veth_b) +
                          " --log-level=lib.eal:notice";
  const auto out = run_capture_lab(*ns, {"--dpdk", eal}, frames, file.path);

  ASSERT_NO_FATAL_FAILURE(expect_complete_capture(out, frames));
  // af_packet's imissed misses kernel ring overflows (DPDK 22.11), so the byte-for-byte
  // completeness above is the real proof; the counters must still read zero.
  EXPECT_NE(out.output.find("imissed=0 rx_nombuf=0"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("rocelab capture: 2000 packets"), std::string::npos) << out.output;
  std::cout << out.output;
}

// Frames longer than DPDK's default 1500-byte MTU reach the file whole: 4 KB and 9 KB
// RoCEv2 frames on veths with a 9216-byte MTU, through an af_packet vdev named without
// framesz= (whose own default, 2 KB ring frames, cuts them): the capture sizes the ring,
// the mbufs and the port's MTU for its capture MTU.
TEST(lab_dpdk_capture, af_packet_port_captures_4k_and_9k_frames_whole) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();
  for (const char* veth : {test_netns::veth_a, test_netns::veth_b})
    ASSERT_TRUE(run_program({"ip", "-n", ns->name(), "link", "set", veth, "mtu", "9216"}).ok());
  for (const std::size_t payload : {std::size_t{4096}, std::size_t{9000}}) {
    constexpr std::uint32_t frames = 300;
    const std::string tag = std::to_string(::getpid()) + "j" + std::to_string(payload);
    const scoped_file file{"/tmp/rl-lab-dpdk-" + tag + ".pcapng"};
    const scoped_dir runtime_dir{"/var/run/dpdk/rl" + tag};
    const std::string eal = "-l 0 --no-huge --no-pci -m 512 --no-shconf --no-telemetry --file-prefix=rl" + tag +
                            " --vdev=net_af_packet0,iface=" + std::string(test_netns::veth_b) +
                            " --log-level=lib.eal:notice";
    const auto out = run_capture_lab(*ns, {"--dpdk", eal}, frames, file.path, payload);
    SCOPED_TRACE("payload " + std::to_string(payload) + " bytes");
    ASSERT_NO_FATAL_FAILURE(expect_complete_capture(out, frames));
    EXPECT_NE(out.output.find("MTU 1500"), std::string::npos) << "af_packet's port takes 1500 (max_rx_pktlen 1518); "
                                                                 "its ring decides\n" << out.output;
  }
}

// A capture kept off the CPU for longer than its ring lasts loses frames in the kernel
// (the PMD's PACKET_MMAP ring is full). DPDK 22.11's af_packet PMD counts none of them in
// any ethdev counter; `rocelab capture` reads them from the PMD's socket and reports them as
// kernel_dropped: every frame sent is in the file or in that count. About 2 s.
TEST(lab_dpdk_capture, af_packet_ring_overflow_is_reported_as_kernel_dropped) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  using namespace std::chrono_literals;
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();
  constexpr std::uint32_t frames = 2000;
  constexpr std::uint32_t ring_frames = 512;  // the PMD's default, explicit
  const std::string tag = std::to_string(::getpid()) + "ov";
  const scoped_file file{"/tmp/rl-lab-dpdk-" + tag + ".pcapng"};
  const scoped_dir runtime_dir{"/var/run/dpdk/rl" + tag};
  const std::string eal = "-l 0 --no-huge --no-pci -m 256 --no-shconf --no-telemetry --file-prefix=rl" + tag +
                          " --vdev=net_af_packet0,iface=" + std::string(test_netns::veth_b) +
                          ",framecnt=" + std::to_string(ring_frames) + " --log-level=lib.eal:notice";
  auto child = child_process::spawn({std::string(ROCELAB_BINARY_DIR) + "/rocelab", "capture", "--dpdk", eal,
                                     "--duration", "30", "-w", file.path},
                                    ns->name());
  ASSERT_TRUE(child.ok()) << child.error().message();
  ASSERT_TRUE(child->wait_for_output("rocelab capture: capturing on", 60s)) << child->output();
  auto sender = raw_sender::open(*ns, test_netns::veth_a);
  ASSERT_TRUE(sender.ok()) << sender.error().message();
  // The capture off the CPU while every frame arrives: the ring takes ring_frames of them.
  ASSERT_EQ(::kill(child->pid(), SIGSTOP), 0);
  for (std::uint32_t seq = 0; seq < frames; ++seq) ASSERT_TRUE(sender->send(lab_frame(seq)).ok()) << seq;
  ASSERT_EQ(::kill(child->pid(), SIGCONT), 0);
  std::this_thread::sleep_for(500ms);  // it drains the ring
  const auto exit_code = child->stop(10s);
  EXPECT_EQ(exit_code, 0) << child->output();
  const std::string output = child->output();
  const auto at = output.find("kernel_dropped=");
  ASSERT_NE(at, std::string::npos) << output;
  const std::uint64_t dropped = std::strtoull(output.c_str() + at + 15, nullptr, 10);

  auto reader = captures::capture_file_reader::open(file.path);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::uint64_t ours = 0;
  captures::packet_view packet;
  while (reader->next(packet))
    if (lab_sequence(packet.bytes) >= 0) ++ours;
  EXPECT_GT(dropped, 0u) << "the ring overflowed: " << ours << " of " << frames << " captured\n" << output;
  EXPECT_LE(ours, ring_frames + 64) << "a stopped capture cannot hold more than its ring";
  EXPECT_EQ(ours + dropped, frames) << "every frame is in the file or counted as dropped\n" << output;
  std::cout << "ring overflow: " << ours << " captured + " << dropped << " kernel_dropped of " << frames << " sent\n";
}

// In-process: what open() reports, what poll() delivers, and the once-per-process EAL.
TEST(lab_dpdk_capture, source_reports_port_delivers_frames_and_refuses_a_second_eal) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth)";
  auto ns = test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();
  const std::string tag = std::to_string(::getpid()) + "in";
  const scoped_dir runtime_dir{"/var/run/dpdk/rl" + tag};
  captures::dpdk_source_options options;
  options.eal_args = "-l 0 --no-huge --no-pci -m 256 --no-shconf --no-telemetry --file-prefix=rl" +
                     tag + " --vdev=net_af_packet0,iface=" + std::string(test_netns::veth_b);
  // rte_eal_init probes the vdev on the calling thread, so its socket joins the namespace.
  auto source = ns->run_inside([&] { return captures::dpdk_source::open(options); });
  ASSERT_TRUE(source.ok()) << source.error().message();
  auto& src = **source;

  const auto interfaces = src.interfaces();
  ASSERT_EQ(interfaces.size(), 1u);
  EXPECT_EQ(interfaces[0].name, "net_af_packet0");
  EXPECT_EQ(src.ports(), std::vector<std::uint16_t>{0});
  // af_packet has no RX timestamp offload.
  EXPECT_EQ(src.timestamps(), captures::timestamp_source::software);

  auto sender = raw_sender::open(*ns, test_netns::veth_a);
  ASSERT_TRUE(sender.ok()) << sender.error().message();
  constexpr std::uint32_t frames = 16;
  for (std::uint32_t seq = 0; seq < frames; ++seq)
    ASSERT_TRUE(sender->send(lab_frame(seq)).ok());

  std::vector<std::int64_t> seqs;
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  for (int i = 0; i < 50 && seqs.size() < frames; ++i) {
    auto polled = src.poll(std::chrono::milliseconds(100), [&](const captures::packet_view& p) {
      EXPECT_EQ(p.interface_id, 0u);
      EXPECT_EQ(p.original_length, p.bytes.size());
      EXPECT_LT(std::abs(p.timestamp_ns - now_ns), 10'000'000'000) << "not epoch time";
      seqs.push_back(lab_sequence(p.bytes));
    });
    ASSERT_TRUE(polled.ok()) << polled.error().message();
  }
  ASSERT_EQ(seqs.size(), frames);
  for (std::uint32_t seq = 0; seq < frames; ++seq) EXPECT_EQ(seqs[seq], seq);
  const auto stats = src.stats();
  EXPECT_EQ(stats.received, frames);
  EXPECT_EQ(stats.imissed, 0u);
  EXPECT_EQ(stats.rx_nombuf, 0u);

  // The port is taken, and DPDK cannot start a second EAL with other arguments.
  auto same = captures::dpdk_source::open(options);
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.error().message().find("already used"), std::string::npos)
      << same.error().message();
  auto other_options = options;
  other_options.eal_args += " --log-level=7";
  auto other = captures::dpdk_source::open(other_options);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code(), error_code::invalid_argument);
  EXPECT_NE(other.error().message().find("different arguments"), std::string::npos)
      << other.error().message();
}

}  // namespace
}  // namespace rocelab::test
