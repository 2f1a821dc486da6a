#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <gtest/gtest.h>

#include "rocelab/fabric/drivers/process_runner.hpp"
#include "test_switch_driver_support.hpp"

namespace rocelab::fabric::drivers {
namespace {

using nlohmann::json;
using testing::temp_dir;
namespace fs = std::filesystem;

// The part of a SONiC switch's running config_db the driver touches and what it refers to
// (as `sonic-cfggen -d --print-data` prints it): two 100G ports, SONiC's default lossless
// WRED profile on queues 3 and 4, PFC on 3,4, a lossless PG profile, no mirror session.
const json running_config = json::parse(R"({
  "PORT": {
    "Ethernet0": {"lanes": "0,1,2,3", "speed": "100000", "mtu": "9100", "admin_status": "up"},
    "Ethernet4": {"lanes": "4,5,6,7", "speed": "100000", "mtu": "9100", "admin_status": "up"}
  },
  "BUFFER_POOL": {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": "33004032", "xoff": "196608"},
    "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": "33004032"}
  },
  "BUFFER_PROFILE": {
    "pg_lossless_100000_5m_profile": {"pool": "ingress_lossless_pool", "size": "1248", "xoff": "56160",
                                      "xon": "1248", "xon_offset": "2496", "dynamic_th": "0"}
  },
  "BUFFER_PG": {
    "Ethernet0|3": {"profile": "pg_lossless_100000_5m_profile"},
    "Ethernet4|3": {"profile": "pg_lossless_100000_5m_profile"}
  },
  "WRED_PROFILE": {
    "AZURE_LOSSLESS": {"ecn": "ecn_all", "wred_green_enable": "true", "wred_yellow_enable": "true",
                       "wred_red_enable": "true", "green_min_threshold": "250000", "green_max_threshold": "2097152",
                       "green_drop_probability": "5", "yellow_min_threshold": "1048576",
                       "yellow_max_threshold": "2097152", "yellow_drop_probability": "5",
                       "red_min_threshold": "1048576", "red_max_threshold": "2097152", "red_drop_probability": "5"}
  },
  "QUEUE": {
    "Ethernet0|3": {"wred_profile": "AZURE_LOSSLESS"},
    "Ethernet0|4": {"wred_profile": "AZURE_LOSSLESS"},
    "Ethernet4|3": {"wred_profile": "AZURE_LOSSLESS"}
  },
  "PORT_QOS_MAP": {
    "Ethernet0": {"pfc_enable": "3,4"},
    "Ethernet4": {"pfc_enable": "3,4"}
  }
})");

// COUNTERS_DB as sonic-db-cli HGETALL prints it (Python dicts).
const json counters_db = json::parse(R"({
  "COUNTERS_PORT_NAME_MAP": {"Ethernet0": "oid:0x1000000000002", "Ethernet4": "oid:0x1000000000003"},
  "COUNTERS_QUEUE_NAME_MAP": {"Ethernet0:3": "oid:0x15000000000230"},
  "COUNTERS_PG_NAME_MAP": {"Ethernet0:3": "oid:0x1a000000000063"},
  "COUNTERS:oid:0x1000000000002": {"SAI_PORT_STAT_IF_IN_UCAST_PKTS": "1000", "SAI_PORT_STAT_IF_OUT_OCTETS": "4096000",
                                   "SAI_PORT_STAT_PFC_3_RX_PKTS": "12", "SAI_PORT_STAT_PFC_3_TX_PKTS": "34",
                                   "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "560",
                                   "SAI_PORT_STAT_IF_IN_ERRORS": "0"},
  "COUNTERS:oid:0x1000000000003": {"SAI_PORT_STAT_IF_IN_UCAST_PKTS": "2000"},
  "COUNTERS:oid:0x15000000000230": {"SAI_QUEUE_STAT_PACKETS": "900", "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": "77",
                                    "SAI_QUEUE_STAT_DROPPED_PACKETS": "0"},
  "USER_WATERMARKS:oid:0x15000000000230": {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "180224"},
  "COUNTERS:oid:0x1a000000000063": {"SAI_INGRESS_PRIORITY_GROUP_STAT_PACKETS": "950",
                                   "SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS": "0"},
  "USER_WATERMARKS:oid:0x1a000000000063": {"SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES": "20480",
                                          "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES": "65536"}
})");

