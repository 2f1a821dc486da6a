// The built `rocelab` on hostile and edge-case inputs: a device
// given as a spec or CDF is refused (exit 2, not an abort from reading without end);
// `analyze --link-gbps` takes only finite, sane rates; analyze prints durations of
// epoch-stamped captures to the nanosecond.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rocelab/captures/frame_builder.hpp"

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;

struct ran {
  int exit_code;  // -1: killed by a signal
  std::string output;
};

class cli_inputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlr-cli-inputs-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ran rocelab(const std::string& args) {
    const fs::path log = dir_ / "log";
    const std::string cmd = "cd " + dir_.string() + " && " + std::string(ROCELAB_BINARY_DIR) + "/rocelab " + args +
                            " >" + log.string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // sh reports a child killed by signal N as exit status 128 + N.
    const int code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    return {code > 128 && code != 130 ? -1 : code, text};
  }

  fs::path dir_;
};

TEST_F(cli_inputs, a_device_as_spec_is_refused) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    const ran r = rocelab(std::string("run ") + device);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("character device"), std::string::npos) << r.output;
  }
}

TEST_F(cli_inputs, a_device_as_cdf_is_refused) {
  std::ofstream(dir_ / "spec.yaml") << "topology: {hosts: 4}\nworkload:\n  background: {cdf: /dev/zero}\n";
  const ran r = rocelab("run spec.yaml --db runs.db");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("spec.yaml:3: workload.background.cdf"), std::string::npos) << r.output;
}

// lab check on a config_db dump whose tables or entries have another JSON type: exit 2
// naming the file, table, key and the types, never an abort (nlohmann type_error.306).
TEST_F(cli_inputs, lab_check_refuses_a_config_db_entry_of_the_wrong_json_type) {
  fs::copy_file(fs::path(ROCELAB_SOURCE_DIR) / "examples" / "inventory-lab.yml", dir_ / "inventory.yml");
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"MIRROR_SESSION": {"everflow0": 5}})", "MIRROR_SESSION|everflow0: expected an object of fields, found a number"},
      {R"({"PORT_QOS_MAP": {"Ethernet0": "3,4"}})", "PORT_QOS_MAP|Ethernet0: expected an object of fields, found a string"},
      {R"({"WRED_PROFILE": {"AZURE_LOSSLESS": [1]}, "QUEUE": {"Ethernet0|3": {"wred_profile": "AZURE_LOSSLESS"}}})",
       "WRED_PROFILE|AZURE_LOSSLESS: expected an object of fields, found an array"},
      {R"({"WRED_PROFILE": {"AZURE_LOSSLESS": null}})", "WRED_PROFILE|AZURE_LOSSLESS: expected an object of fields, found a null"},
      {R"({"MIRROR_SESSION": 1})", "table MIRROR_SESSION: expected an object of keys, found a number"},
  };
  for (const auto& [db, names] : cases) {
    std::ofstream(dir_ / "config_db.json") << db;
    const ran r = rocelab("lab check --inventory inventory.yml --config-db config_db.json");
    EXPECT_EQ(r.exit_code, 2) << db << "\n" << r.output;
    EXPECT_NE(r.output.find("config_db.json"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(names), std::string::npos) << r.output;
  }
  // A host facts file of the wrong shape names its field.
  fs::create_directories(dir_ / "facts");
  std::ofstream(dir_ / "facts" / "gpu01.json") << R"({"host": "gpu01", "device": "enp65s0f0", "driver": "mlx5", "netdev_mtu": "9000"})";
  const ran r = rocelab("lab check --inventory inventory.yml --host-facts facts");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("gpu01.json: field netdev_mtu: expected a whole number"), std::string::npos) << r.output;
}

