// Lab test (root): a virtual run's numbers are its own and match its own capture.
// - Three consecutive runs on one kept lab (PFC only, then ECN twice): each run's summary
//   (pause frames, CE marks, CNPs) equals what its capture.pcapng shows, counted by the
//   captures library's analyzer, within the capture's reported loss; each kept capture
//   holds only RoCEv2 frames with a valid ICRC; the switch's queues were sampled.
// - `rocelab run examples/virtual-incast-8to1.yaml` leaves capture.pcapng in its run
//   directory, listed in summary.json, with a valid ICRC on every RoCEv2 frame, and a
//   queues.csv with samples.
// Cost on the 2-core CI VM: about 25 s for the three runs (one lab up and down), 15 s for
// the CLI run.
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/icrc.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

struct icrc_tally {
  std::uint64_t roce = 0, bad = 0, incomplete = 0;
  std::uint64_t arrival_copies = 0;  // the switch's arrival copies: headers only, by design
};

// Every RoCEv2 frame of the file through the captures library's ICRC check, but for the
// switch's arrival copies (ERSPAN III ingress copies on the arrivals session, cut to
// their headers), which are counted apart.
icrc_tally check_icrc(const std::string& file) {
  icrc_tally t;
  auto reader = captures::capture_file_reader::open(file);
  if (!reader) {
    ADD_FAILURE() << file << ": " << reader.error().message();
    return t;
  }
  captures::packet_view p;
  while (reader->next(p)) {
    captures::dissected_frame d;
    captures::dissect(captures::link_type::ethernet, p.bytes, d);
    if (!d.is_roce) continue;
    if (d.erspan_type == 3 && !d.erspan_egress && d.erspan_session == captures::arrivals_session) {
      ++t.arrival_copies;
      continue;
    }
    ++t.roce;
    const auto c = captures::verify_icrc(p.bytes.subspan(d.inner_offset), d.ip_offset - d.inner_offset);
    if (c == captures::icrc_check::mismatch) ++t.bad;
    if (c == captures::icrc_check::incomplete) ++t.incomplete;
  }
  EXPECT_TRUE(reader->error().ok()) << file << ": " << reader->error().message();
  return t;
}

std::uint64_t distance(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

class VirtualRunAccounting : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET, DPDK af_packet)";
    name_ = "rlva" + std::to_string(::getpid() % 10000);
    dir_ = fs::temp_directory_path() / ("rocelab-" + name_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!name_.empty()) {
      EXPECT_TRUE(agents::lab::lab_down(name_).ok());
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string name_;
  fs::path dir_;
};