// A test double for the remote switch, since no SONiC switch exists here: an `ssh` program
// first on PATH that records its argv (one JSON array per line in calls.jsonl) and serves
// the three commands the driver runs from state files -- config_db.json (to which it
// applies the JSON Patches it receives, so a later read sees them) and counters.json.
// It pins the exact commands; the YANG test below checks what they carry.
constexpr const char* fake_ssh = R"(#!/usr/bin/python3
import json, os, sys
d = os.environ["FAKE_SSH_DIR"]
with open(os.path.join(d, "calls.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
args = sys.argv[1:]
if "--" not in args:
    sys.stderr.write("fake ssh: no -- before the destination\n"); sys.exit(255)
cmd = args[args.index("--") + 2:]
def pointer(p):
    return [s.replace("~1", "/").replace("~0", "~") for s in p.split("/")[1:]]
if cmd == ["sudo", "sonic-cfggen", "-d", "--print-data"]:
    sys.stdout.write(open(os.path.join(d, "config_db.json")).read())
elif cmd == ["sudo", "config", "apply-patch", "/dev/stdin"]:
    patch = json.loads(sys.stdin.read())
    n = len([x for x in os.listdir(d) if x.startswith("patch-")])
    json.dump(patch, open(os.path.join(d, "patch-%d.json" % n), "w"), indent=1)
    if os.path.exists(os.path.join(d, "fail_apply")):
        sys.stderr.write("Error: Given patch will produce invalid config\n"); sys.exit(1)
    db = json.load(open(os.path.join(d, "config_db.json")))
    for op in patch:
        parts = pointer(op["path"]); parent = db
        for p in parts[:-1]: parent = parent[p]
        if op["op"] == "add": parent[parts[-1]] = op["value"]
        elif op["op"] == "remove": del parent[parts[-1]]
        else: sys.stderr.write("fake ssh: op " + op["op"] + "\n"); sys.exit(1)
    json.dump(db, open(os.path.join(d, "config_db.json"), "w"), indent=1, sort_keys=True)
    print("Patch applied successfully.")
elif len(cmd) == 4 and cmd[:3] == ["sonic-db-cli", "COUNTERS_DB", "HGETALL"]:
    print(repr(json.load(open(os.path.join(d, "counters.json"))).get(cmd[3], {})))
else:
    sys.stderr.write("fake ssh: unexpected command %r\n" % (cmd,)); sys.exit(255)
)";

class fake_switch {
 public:
  fake_switch() {
    const fs::path bin = dir_.path() / "bin";
    fs::create_directories(bin);
    std::ofstream(bin / "ssh") << fake_ssh;
    fs::permissions(bin / "ssh", fs::perms::owner_all);
    std::ofstream(dir_.path() / "config_db.json") << running_config.dump(1);
    std::ofstream(dir_.path() / "counters.json") << counters_db.dump(1);
    old_path_ = ::getenv("PATH") != nullptr ? ::getenv("PATH") : "";
    ::setenv("PATH", (bin.string() + ":" + old_path_).c_str(), 1);
    ::setenv("FAKE_SSH_DIR", dir_.path().c_str(), 1);
  }
  ~fake_switch() {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("FAKE_SSH_DIR");
  }
  [[nodiscard]] json config_db() const { return json::parse(testing::slurp(dir_.path() / "config_db.json")); }
  [[nodiscard]] std::vector<std::vector<std::string>> calls() const {
    std::vector<std::vector<std::string>> out;
    std::ifstream in(dir_.path() / "calls.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line).get<std::vector<std::string>>());
    return out;
  }
  [[nodiscard]] json patch(int n) const {
    return json::parse(testing::slurp(dir_.path() / ("patch-" + std::to_string(n) + ".json")));
  }
  void fail_apply(bool on) {
    if (on) std::ofstream(dir_.path() / "fail_apply") << "1";
    else fs::remove(dir_.path() / "fail_apply");
  }

 private:
  temp_dir dir_;
  std::string old_path_;
};

sonic_options options() {
  sonic_options o;
  o.host = "admin@sw1";
  o.ssh_options = {"-i", "/etc/rocelab/switch_key"};
  o.ports = {"Ethernet0"};
  o.timeout = std::chrono::seconds(30);
  return o;
}

switch_settings incast_settings() {
  switch_settings s;
  s.ecn = {{"Ethernet0", 3, true, 20480, 204800, 0.05}, {"Ethernet4", 3, true, 20480, 204800, 0.05}};
  s.pfc = {{"Ethernet0", {3}}, {"Ethernet4", {3}}};
  s.buffers = {{"Ethernet0", 3, 1248, 65536, 1248, 2496, -2}};
  mirror_setting m;
  m.name = "rocelab";
  m.source_ports = {"Ethernet0", "Ethernet4"};
  m.direction = mirror_direction::both;
  m.src_ip = "198.18.1.1";
  m.dst_ip = "198.18.1.2";
  s.mirror = m;
  return s;
}

// ---- the config_db JSON against SONiC's YANG models ----

class sonic_yang : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new temp_dir();
    models_ = new fs::path(testing::render_sonic_yang(*dir_));
  }
  static void TearDownTestSuite() {
    delete models_;
    delete dir_;
  }
  // The running config with the driver's entries merged in, as the switch would hold it.
  static int validate(const json& emitted, std::string& out) {
    json db = running_config;
    for (const auto& [table, keys] : emitted.items())
      for (const auto& [key, entry] : keys.items()) {
        if (entry.is_null()) continue;
        for (const auto& [field, value] : entry.items()) db[table][key][field] = value;
      }
    const fs::path data = dir_->path() / "data.xml";
    std::ofstream(data) << testing::to_yang_xml(db);
    return testing::yanglint(*models_, data, out);
  }
  static temp_dir* dir_;
  static fs::path* models_;
};
temp_dir* sonic_yang::dir_ = nullptr;
fs::path* sonic_yang::models_ = nullptr;

