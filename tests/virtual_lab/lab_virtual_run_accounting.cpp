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
#include <map>
#include <sstream>
#include <string>
#include <vector>

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
  // `rocelab run SPEC ARGS --out OUT --db <dir_>/rocelab.db` from dir_ (it uses lab 'run');
  // the test fails with its output when it exits non-zero.
  void cli_run(const std::string& spec_and_args, const fs::path& out) {
    const std::string cmd = "cd " + dir_.string() + " && " + std::string(ROCELAB_BINARY_DIR) + "/rocelab run " +
                            std::string(ROCELAB_SOURCE_DIR) + "/" + spec_and_args + " --out " + out.string() +
                            " --db " + (dir_ / "rocelab.db").string() + " > " + (dir_ / "run.txt").string() +
                            " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream log(dir_ / "run.txt");
    std::stringstream text;
    text << log.rdbuf();
    ASSERT_EQ(rc, 0) << text.str();
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
    // A short incast into a small buffer, so PFC pauses the senders: 8 x 512 KiB into 2 MiB,
    // the lossless PGs at alpha 1/128 (a few frames each). At alpha 1 the PGs' share is a
    // MiB, and a slow host that holds the eight NICs near the port's rate queued ~300 KB
    // and never paused.
    for (const char* o : {"switch.buffer_bytes=2MiB", "switch.dynamic_th=-7", "workload.incast.flow_bytes=512KiB",
                          "workload.incast.rounds=1"})
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
  ASSERT_NO_FATAL_FAILURE(cli_run("examples/virtual-incast-8to1.yaml", out));
  const fs::path capture = out / "capture.pcapng";
  ASSERT_TRUE(fs::exists(capture)) << "no capture.pcapng in " << out;
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

// The second round of an incast, posted by the first round's completions, is armed for one
// instant 2 ms ahead, and its senders must have their posts before it. Through `rocelab
// run` the posts go from the fleet through the embedded controller's I/O thread and its
// in-process agents' thread to the NIC processes; with 13 NICs on one CPU at SCHED_FIFO
// 40 and the switch busy on the other, those normal threads got only the kernel's
// RT-throttling remainder: the eight posts, written within 0.1 ms, were read 9 to 186 ms
// later, one sender after another, in every repeat, and the round never congested the
// port. The relay threads now run above the NICs (soft_nic::lab_relay_rt_priority). How
// quiet the host is still shows (one repeat in six split 3 + 5 senders 131 ms apart beside
// a build), so the median repeat is held, as the first round's skew is (lab_soft_nic_run).
TEST_F(VirtualRunAccounting, CliRunsAnIncastsNextRoundTogetherBesideBackgroundAndVictims) {
  name_ = "run";
  ASSERT_TRUE(agents::lab::lab_inspect("run").namespaces.empty()) << "lab 'run' is up already";
  const fs::path out = dir_ / "r";
  ASSERT_NO_FATAL_FAILURE(cli_run("examples/tune-virtual-incast.yaml --set backend=virtual --set repeats=5", out));
  // flows.csv: repeat,seed,src,dst,qp,priority,kind,bytes,start_ns,... ,tag (last)
  std::ifstream flows(out / "flows.csv");
  std::string line;
  ASSERT_TRUE(std::getline(flows, line));
  ASSERT_EQ(line.rfind("repeat,seed,src,dst,qp,priority,kind,bytes,start_ns,", 0), 0u) << line;
  std::map<std::pair<int, std::uint64_t>, std::pair<std::int64_t, std::int64_t>> rounds;  // (repeat, round)
  std::map<int, std::string> starts;
  while (std::getline(flows, line)) {
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string v; std::getline(fields, v, ',');) f.push_back(v);
    ASSERT_GE(f.size(), 17u) << line;
    if (f[6] != "incast") continue;
    const int repeat = std::stoi(f[0]);
    const std::int64_t start = std::stoll(f[8]);
    const std::uint64_t round = std::stoull(f.back()) >> 32;
    auto [it, fresh] = rounds.try_emplace({repeat, round}, start, start);
    it->second.first = std::min(it->second.first, start);
    it->second.second = std::max(it->second.second, start);
    starts[repeat] += " " + std::to_string(round) + ":h" + f[2] + "@" + std::to_string(start / 1000) + "us";
  }
  ASSERT_EQ(rounds.size(), 10u) << "two rounds in each of five repeats";
  int together = 0;
  std::string spans;
  for (const auto& [key, span] : rounds) {
    if (key.second == 0) continue;  // the opening round: lab_soft_nic_run's start-skew test
    spans += " " + std::to_string((span.second - span.first) / 1000) + "us";
    if (span.second - span.first <= 10'000'000) ++together;
  }
  std::cout << "second round's senders started within (repeats 0-4):" << spans << "\n";
  EXPECT_GE(together, 3) << "the second round started within 10 ms in " << together << " of 5 repeats:" << spans
                         << "\n" << starts[0] << "\n" << starts[1] << "\n" << starts[2] << "\n" << starts[3] << "\n"
                         << starts[4];
  EXPECT_TRUE(agents::lab::lab_inspect("run").namespaces.empty()) << "the CLI's lab is gone";
}

}  // namespace
}  // namespace rocelab::experiments