// A classic pcap (nanosecond magic) of Ethernet frames.
void write_pcap(const fs::path& path, const std::vector<std::pair<std::int64_t, std::vector<std::uint8_t>>>& frames) {
  std::ofstream out(path, std::ios::binary);
  const auto u32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  const auto u16 = [&](std::uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
  u32(0xa1b23c4d);
  u16(2);
  u16(4);
  u32(0);
  u32(0);
  u32(65535);
  u32(1);
  for (const auto& [t_ns, bytes] : frames) {
    u32(static_cast<std::uint32_t>(t_ns / 1'000'000'000));
    u32(static_cast<std::uint32_t>(t_ns % 1'000'000'000));
    u32(static_cast<std::uint32_t>(bytes.size()));
    u32(static_cast<std::uint32_t>(bytes.size()));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

std::vector<std::uint8_t> pfc(std::uint16_t quanta) {
  captures::pfc_frame_spec s;
  s.src_mac = {2, 0, 0, 0, 0, 0xaa};
  s.class_enable = 1u << 3;
  s.quanta[3] = quanta;
  std::vector<std::uint8_t> out;
  captures::append_pfc_frame(s, out);
  return out;
}

std::vector<std::uint8_t> roce(std::uint32_t psn) {
  static const std::vector<std::uint8_t> payload(256, 0xab);
  captures::roce_frame_spec s;
  s.eth.src_mac = {2, 0, 0, 0, 0, 1};
  s.eth.dst_mac = {2, 0, 0, 0, 0, 2};
  s.ip.src = captures::ipv4_mapped(198, 18, 0, 1);
  s.ip.dst = captures::ipv4_mapped(198, 18, 0, 2);
  s.opcode = captures::wire::roce_opcode::rc_rdma_write_only;
  s.dest_qp = 0x45;
  s.psn = psn;
  s.payload = payload;
  std::vector<std::uint8_t> out;
  captures::append_roce_frame(s, out);
  return out;
}

TEST_F(cli_inputs, analyze_prints_epoch_scale_durations_to_the_nanosecond) {
  constexpr std::int64_t t0 = 1'704'067'203'000'000'000;  // 2024-01-01, as a capture stamps it
  write_pcap(dir_ / "epoch.pcap", {{t0, pfc(0xffff)},
                                   {t0 + 1311, pfc(0)},                // XON: 1.311 us paused
                                   {t0 + 10'000'000, pfc(0xffff)},     // expires 335,539 ns later at 100G
                                   {t0 + 20'000'000, roce(1)},
                                   {t0 + 20'335'539, roce(2)}});
  const ran r = rocelab("analyze epoch.pcap --flows");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1704067203000000000 .. 1704067203000001311 (1.311 us, 1 frames)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("1704067203010000000 .. 1704067203010335539 (335.539 us, 1 frames)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 packets, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", 335.539 us, CE"), std::string::npos) << r.output;
}

// Outputs are never written through a symlink planted in the output directory, and one
// that exists is replaced only with --force: run --out (flows.csv), report --out
// (report.html) and analyze --tables (flows.csv), each with the real binary.
TEST_F(cli_inputs, outputs_never_follow_planted_symlinks_and_replace_only_with_force) {
  const auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string spec = (fs::path(ROCELAB_SOURCE_DIR) / "examples" / "incast-16to1.yaml").string();
  write_pcap(dir_ / "c.pcap", {{1000, pfc(0xffff)}, {2000, pfc(0)}, {3000, roce(1)}});
  struct output_case {
    const char* name;
    std::string dir, file, command;
  };
  const std::vector<output_case> cases{
      {"run_out", "D", "flows.csv", "run " + spec + " --db runs.db --out D"},
      {"report_out", "R", "report.html", "report 1 --db runs.db --out R"},
      {"analyze_tables", "T", "flows.csv", "analyze c.pcap --tables T"},
  };
  ASSERT_EQ(rocelab("run " + spec + " --db runs.db --out first").exit_code, 0);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::ofstream(dir_ / "victim.txt") << "the victim\n";
    fs::create_directories(dir_ / c.dir);
    fs::create_symlink("../victim.txt", dir_ / c.dir / c.file);
    const ran refused = rocelab(c.command);
    EXPECT_NE(refused.exit_code, 0) << refused.output;
    EXPECT_NE(refused.output.find(c.dir + "/" + c.file + " exists already; give --force to replace it"),
              std::string::npos)
        << refused.output;
    EXPECT_EQ(slurp(dir_ / "victim.txt"), "the victim\n");
    const ran forced = rocelab(c.command + " --force");
    EXPECT_EQ(forced.exit_code, 0) << forced.output;
    EXPECT_EQ(slurp(dir_ / "victim.txt"), "the victim\n") << "written through the symlink";
    EXPECT_FALSE(fs::is_symlink(dir_ / c.dir / c.file)) << "the symlink is replaced by the output";
    EXPECT_FALSE(slurp(dir_ / c.dir / c.file).empty());
    // A regular output already there: refused and kept without --force.
    std::ofstream(dir_ / c.dir / c.file) << "kept\n";
    const ran again = rocelab(c.command);
    EXPECT_NE(again.exit_code, 0) << again.output;
    EXPECT_EQ(slurp(dir_ / c.dir / c.file), "kept\n");
    for (const auto& entry : fs::directory_iterator(dir_ / c.dir))
      EXPECT_FALSE(entry.path().filename().string().starts_with(".")) << "temporary file left: " << entry.path();
  }
}

// A pause storm: the text and JSON are a summary (per port and priority, ten longest);
// every interval comes with --pauses, and --tables writes them all as CSV.
TEST_F(cli_inputs, analyze_summarises_a_pause_storm_and_lists_everything_on_request) {
  std::vector<std::pair<std::int64_t, std::vector<std::uint8_t>>> frames;
  for (std::int64_t i = 0; i < 30; ++i) {
    frames.push_back({1'000'000 * i, pfc(0xffff)});
    frames.push_back({1'000'000 * i + 1'000 + 10 * i, pfc(0)});  // interval i: 1,000 + 10 i ns
  }
  write_pcap(dir_ / "storm.pcap", frames);
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const ran summary = rocelab("analyze storm.pcap");
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_NE(summary.output.find("pauses      30 intervals on 1 ports"), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("(every interval: --pauses)"), std::string::npos) << summary.output;
  EXPECT_EQ(count(summary.output, " frames)\n"), 10u) << "the ten longest only:\n" << summary.output;
  EXPECT_NE(summary.output.find("(1.290 us, 1 frames)"), std::string::npos) << "the longest first\n" << summary.output;
  EXPECT_NE(summary.output.find("02:00:00:00:00:aa    3         30      30"), std::string::npos) << summary.output;

  const ran all = rocelab("analyze storm.pcap --pauses");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(count(all.output, " frames)\n"), 30u) << all.output;

  const ran json = rocelab("analyze storm.pcap --json");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(json.output.find("\"pauses\""), std::string::npos) << "no full list unless asked";
  EXPECT_NE(json.output.find("\"pause_summary\""), std::string::npos);
  EXPECT_NE(json.output.find("\"pause_intervals\": 30"), std::string::npos) << json.output;
  const ran json_all = rocelab("analyze storm.pcap --json --pauses");
  EXPECT_NE(json_all.output.find("\"pauses\""), std::string::npos);

  const ran tables = rocelab("analyze storm.pcap --tables tables");
  ASSERT_EQ(tables.exit_code, 0) << tables.output;
  std::ifstream csv(dir_ / "tables" / "pauses.csv");
  std::string line;
  std::size_t lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 31u) << "a header and every interval";
  EXPECT_TRUE(fs::exists(dir_ / "tables" / "flows.csv"));
  EXPECT_TRUE(fs::exists(dir_ / "tables" / "pause_summary.csv"));
}

TEST_F(cli_inputs, analyze_reads_a_pipe_as_it_reads_the_file) {
  std::vector<std::pair<std::int64_t, std::vector<std::uint8_t>>> frames;
  for (std::int64_t i = 0; i < 3000; ++i) {
    frames.push_back({1'000'000 * i, pfc(0xffff)});
    frames.push_back({1'000'000 * i + 700, pfc(0)});
  }
  write_pcap(dir_ / "storm.pcap", frames);
  const ran file = rocelab("analyze storm.pcap --pauses");
  ASSERT_EQ(file.exit_code, 0) << file.output;
  const std::string bin = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  const fs::path log = dir_ / "piped";
  ASSERT_EQ(std::system(("cd " + dir_.string() + " && cat storm.pcap | " + bin + " analyze - --pauses >" +
                         log.string() + " 2>&1").c_str()),
            0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, file.output);
}

TEST_F(cli_inputs, analyze_refuses_a_link_speed_that_is_not_a_sane_rate) {
  write_pcap(dir_ / "one.pcap", {{1'000, pfc(0xffff)}});
  for (const char* gbps : {"nan", "inf", "1e30", "1e-30", "0", "-100"}) {
    const ran r = rocelab(std::string("analyze one.pcap --link-gbps ") + gbps);
    EXPECT_NE(r.exit_code, 0) << gbps << ": " << r.output;
    EXPECT_NE(r.exit_code, -1) << gbps << ": " << r.output;
    EXPECT_NE(r.output.find("--link-gbps"), std::string::npos) << gbps << ": " << r.output;
  }
  const ran ok = rocelab("analyze one.pcap --link-gbps 400");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

}  // namespace
}  // namespace rocelab::cli