TEST_F(sonic_yang, the_emitted_config_db_validates_against_sonics_models) {
  auto db = to_config_db(incast_settings(), options());
  ASSERT_TRUE(db.ok()) << db.error().message();
  std::string out;
  EXPECT_EQ(validate(*db, out), 0) << out << "\n" << db->dump(2);
  // What it emitted, pinned: the WRED profile, its queue binding, PFC, the PG profile, ERSPAN.
  const json& w = (*db)["WRED_PROFILE"]["ROCELAB_Ethernet0_Q3"];
  EXPECT_EQ(w["green_min_threshold"], "20480");
  EXPECT_EQ(w["green_max_threshold"], "204800");
  EXPECT_EQ(w["green_drop_probability"], "5");
  EXPECT_EQ(w["ecn"], "ecn_all");
  EXPECT_EQ(w["wred_green_enable"], "true");
  EXPECT_EQ((*db)["QUEUE"]["Ethernet0|3"]["wred_profile"], "ROCELAB_Ethernet0_Q3");
  EXPECT_EQ((*db)["PORT_QOS_MAP"]["Ethernet4"]["pfc_enable"], "3");
  const json& b = (*db)["BUFFER_PROFILE"]["ROCELAB_PG_Ethernet0_3"];
  EXPECT_EQ(b["pool"], "ingress_lossless_pool");
  EXPECT_EQ(b["xoff"], "65536");
  EXPECT_EQ(b["dynamic_th"], "-2");
  EXPECT_EQ((*db)["BUFFER_PG"]["Ethernet0|3"]["profile"], "ROCELAB_PG_Ethernet0_3");
  const json& m = (*db)["MIRROR_SESSION"]["rocelab"];
  EXPECT_EQ(m["type"], "ERSPAN");
  EXPECT_EQ(m["gre_type"], "0x88be");
  EXPECT_EQ(m["src_port"], "Ethernet0,Ethernet4");
}

TEST_F(sonic_yang, a_span_session_and_ecn_off_validate_too) {
  switch_settings s;
  s.ecn = {{"Ethernet4", 4, false, 0, 0, 0.0}};
  mirror_setting m;
  m.name = "span1";
  m.source_ports = {"Ethernet0"};
  m.direction = mirror_direction::rx;
  m.destination_port = "Ethernet4";
  s.mirror = m;
  auto db = to_config_db(s, options());
  ASSERT_TRUE(db.ok()) << db.error().message();
  std::string out;
  EXPECT_EQ(validate(*db, out), 0) << out << "\n" << db->dump(2);
  EXPECT_EQ((*db)["MIRROR_SESSION"]["span1"]["type"], "SPAN");
  EXPECT_EQ((*db)["MIRROR_SESSION"]["span1"]["direction"], "RX");
  EXPECT_EQ((*db)["WRED_PROFILE"]["ROCELAB_Ethernet4_Q4"]["ecn"], "ecn_none");
}