TEST_F(VirtualRunAccounting, ThreeRunsOnAKeptLabEachMatchTheirOwnCapture) {
  struct step {
    const char* name;
    std::vector<const char*> sets;
  } steps[] = {
      {"PFC only", {"switch.ecn.enabled=false", "nic.dcqcn.enabled=false"}},
      {"ECN", {}},
      {"ECN again", {}},
  };
  std::vector<run_summary> summaries;
  for (std::size_t i = 0; i < std::size(steps); ++i) {
    auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
    ASSERT_TRUE(spec.ok()) << spec.error().message();
    // A short incast into a small buffer, so PFC pauses the senders: 8 x 512 KiB into 2 MiB.
    for (const char* o : {"switch.buffer_bytes=2MiB", "workload.incast.flow_bytes=512KiB", "workload.incast.rounds=1"})
      ASSERT_TRUE(apply_override(*spec, o).ok()) << o;
    for (const char* o : steps[i].sets) ASSERT_TRUE(apply_override(*spec, o).ok()) << o;
    virtual_backend_options o;
    o.lab_name = name_;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    o.keep_lab = true;  // the first run brings the lab up and keeps it; the others reuse it
    o.capture_file = (dir_ / ("run" + std::to_string(i) + ".pcapng")).string();
    o.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
    auto ran = run_experiment(*spec, {}, o);
    ASSERT_TRUE(ran.ok()) << steps[i].name << ": " << ran.error().message();
    const run_records& r = ran->repeats.at(0);
    const run_summary s = summarize({&r}, ran->seeds);
    ASSERT_TRUE(r.capture.has_value()) << steps[i].name;
    EXPECT_EQ(r.capture->file, o.capture_file) << "kept where asked";
    ASSERT_TRUE(fs::exists(o.capture_file)) << steps[i].name;

    auto a = captures::analyze_capture_file(o.capture_file, {.link_gbps = spec->topology.link_gbps});
    ASSERT_TRUE(a.ok()) << a.error().message();
    const auto& c = a->analysis;
    const std::uint64_t loss = r.capture->loss;
    EXPECT_EQ(r.capture->captured, c.frames) << steps[i].name;
    EXPECT_LE(distance(s.pause_frames, c.pfc.frames), loss)
        << steps[i].name << ": summary pause frames " << s.pause_frames << ", capture " << c.pfc.frames;
    EXPECT_LE(distance(s.ce_marked, c.roce.ecn.ce), loss)
        << steps[i].name << ": summary CE marks " << s.ce_marked << ", capture " << c.roce.ecn.ce;
    EXPECT_LE(distance(s.cnp, c.roce.cnp), loss)
        << steps[i].name << ": summary CNPs " << s.cnp << ", capture " << c.roce.cnp;
    const icrc_tally t = check_icrc(o.capture_file);
    EXPECT_GT(t.roce, 0u);
    EXPECT_EQ(t.bad, 0u) << steps[i].name << ": RoCEv2 frames with a wrong ICRC in the capture";
    EXPECT_EQ(t.incomplete, 0u) << steps[i].name << ": RoCEv2 frames cut short in the capture";
    std::uint64_t arrivals_mirrored = 0;
    for (const auto& k : r.counters)
      if (k.device < r.devices.size() && r.devices[k.device] == "sw" && k.name == "mirror_arrival_frames")
        arrivals_mirrored += k.value;
    EXPECT_EQ(t.arrival_copies, arrivals_mirrored) << steps[i].name;
    EXPECT_GE(t.arrival_copies, r.flows.size()) << steps[i].name << ": an arrival copy of every message";
    EXPECT_FALSE(r.queues.empty()) << steps[i].name << ": the switch's queue depths";
    std::uint64_t deepest = 0;
    for (const auto& q : r.queues) deepest = std::max(deepest, q.bytes);
    EXPECT_GT(deepest, 0u) << "an incast builds a queue";
    std::cerr << steps[i].name << ": pause frames " << s.pause_frames << " (capture " << c.pfc.frames
              << "), CE " << s.ce_marked << " (" << c.roce.ecn.ce << "), CNP " << s.cnp << " (" << c.roce.cnp
              << "); capture " << r.capture->captured << " of " << r.capture->mirrored << " mirrored, loss " << loss
              << "; " << t.roce << " RoCEv2 frames, ICRC valid; " << r.queues.size()
              << " queue samples, deepest " << deepest << " B; drops " << s.drops
              << (r.degraded.empty() ? "" : "; DEGRADED: " + r.degraded.front()) << "\n";
    summaries.push_back(s);
  }
  // What the runs were meant to show: the PFC-only run paused and the ECN runs marked;
  // on a reused switch the ECN runs do not inherit the PFC run's pauses (their own
  // captures above bound them), and the second ECN run's marks are not cumulative.
  EXPECT_GT(summaries[0].pause_frames, 0u) << "the PFC-only incast must pause";
  EXPECT_EQ(summaries[0].ce_marked, 0u) << "ECN off";
  EXPECT_GT(summaries[1].ce_marked, 0u);
  EXPECT_GT(summaries[2].ce_marked, 0u);
  EXPECT_TRUE(agents::lab::lab_inspect(name_).switch_alive) << "kept";
}

TEST_F(VirtualRunAccounting, CliRunKeepsItsCaptureWithValidIcrcAndSamplesQueues) {
  // `rocelab run` uses lab 'run'; this test owns it for its duration.
  name_ = "run";
  ASSERT_TRUE(agents::lab::lab_inspect("run").namespaces.empty()) << "lab 'run' is up already";
  const fs::path out = dir_ / "r";
  const std::string cmd = "cd " + dir_.string() + " && " + std::string(ROCELAB_BINARY_DIR) + "/rocelab run " +
                          std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml --out " +
                          out.string() + " --db " + (dir_ / "rocelab.db").string() + " > " +
                          (dir_ / "run.txt").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(dir_ / "run.txt");
  std::stringstream text;
  text << log.rdbuf();
  ASSERT_EQ(rc, 0) << text.str();
  const fs::path capture = out / "capture.pcapng";
  ASSERT_TRUE(fs::exists(capture)) << text.str();
  const icrc_tally t = check_icrc(capture.string());
  EXPECT_GT(t.roce, 1000u);
  EXPECT_EQ(t.bad, 0u) << "RoCEv2 frames with a wrong ICRC";
  EXPECT_EQ(t.incomplete, 0u) << "RoCEv2 frames cut short";
  EXPECT_GT(t.arrival_copies, 0u) << "the switch's arrival copies";
  std::ifstream summary_file(out / "summary.json");
  const auto summary = nlohmann::json::parse(summary_file, nullptr, false);
  ASSERT_FALSE(summary.is_discarded());
  EXPECT_EQ(summary.value("capture_file", std::string()), "capture.pcapng");
  ASSERT_TRUE(summary.contains("capture"));
  const std::uint64_t loss = summary["capture"].value("loss", std::uint64_t{1});
  EXPECT_EQ(summary["capture"].value("mirrored", std::uint64_t{0}),
            summary["capture"].value("frames", std::uint64_t{0}) + loss);
  std::ifstream queues(out / "queues.csv");
  std::string line;
  int lines = 0;
  while (std::getline(queues, line) && lines < 10) ++lines;
  EXPECT_GE(lines, 3) << "queues.csv: a header and samples";
  EXPECT_TRUE(agents::lab::lab_inspect("run").namespaces.empty()) << "the CLI's lab is gone";
  std::cerr << "rocelab run: " << t.roce << " RoCEv2 frames in capture.pcapng, ICRC valid; capture loss " << loss
            << "\n";
}

}  // namespace
}  // namespace rocelab::experiments