// The models do reject what SONiC would: the validation is not a formality.
TEST_F(sonic_yang, the_models_reject_what_sonic_rejects) {
  auto db = to_config_db(incast_settings(), options());
  ASSERT_TRUE(db.ok());
  struct case_t {
    const char* what;
    std::function<void(json&)> damage;
    const char* in_output;
  };
  const case_t cases[] = {
      {"a priority beyond 7", [](json& d) { d["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,9"; }, "pfc_enable"},
      {"a probability beyond 100", [](json& d) { d["WRED_PROFILE"]["ROCELAB_Ethernet0_Q3"]["green_drop_probability"] = "150"; },
       "green_drop_probability"},
      {"Kmax below Kmin", [](json& d) { d["WRED_PROFILE"]["ROCELAB_Ethernet0_Q3"]["green_max_threshold"] = "100"; },
       "threshold"},
      {"a queue on a port that does not exist", [](json& d) { d["QUEUE"]["Ethernet99|3"] = {{"wred_profile", "ROCELAB_Ethernet0_Q3"}}; },
       "Ethernet99"},
      {"a profile in a pool that does not exist", [](json& d) { d["BUFFER_PROFILE"]["ROCELAB_PG_Ethernet0_3"]["pool"] = "nopool"; },
       "nopool"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    json damaged = *db;
    c.damage(damaged);
    std::string out;
    EXPECT_NE(validate(damaged, out), 0);
    EXPECT_NE(out.find(c.in_output), std::string::npos) << out;
  }
}

// ---- over SSH, against the fake switch ----

TEST(sonic_switch_driver, apply_runs_exactly_these_commands_and_patches_the_running_config) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto st = (*d)->apply(incast_settings());
  ASSERT_TRUE(st.ok()) << st.message();
  const auto calls = sw.calls();
  ASSERT_EQ(calls.size(), 2u);
  const std::vector<std::string> prefix{"-o", "BatchMode=yes", "-i", "/etc/rocelab/switch_key", "--", "admin@sw1"};
  auto with = [&](std::vector<std::string> cmd) {
    std::vector<std::string> v = prefix;
    v.insert(v.end(), cmd.begin(), cmd.end());
    return v;
  };
  EXPECT_EQ(calls[0], with({"sudo", "sonic-cfggen", "-d", "--print-data"}));
  EXPECT_EQ(calls[1], with({"sudo", "config", "apply-patch", "/dev/stdin"}));

  const json patch = sw.patch(0);
  // Existing keys are changed field by field; new keys and the new table are added whole.
  EXPECT_NE(std::find(patch.begin(), patch.end(),
                      json{{"op", "add"}, {"path", "/QUEUE/Ethernet0|3/wred_profile"}, {"value", "ROCELAB_Ethernet0_Q3"}}),
            patch.end())
      << patch.dump(1);
  EXPECT_NE(std::find(patch.begin(), patch.end(),
                      json{{"op", "add"}, {"path", "/PORT_QOS_MAP/Ethernet0/pfc_enable"}, {"value", "3"}}),
            patch.end());
  bool mirror_table_added = false;
  for (const auto& op : patch)
    if (op["path"] == "/MIRROR_SESSION") mirror_table_added = op["value"].contains("rocelab");
  EXPECT_TRUE(mirror_table_added) << patch.dump(1);
  // Profiles come before the entries that refer to them.
  std::size_t first_queue = patch.size(), last_wred = 0;
  for (std::size_t i = 0; i < patch.size(); ++i) {
    const std::string p = patch[i]["path"];
    if (p.starts_with("/QUEUE")) first_queue = std::min(first_queue, i);
    if (p.starts_with("/WRED_PROFILE")) last_wred = i;
  }
  EXPECT_LT(last_wred, first_queue);

  const json db = sw.config_db();
  EXPECT_EQ(db["QUEUE"]["Ethernet0|3"]["wred_profile"], "ROCELAB_Ethernet0_Q3");
  EXPECT_EQ(db["QUEUE"]["Ethernet0|4"]["wred_profile"], "AZURE_LOSSLESS") << "queue 4 was not asked for";
  EXPECT_EQ(db["BUFFER_PG"]["Ethernet0|3"]["profile"], "ROCELAB_PG_Ethernet0_3");
  EXPECT_EQ(db["MIRROR_SESSION"]["rocelab"]["dst_ip"], "198.18.1.2");

  auto read = (*d)->read_settings({"Ethernet0"});
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_FALSE(read->ecn.empty());
  EXPECT_EQ(read->ecn[0], (ecn_setting{"Ethernet0", 3, true, 20480, 204800, 0.05}));
  EXPECT_EQ(read->pfc[0].priorities, std::vector<std::uint8_t>{3});
  EXPECT_EQ(read->buffers[0], incast_settings().buffers[0]);
  ASSERT_TRUE(read->mirror.has_value());
  EXPECT_EQ(read->mirror->dst_ip, "198.18.1.2");
}

TEST(sonic_switch_driver, restore_puts_back_exactly_the_previous_config_db) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->apply(incast_settings()).ok());
  // A second apply changes some keys again: restore still goes back to before the first.
  switch_settings again;
  again.ecn = {{"Ethernet0", 3, true, 40960, 409600, 0.2}};
  ASSERT_TRUE((*d)->apply(again).ok());
  EXPECT_NE(sw.config_db(), running_config);
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(sw.config_db(), running_config) << sw.config_db().dump(1);
  EXPECT_FALSE((*d)->has_snapshot());
  EXPECT_TRUE((*d)->restore().ok()) << "nothing to restore is not an error";
}

TEST(sonic_switch_driver, a_rejected_patch_is_an_error_with_the_switchs_words_and_restore_still_works) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  sw.fail_apply(true);
  auto st = (*d)->apply(incast_settings());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("admin@sw1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Given patch will produce invalid config"), std::string::npos) << st.message();
  EXPECT_TRUE((*d)->has_snapshot());
  sw.fail_apply(false);
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(sw.config_db(), running_config);
}

TEST(sonic_switch_driver, counters_map_sai_names_onto_the_common_vocabulary) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto counters = (*d)->read_counters();
  ASSERT_TRUE(counters.ok()) << counters.error().message();
  auto find = [&](const std::string& scope, int index, const std::string& name) -> std::optional<std::uint64_t> {
    for (const auto& c : *counters)
      if (c.port == "Ethernet0" && c.scope == scope && c.index == index && c.name == name) return c.value;
    return std::nullopt;
  };
  EXPECT_EQ(find("port", -1, "rx_packets"), 1000u);
  EXPECT_EQ(find("port", -1, "tx_bytes"), 4096000u);
  EXPECT_EQ(find("port", -1, "SAI_PORT_STAT_IF_IN_ERRORS"), 0u) << "unmapped names pass through";
  EXPECT_EQ(find("pg", 3, "pfc_rx_frames"), 12u);
  EXPECT_EQ(find("pg", 3, "pfc_tx_frames"), 34u);
  EXPECT_EQ(find("pg", 3, "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US"), 560u);
  EXPECT_EQ(find("queue", 3, "tx_packets"), 900u);
  EXPECT_EQ(find("queue", 3, "ecn_marked_packets"), 77u);
  EXPECT_EQ(find("queue", 3, "watermark_bytes"), 180224u);
  EXPECT_EQ(find("pg", 3, "headroom_watermark_bytes"), 20480u);
  EXPECT_EQ(find("pg", 3, "shared_watermark_bytes"), 65536u);
  for (const auto& c : *counters) EXPECT_EQ(c.port, "Ethernet0") << "only the configured ports";
  // As the run's records: port Ethernet0 is the run's port 5 of device 2.
  const auto samples = to_counter_samples(
      *counters, 2,
      [](const std::string& p) -> std::optional<std::uint32_t> {
        if (p == "Ethernet0") return 5u;
        return std::nullopt;
      },
      777);
  ASSERT_EQ(samples.size(), counters->size());
  bool seen_pfc = false;
  for (const auto& s : samples) {
    EXPECT_EQ(s.device, 2u);
    EXPECT_EQ(s.port, 5u);
    EXPECT_EQ(s.t_ns, 777);
    if (s.name == "pg3.pfc_rx_frames") seen_pfc = s.value == 12;
  }
  EXPECT_TRUE(seen_pfc);
  // 3 name maps, then the port, its queue and PG, and their watermarks.
  const auto calls = sw.calls();
  ASSERT_EQ(calls.size(), 8u);
  EXPECT_EQ(calls[3].back(), "COUNTERS:oid:0x1000000000002");
  EXPECT_EQ(calls[5].back(), "USER_WATERMARKS:oid:0x15000000000230");
}

TEST(sonic_switch_driver, names_that_are_not_plain_never_reach_ssh) {
  fake_switch sw;
  auto bad_port = options();
  bad_port.ports = {"Ethernet0;reboot"};
  EXPECT_EQ(sonic_switch_driver::open(bad_port).error().code(), error_code::invalid_argument);
  auto bad_host = options();
  bad_host.host = "-oProxyCommand=x";
  EXPECT_EQ(sonic_switch_driver::open(bad_host).error().code(), error_code::invalid_argument);
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  switch_settings s;
  s.pfc = {{"Ethernet0 Ethernet4", {3}}};
  EXPECT_EQ((*d)->apply(s).code(), error_code::invalid_argument);
  s.pfc = {};
  s.ecn = {{"Ethernet0", 3, true, 5000, 100, 0.1}};
  EXPECT_EQ((*d)->apply(s).code(), error_code::invalid_argument) << "Kmin > Kmax";
  EXPECT_TRUE(sw.calls().empty());
}

TEST(sonic_switch_driver, an_unreachable_switch_is_an_error_naming_it) {
  auto o = options();
  o.ssh_program = "/nonexistent/ssh";
  auto d = sonic_switch_driver::open(o);
  ASSERT_TRUE(d.ok());
  auto db = (*d)->read_config_db();
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message().find("admin@sw1"), std::string::npos) << db.error().message();
}

TEST(parse_python_dict, reads_what_sonic_db_cli_prints) {
  auto d = parse_python_dict("{'Ethernet0': 'oid:0x1000000000002', 'Ethernet4': 'oid:0x1000000000003'}\n");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size(), 2u);
  EXPECT_EQ(d->at("Ethernet4"), "oid:0x1000000000003");
  EXPECT_TRUE(parse_python_dict("{}\n")->empty());
  EXPECT_FALSE(parse_python_dict("Error: no such db\n").ok());
  EXPECT_FALSE(parse_python_dict("{'a': 'b', 'c'}").ok());
}

// ---- the process runner ssh goes through ----

TEST(process_runner, passes_argv_as_is_with_no_shell_in_between) {
  auto r = run_process({"printf", "%s|", "a b", "$HOME", ";reboot"}, "", std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "a b|$HOME|;reboot|");
}

TEST(process_runner, feeds_stdin_beyond_a_pipe_buffer_and_reads_everything_back) {
  const std::string input(3 << 20, 'x');
  auto r = run_process({"cat"}, input, std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->out.size(), input.size());
}

TEST(process_runner, a_child_that_ignores_its_stdin_does_not_take_us_down) {
  auto r = run_process({"true"}, std::string(3 << 20, 'x'), std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
}

TEST(process_runner, reports_exit_codes_stderr_missing_programs_and_deadlines) {
  auto failed = run_process({"ls", "/nonexistent-rocelab-path"}, "", std::chrono::seconds(10));
  ASSERT_TRUE(failed.ok());
  EXPECT_NE(failed->exit_code, 0);
  EXPECT_NE(failed->err.find("nonexistent-rocelab-path"), std::string::npos);
  auto missing = run_process({"/nonexistent/program"}, "", std::chrono::seconds(10));
  EXPECT_EQ(missing.error().code(), error_code::not_found);
  auto slow = run_process({"sleep", "30"}, "", std::chrono::milliseconds(200));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code(), error_code::cancelled);
  EXPECT_NE(slow.error().message().find("sleep 30"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::fabric::drivers
