#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <gtest/gtest.h>

#include <set>

#include "rocelab/fabric/drivers/process_runner.hpp"
#include "test_switch_driver_support.hpp"

namespace rocelab::fabric::drivers {
namespace {

using nlohmann::json;
using testing::temp_dir;
namespace fs = std::filesystem;

// The part of a SONiC switch's running config_db the driver touches and what it refers to
// (as `sonic-cfggen -d --print-data` prints it on a Mellanox SN2700 with SONiC's defaults):
// two 100G ports, SONiC's default lossless WRED profile on queues 3 and 4, PFC on 3,4,
// the lossless PG profile on the range key <port>|3-4 (buffers_config.j2), the DSCP map
// AZURE of qos_config.j2 (DSCP 26 -> TC 1: lossy), no mirror session.
json sonic_default_dscp_map() {
  json m = json::object();
  for (int d = 0; d < 64; ++d) m[std::to_string(d)] = "1";
  for (const auto& [d, tc] : std::map<int, const char*>{{3, "3"}, {4, "4"}, {5, "2"}, {8, "0"}, {46, "5"}, {48, "6"}})
    m[std::to_string(d)] = tc;
  return m;
}
const json running_config = [] {
  json j = json::parse(R"({
  "DEVICE_METADATA": {"localhost": {"hwsku": "Mellanox-SN2700", "hostname": "sw1"}},
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
    "Ethernet0|3-4": {"profile": "pg_lossless_100000_5m_profile"},
    "Ethernet4|3-4": {"profile": "pg_lossless_100000_5m_profile"}
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
    "Ethernet0": {"pfc_enable": "3,4", "dscp_to_tc_map": "AZURE"},
    "Ethernet4": {"pfc_enable": "3,4", "dscp_to_tc_map": "AZURE"}
  }
})");
  j["DSCP_TO_TC_MAP"]["AZURE"] = sonic_default_dscp_map();
  return j;
}();

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
// the commands the driver runs from state files -- config_db.json (to which it applies the
// JSON Patches and the sonic-db-cli CONFIG_DB writes it receives, so a later read sees
// them), counters.json, appl_db.json and sonic_version.yml (SONiC 202305 on a Mellanox
// switch unless a test says otherwise). Several commands may come in one session,
// separated by ";" or "&&" words; single-quoted words are unquoted, as the switch's shell
// would.
//
// apply-patch judges each operation as sonic-utilities' Generic Config Updater of the
// switch's release does, from the records in tests/data/sonic-gcu (the updater itself
// cannot run here: README.md there says why):
// * field_operation_validators.py rdma_config_update_validator with the release's
//   gcu_field_operation_validators.conf.json: the ASIC from asic_type and the HWSKU
//   (get_asic_name: Mellanox spc1..spc4 by exact name, Broadcom by substring), then every
//   field the op touches -- the path below the table with elements holding a digit
//   dropped, lowercased, plus each key of a dict value -- must be a scenario's field with
//   the op among its operations, a platform entry that is not "" (a missing one fails),
//   and a build at least that entry. A rejection prints the updater's message.
// * patch_sorter.py RequiredValueIdentifier (required_values.json): an op under a table it
//   ties to PORT|<port> admin_status, on a port that is admin up, makes the updater take
//   the port down and up around it; the fake records each such flap in flaps.jsonl.
constexpr const char* fake_ssh = R"(#!/usr/bin/python3
import json, os, re, sys
d = os.environ["FAKE_SSH_DIR"]
gcu = os.environ["FAKE_GCU_DATA"]
with open(os.path.join(d, "calls.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
args = sys.argv[1:]
if "--" not in args:
    sys.stderr.write("fake ssh: no -- before the destination\n"); sys.exit(255)
def unquote(w):
    return w[1:-1] if len(w) >= 2 and w[0] == "'" and w[-1] == "'" else w
cmd = [unquote(w) for w in args[args.index("--") + 2:]]
def pointer(p):
    return [s.replace("~1", "/").replace("~0", "~") for s in p.split("/")[1:]]
def version():
    v = {}
    for line in open(os.path.join(d, "sonic_version.yml")):
        k, _, val = line.partition(":")
        v[k.strip()] = val.strip().strip("'")
    return v
def asic_of(conf, v, hwsku):
    m = conf["helper_data"]["rdma_config_update_validator"]
    if v["asic_type"] == "cisco-8000": return "cisco-8000"
    if v["asic_type"] in ("mellanox", "vs"):
        for a in ("spc1", "spc2", "spc3", "spc4"):
            if hwsku.lower() in [h.lower() for h in m["mellanox_asics"].get(a, [])]: return a
    if v["asic_type"] in ("broadcom", "vs"):
        for a, hs in m["broadcom_asics"].items():
            if any(h.lower() in hwsku.lower() for h in hs): return a
    return "unknown"
def gcu_allows(op, db):
    v = version()
    release = v.get("release", "none")
    if release == "none":  # a build of a release branch is dated on it: 20230531.17 is 202305
        release = next((p[:6] for p in v["build_version"].split(".") if re.match(r"^\d{8}$", p)), "master")
    conf = json.load(open(os.path.join(gcu, release, "gcu_field_operation_validators.conf.json")))
    parts = pointer(op["path"])
    table = conf["tables"].get(parts[0])
    if table is None or "validator_data" not in table: return True
    asic = asic_of(conf, v, db.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku", ""))
    if asic == "unknown": return False
    branch = None
    for sub in v["build_version"].split("."):
        if re.match(r"^\d{8}$", sub): branch = sub
    scenarios = table["validator_data"]["rdma_config_update_validator"]
    cleaned = "/".join(e for e in parts[1:] if not any(c.isdigit() for c in e)).lower()
    if isinstance(op.get("value"), dict):
        fields = [cleaned + "/" + k if cleaned else k for k in op["value"]]
    else:
        fields = [cleaned]
    for field in fields:
        scenario = next((s for s in scenarios.values() if field in s["fields"]), None)
        if scenario is None or asic not in scenario["platforms"]: return False
        if scenario["platforms"][asic] == "" or op["op"] not in scenario["operations"]: return False
        if branch is not None and branch < scenario["platforms"][asic]: return False
    return True
def flaps(op, db):
    required = json.load(open(os.path.join(gcu, "required_values.json")))["settings"][0]
    parts = pointer(op["path"])
    out = []
    for table, key in required["requiring_patterns"]:
        if parts[0] != table: continue
        keys = [parts[1]] if len(parts) > 1 else list(op.get("value", {}).keys()) + list(db.get(table, {}).keys())
        for k in keys:
            port = k.split("|")[0]
            if db.get("PORT", {}).get(port, {}).get("admin_status", "down") == "up": out.append(port)
    return sorted(set(out))
def config_db_write(words, db):
    if len(words) < 4 or words[:2] != ["sonic-db-cli", "CONFIG_DB"]:
        sys.stderr.write("fake ssh: unexpected command %r\n" % (words,)); sys.exit(255)
    op, key = words[2], words[3]
    table, _, entry = key.partition("|")
    if op == "HSET" and len(words) == 6:
        db.setdefault(table, {}).setdefault(entry, {})[words[4]] = words[5]; print("1")
    elif op == "HDEL" and len(words) == 5:
        db.get(table, {}).get(entry, {}).pop(words[4], None); print("1")
        if table in db and entry in db[table] and not db[table][entry]: del db[table][entry]
    elif op == "DEL" and len(words) == 4:
        db.get(table, {}).pop(entry, None); print("1")
    else:
        sys.stderr.write("fake ssh: unexpected command %r\n" % (words,)); sys.exit(255)
    if table in db and not db[table]: del db[table]
if cmd == ["sudo", "sonic-cfggen", "-d", "--print-data"]:
    sys.stdout.write(open(os.path.join(d, "config_db.json")).read())
elif cmd == ["cat", "/etc/sonic/sonic_version.yml"]:
    sys.stdout.write(open(os.path.join(d, "sonic_version.yml")).read())
elif cmd == ["sudo", "config", "apply-patch", "/dev/stdin"]:
    patch = json.loads(sys.stdin.read())
    n = len([x for x in os.listdir(d) if x.startswith("patch-")])
    json.dump(patch, open(os.path.join(d, "patch-%d.json" % n), "w"), indent=1)
    if os.path.exists(os.path.join(d, "fail_apply")):
        sys.stderr.write("Error: Given patch will produce invalid config\n"); sys.exit(1)
    db = json.load(open(os.path.join(d, "config_db.json")))
    for op in patch:
        if not gcu_allows(op, db):
            table = pointer(op["path"])[0]
            sys.stderr.write("Error: Failed to apply patch on the following scopes:\n- localhost: Modification of " +
                             table + " table is illegal- validating function generic_config_updater."
                             "field_operation_validators.rdma_config_update_validator returned False\n")
            sys.exit(1)
    with open(os.path.join(d, "flaps.jsonl"), "a") as f:
        for op in patch:
            for port in flaps(op, db):
                f.write(json.dumps({"port": port, "path": op["path"]}) + "\n")
    for op in patch:
        parts = pointer(op["path"]); parent = db
        for p in parts[:-1]: parent = parent[p]
        if op["op"] == "add": parent[parts[-1]] = op["value"]
        elif op["op"] == "replace":
            if parts[-1] not in parent:
                sys.stderr.write("fake ssh: replace of a missing member " + op["path"] + "\n"); sys.exit(1)
            parent[parts[-1]] = op["value"]
        elif op["op"] == "remove": del parent[parts[-1]]
        else: sys.stderr.write("fake ssh: op " + op["op"] + "\n"); sys.exit(1)
    json.dump(db, open(os.path.join(d, "config_db.json"), "w"), indent=1, sort_keys=True)
    print("Patch applied successfully.")
elif cmd and cmd[0] == "sonic-db-cli" and len(cmd) > 1 and cmd[1] == "CONFIG_DB":
    db = json.load(open(os.path.join(d, "config_db.json")))
    words = []
    for w in cmd + ["&&"]:
        if w not in (";", "&&"):
            words.append(w); continue
        config_db_write(words, db)
        words = []
    json.dump(db, open(os.path.join(d, "config_db.json"), "w"), indent=1, sort_keys=True)
elif cmd and cmd[0] == "sonic-db-cli":
    dbs = {"COUNTERS_DB": "counters.json", "APPL_DB": "appl_db.json"}
    words = []
    for w in cmd + [";"]:
        if w != ";":
            words.append(w); continue
        if len(words) != 4 or words[0] != "sonic-db-cli" or words[1] not in dbs or words[2] != "HGETALL":
            sys.stderr.write("fake ssh: unexpected command %r\n" % (words,)); sys.exit(255)
        path = os.path.join(d, dbs[words[1]])
        db = json.load(open(path)) if os.path.exists(path) else {}
        print(repr(db.get(words[3], {})))
        words = []
else:
    sys.stderr.write("fake ssh: unexpected command %r\n" % (cmd,)); sys.exit(255)
)";

// SONiC 202305 as a Mellanox build's /etc/sonic/sonic_version.yml names it.
constexpr const char* sonic_202305_mellanox = "build_version: '20230531.17'\nasic_type: mellanox\nrelease: '202305'\n";

class fake_switch {
 public:
  fake_switch() {
    const fs::path bin = dir_.path() / "bin";
    fs::create_directories(bin);
    std::ofstream(bin / "ssh") << fake_ssh;
    fs::permissions(bin / "ssh", fs::perms::owner_all);
    std::ofstream(dir_.path() / "config_db.json") << running_config.dump(1);
    std::ofstream(dir_.path() / "counters.json") << counters_db.dump(1);
    std::ofstream(dir_.path() / "sonic_version.yml") << sonic_202305_mellanox;
    old_path_ = ::getenv("PATH") != nullptr ? ::getenv("PATH") : "";
    ::setenv("PATH", (bin.string() + ":" + old_path_).c_str(), 1);
    ::setenv("FAKE_SSH_DIR", dir_.path().c_str(), 1);
    ::setenv("FAKE_GCU_DATA", (fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-gcu").c_str(), 1);
  }
  ~fake_switch() {
    ::setenv("PATH", old_path_.c_str(), 1);
    ::unsetenv("FAKE_SSH_DIR");
    ::unsetenv("FAKE_GCU_DATA");
  }
  [[nodiscard]] json config_db() const { return json::parse(testing::slurp(dir_.path() / "config_db.json")); }
  [[nodiscard]] std::vector<std::vector<std::string>> calls() const {
    std::vector<std::vector<std::string>> out;
    std::ifstream in(dir_.path() / "calls.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line).get<std::vector<std::string>>());
    return out;
  }
  [[nodiscard]] int patches() const {
    int n = 0;
    while (fs::exists(dir_.path() / ("patch-" + std::to_string(n) + ".json"))) ++n;
    return n;
  }
  void set_config_db(const json& db) { std::ofstream(dir_.path() / "config_db.json") << db.dump(1); }
  void set_counters(const json& c) { std::ofstream(dir_.path() / "counters.json") << c.dump(1); }
  void set_appl_db(const json& a) { std::ofstream(dir_.path() / "appl_db.json") << a.dump(1); }
  void set_version(const std::string& yml) { std::ofstream(dir_.path() / "sonic_version.yml") << yml; }
  // The ports the config updater took admin down and up for the patches it applied.
  [[nodiscard]] std::vector<std::string> flapped_ports() const {
    std::vector<std::string> out;
    std::ifstream in(dir_.path() / "flaps.jsonl");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line)["port"].get<std::string>());
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
  s.dscp_maps = {{"Ethernet0", {{26, 3}, {48, 6}}}, {"Ethernet4", {{26, 3}, {48, 6}}}};
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
    return validate_db(db, out);
  }
  // A whole config_db (the fake switch's after an apply).
  static int validate_db(const json& db, std::string& out) {
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

std::string pointer_table(const json& path) {
  const std::string p = path.get<std::string>();
  const auto end = p.find('/', 1);
  return p.substr(1, end == std::string::npos ? std::string::npos : end - 1);
}

TEST(sonic_switch_driver, apply_runs_exactly_these_commands_and_patches_the_running_config) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto st = (*d)->apply(incast_settings());
  ASSERT_TRUE(st.ok()) << st.message();
  const auto calls = sw.calls();
  ASSERT_EQ(calls.size(), 4u);
  const std::vector<std::string> prefix{"-o", "BatchMode=yes", "-i", "/etc/rocelab/switch_key", "--", "admin@sw1"};
  auto with = [&](std::vector<std::string> cmd) {
    std::vector<std::string> v = prefix;
    v.insert(v.end(), cmd.begin(), cmd.end());
    return v;
  };
  EXPECT_EQ(calls[0], with({"sudo", "sonic-cfggen", "-d", "--print-data"}));
  EXPECT_EQ(calls[1], with({"cat", "/etc/sonic/sonic_version.yml"}));
  EXPECT_EQ(calls[2], with({"sudo", "config", "apply-patch", "/dev/stdin"}));
  // QUEUE and PORT_QOS_MAP field by field in place: the updater would flap the ports.
  EXPECT_EQ(calls[3], with({"sonic-db-cli", "CONFIG_DB", "HSET", "'PORT_QOS_MAP|Ethernet0'", "'pfc_enable'", "'3'",
                            "&&", "sonic-db-cli", "CONFIG_DB", "HSET", "'PORT_QOS_MAP|Ethernet4'", "'pfc_enable'", "'3'"}));
  EXPECT_EQ(sw.flapped_ports(), std::vector<std::string>{});

  const json patch = sw.patch(0);
  auto has = [&](const json& op) { return std::find(patch.begin(), patch.end(), op) != patch.end(); };
  // The switch's own lossless entries, field by field with "replace": the WRED profile's
  // green curve, the PG profile's xoff and dynamic_th, the DSCP map's entry for 26.
  EXPECT_TRUE(has({{"op", "replace"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold"}, {"value", "20480"}}))
      << patch.dump(1);
  EXPECT_TRUE(has({{"op", "replace"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/green_max_threshold"}, {"value", "204800"}}));
  for (const auto& op : patch)
    EXPECT_NE(op["path"], "/WRED_PROFILE/AZURE_LOSSLESS/green_drop_probability") << "5 is already there";
  EXPECT_TRUE(has({{"op", "replace"}, {"path", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff"}, {"value", "65536"}}));
  EXPECT_TRUE(has({{"op", "replace"}, {"path", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/dynamic_th"}, {"value", "-2"}}));
  EXPECT_TRUE(has({{"op", "replace"}, {"path", "/DSCP_TO_TC_MAP/AZURE/26"}, {"value", "3"}}));
  bool mirror_table_added = false;
  for (const auto& op : patch) {
    EXPECT_FALSE(apply_patch_flaps_ports(pointer_table(op["path"]))) << op.dump();
    if (op["path"] == "/MIRROR_SESSION") mirror_table_added = op["value"].contains("rocelab");
    EXPECT_FALSE(op["path"].get<std::string>().starts_with("/BUFFER_PG")) << "no BUFFER_PG key is written";
    EXPECT_EQ(op["path"].get<std::string>().find("ROCELAB"), std::string::npos) << "no profiles of our own";
  }
  EXPECT_TRUE(mirror_table_added) << patch.dump(1);

  const json db = sw.config_db();
  EXPECT_EQ(db["QUEUE"]["Ethernet0|3"]["wred_profile"], "AZURE_LOSSLESS");
  EXPECT_EQ(db["WRED_PROFILE"]["AZURE_LOSSLESS"]["yellow_min_threshold"], "1048576") << "yellow is not ours";
  EXPECT_EQ(db["BUFFER_PG"], running_config["BUFFER_PG"]);
  EXPECT_EQ(db["DSCP_TO_TC_MAP"]["AZURE"]["26"], "3");
  EXPECT_EQ(db["DSCP_TO_TC_MAP"]["AZURE"]["25"], "1") << "other DSCPs are left alone";
  EXPECT_EQ(db["MIRROR_SESSION"]["rocelab"]["dst_ip"], "198.18.1.2");

  auto read = (*d)->read_settings({"Ethernet0"});
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_FALSE(read->ecn.empty());
  EXPECT_EQ(read->ecn[0], (ecn_setting{"Ethernet0", 3, true, 20480, 204800, 0.05}));
  EXPECT_EQ(read->pfc[0].priorities, std::vector<std::uint8_t>{3});
  EXPECT_EQ(read->buffers[0], incast_settings().buffers[0]) << "PG 3 of the range key 3-4";
  ASSERT_TRUE(read->mirror.has_value());
  EXPECT_EQ(read->mirror->dst_ip, "198.18.1.2");
  ASSERT_EQ(read->dscp_maps.size(), 1u);
  EXPECT_EQ(read->dscp_maps[0].dscp_to_tc.size(), 64u);
  EXPECT_EQ(read->dscp_maps[0].dscp_to_tc.at(26), 3);
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
  // One session for the 3 name maps, one for the port, its queue and PG and their
  // watermarks; the next sample is one session (the maps are kept).
  auto calls = sw.calls();
  ASSERT_EQ(calls.size(), 2u);
  const std::vector<std::string> counters_session(calls[1].begin() + 6, calls[1].end());
  const std::vector<std::string> want{
      "sonic-db-cli", "COUNTERS_DB", "HGETALL", "COUNTERS:oid:0x1000000000002",          ";",
      "sonic-db-cli", "COUNTERS_DB", "HGETALL", "COUNTERS:oid:0x15000000000230",         ";",
      "sonic-db-cli", "COUNTERS_DB", "HGETALL", "USER_WATERMARKS:oid:0x15000000000230", ";",
      "sonic-db-cli", "COUNTERS_DB", "HGETALL", "COUNTERS:oid:0x1a000000000063",         ";",
      "sonic-db-cli", "COUNTERS_DB", "HGETALL", "USER_WATERMARKS:oid:0x1a000000000063"};
  EXPECT_EQ(counters_session, want);
  ASSERT_TRUE((*d)->read_counters().ok());
  EXPECT_EQ(sw.calls().size(), 3u) << "one SSH session per sample";
}

// The switch re-created its objects (a config reload): the kept name maps are re-read once.
TEST(sonic_switch_driver, counters_follow_object_ids_that_changed) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->read_counters().ok());
  json c = counters_db;
  c["COUNTERS_PORT_NAME_MAP"]["Ethernet0"] = "oid:0x1000000000009";
  c["COUNTERS:oid:0x1000000000009"] = c["COUNTERS:oid:0x1000000000002"];
  c.erase("COUNTERS:oid:0x1000000000002");
  sw.set_counters(c);
  auto again = (*d)->read_counters();
  ASSERT_TRUE(again.ok()) << again.error().message();
  bool rx = false;
  for (const auto& x : *again) rx = rx || (x.scope == "port" && x.name == "rx_packets" && x.value == 1000);
  EXPECT_TRUE(rx);
  EXPECT_EQ(sw.calls().size(), 5u) << "2 + the stale sample, the maps, the sample again";
}

// A platform that does not count WRED ECN marks: the queue's marks are unknown, not 0.
TEST(sonic_switch_driver, a_missing_wred_ecn_counter_is_reported_missing_never_zero) {
  fake_switch sw;
  json c = counters_db;
  c["COUNTERS:oid:0x15000000000230"].erase("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS");
  sw.set_counters(c);
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto counters = (*d)->read_counters();
  ASSERT_TRUE(counters.ok()) << counters.error().message();
  int seen = 0;
  for (const auto& x : *counters)
    if (x.scope == "queue" && x.index == 3 && x.name == "ecn_marked_packets") {
      ++seen;
      EXPECT_TRUE(x.missing);
    }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(missing_counter_names(*counters), std::vector<std::string>{"Ethernet0 queue3.ecn_marked_packets"});
  const auto samples =
      to_counter_samples(*counters, 0, [](const std::string&) -> std::optional<std::uint32_t> { return 1u; }, 5);
  for (const auto& smp : samples) EXPECT_NE(smp.name, "queue3.ecn_marked_packets") << "no 0 in the records";
  // Where the platform counts them, they are not missing.
  sw.set_counters(counters_db);
  auto d2 = sonic_switch_driver::open(options());
  ASSERT_TRUE(d2.ok());
  auto counted = (*d2)->read_counters();
  ASSERT_TRUE(counted.ok());
  EXPECT_TRUE(missing_counter_names(*counted).empty());
}

// The PFC watchdog writes text beside a watched queue's counters (the recorded hash of
// tests/data/sonic-counters, from sonic-swss's pfcwdsworch.cpp and pfcactionhandler.cpp):
// the counters are still read, the text fields are not taken for counters, and the
// watchdog's status and action are kept.
TEST(sonic_switch_driver, counters_of_a_queue_the_pfc_watchdog_watches_skip_its_text_fields) {
  fake_switch sw;
  json c = counters_db;
  c["COUNTERS:oid:0x15000000000230"] =
      json::parse(testing::slurp(fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-counters/pfcwd_queue_counters.json"));
  sw.set_counters(c);
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto counters = (*d)->read_counters();
  ASSERT_TRUE(counters.ok()) << counters.error().message();
  auto find = [&](const std::string& name) -> std::optional<std::uint64_t> {
    for (const auto& x : *counters)
      if (x.scope == "queue" && x.index == 3 && x.name == name) return x.value;
    return std::nullopt;
  };
  EXPECT_EQ(find("tx_packets"), 900u);
  EXPECT_EQ(find("ecn_marked_packets"), 77u);
  EXPECT_EQ(find("PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS"), 15u) << "the watchdog's counts are counters";
  EXPECT_EQ(find("PFC_WD_DETECTION_TIME"), 200000u);
  for (const char* text : {"PFC_WD_STATUS", "PFC_WD_ACTION", "PFC_STAT_HISTORY", "PFC_WD_RESTORATION_TIME",
                           "SAI_QUEUE_ATTR_PAUSE_STATUS", "SAI_QUEUE_ATTR_PAUSE_STATUS_last"})
    EXPECT_EQ(find(text), std::nullopt) << text << " is no counter";
  EXPECT_EQ((*d)->pfc_watchdog(), (std::vector<pfc_watchdog_queue>{{"Ethernet0", 3, "stormed", "drop"}}));
}

// Numbers stay strict: a counter that does not hold one is an error naming its key and field.
TEST(sonic_switch_driver, a_malformed_counter_beside_the_watchdogs_fields_is_an_error_naming_key_and_field) {
  const json recorded =
      json::parse(testing::slurp(fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-counters/pfcwd_queue_counters.json"));
  struct case_t {
    const char* field;
    const char* value;
  };
  const case_t cases[] = {{"SAI_QUEUE_STAT_PACKETS", "9O0"},
                          {"PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS", "stormed"},
                          {"PFC_WD_RESTORATION_TIME", "two seconds"},
                          {"SAI_QUEUE_STAT_BYTES", ""}};
  for (const auto& k : cases) {
    SCOPED_TRACE(k.field);
    fake_switch sw;
    json c = counters_db;
    c["COUNTERS:oid:0x15000000000230"] = recorded;
    c["COUNTERS:oid:0x15000000000230"][k.field] = k.value;
    sw.set_counters(c);
    auto d = sonic_switch_driver::open(options());
    ASSERT_TRUE(d.ok());
    auto counters = (*d)->read_counters();
    ASSERT_FALSE(counters.ok());
    EXPECT_EQ(counters.error().code(), error_code::malformed_input);
    const std::string m = counters.error().message();
    EXPECT_NE(m.find("COUNTERS:oid:0x15000000000230 field " + std::string(k.field) + " holds '" + k.value + "'"),
              std::string::npos)
        << m;
  }
}

// ---- SONiC's dynamic buffer model (tests/data/sonic-buffers) ----

json recorded_sonic_buffers(const char* file) {
  return json::parse(testing::slurp(fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-buffers" / file));
}

// The running config under the dynamic model: lossless PGs with profile NULL.
json dynamic_running_config() {
  json db = running_config;
  db.erase("BUFFER_PG");
  db.erase("BUFFER_PROFILE");
  const json dynamic = recorded_sonic_buffers("config_db_dynamic.json");
  for (const auto& [table, keys] : dynamic.items())
    for (const auto& [key, entry] : keys.items()) db[table][key] = entry;
  return db;
}

TEST(sonic_switch_driver, a_null_profile_under_the_dynamic_model_is_read_from_the_appl_db_profile_buffermgrd_made) {
  fake_switch sw;
  sw.set_config_db(dynamic_running_config());
  sw.set_appl_db(recorded_sonic_buffers("appl_db_dynamic.json"));
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto settings = (*d)->read_settings({"Ethernet0"});
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  ASSERT_EQ(settings->buffers.size(), 2u);  // PGs 3 and 4 of the range key
  for (const auto& b : settings->buffers) {
    EXPECT_EQ(b.port, "Ethernet0");
    EXPECT_EQ(b.size_bytes, 19456);
    EXPECT_EQ(b.xoff_bytes, 26624);
    EXPECT_EQ(b.xon_bytes, 19456);
    EXPECT_EQ(b.dynamic_th, 0);
  }
  EXPECT_EQ(buffer_model(dynamic_running_config()), "dynamic");
  EXPECT_EQ(buffer_model(running_config), "traditional");
}

TEST(sonic_switch_driver, a_buffer_setting_on_a_null_profile_pg_is_met_or_refused_naming_the_buffer_model) {
  const pg_buffer_setting generated{"Ethernet0", 3, 19456, 26624, 19456, 0, 0};  // what buffermgrd made
  pg_buffer_setting more_headroom = generated;
  more_headroom.xoff_bytes = 65536;
  enum class appl { recorded, empty, pg_only };
  struct case_t {
    const char* what;
    bool dynamic_model;
    appl appl_db;
    pg_buffer_setting setting;
    error_code code;  // ok: applied with nothing to patch
    std::vector<std::string> in_message;
  };
  const case_t cases[] = {
      {"the generated profile already holds it", true, appl::recorded, generated, error_code::ok, {}},
      {"another xoff than buffermgrd computed", true, appl::recorded, more_headroom, error_code::unsupported,
       {"BUFFER_PG|Ethernet0|3-4 has profile NULL", "buffer_model dynamic", "pg_lossless_100000_5m_profile",
        "xoff 26624, 65536 asked"}},
      {"buffermgrd generated nothing yet", true, appl::empty, generated, error_code::not_found,
       {"buffer_model dynamic", "APPL_DB BUFFER_PG_TABLE:Ethernet0:3-4 names no profile"}},
      {"APPL_DB names a profile it does not hold", true, appl::pg_only, generated, error_code::not_found,
       {"buffer_model dynamic", "APPL_DB BUFFER_PG_TABLE:Ethernet0:3-4 names pg_lossless_100000_5m_profile",
        "APPL_DB BUFFER_PROFILE_TABLE does not hold"}},
      {"NULL under the traditional model", false, appl::recorded, generated, error_code::not_found,
       {"has profile NULL", "buffer_model is traditional"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    json config_db = dynamic_running_config();
    if (!c.dynamic_model) config_db["DEVICE_METADATA"]["localhost"].erase("buffer_model");
    json appl_db = recorded_sonic_buffers("appl_db_dynamic.json");
    if (c.appl_db == appl::empty) appl_db = json::object();
    if (c.appl_db == appl::pg_only) appl_db.erase("BUFFER_PROFILE_TABLE:pg_lossless_100000_5m_profile");
    fake_switch sw;
    sw.set_config_db(config_db);
    sw.set_appl_db(appl_db);
    auto d = sonic_switch_driver::open(options());
    ASSERT_TRUE(d.ok());
    switch_settings s;
    s.buffers = {c.setting};
    const status st = (*d)->apply(s);
    EXPECT_EQ(st.code(), c.code) << st.message();
    for (const auto& words : c.in_message) EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
    EXPECT_EQ(sw.patches(), 0) << "a generated profile is never patched";
    EXPECT_EQ(sw.config_db(), config_db);
  }
}

// ---- the config updater's field rules, over every kind of patch the driver sends ----

// Each kind of setting alone and all together, applied twice (the second changes the
// first's fields again) and restored: every patch passes the fake updater's rules (a
// rejected one fails the apply or restore), the config_db after the apply validates
// against the YANG models, and restore gives back the running config_db exactly.
TEST_F(sonic_yang, every_patch_the_driver_emits_passes_the_config_updaters_field_rules) {
  switch_settings ecn, pfc, buffers, dscp, span, erspan;
  ecn.ecn = {{"Ethernet0", 3, true, 20480, 204800, 0.05}, {"Ethernet0", 4, true, 20480, 204800, 0.05},
             {"Ethernet4", 3, true, 20480, 204800, 0.05}, {"Ethernet4", 4, true, 20480, 204800, 0.05}};
  pfc.pfc = {{"Ethernet0", {3}}, {"Ethernet4", {3, 4}}};
  buffers.buffers = {{"Ethernet0", 3, 1248, 65536, 1248, 2496, -2}, {"Ethernet0", 4, 1248, 65536, 1248, 2496, -2},
                     {"Ethernet4", 3, 1248, 65536, 1248, 2496, -2}};
  dscp.dscp_maps = {{"Ethernet0", {{26, 3}, {48, 6}, {24, 3}}}};
  span.mirror = incast_settings().mirror;
  span.mirror->dst_ip.clear();
  span.mirror->src_ip.clear();
  span.mirror->destination_port = "Ethernet4";
  span.mirror->source_ports = {"Ethernet0"};
  erspan.mirror = incast_settings().mirror;
  struct case_t {
    const char* name;
    switch_settings first, second;
  };
  switch_settings ecn2 = ecn;
  for (auto& e : ecn2.ecn) e.kmax_bytes = 409600, e.pmax = 0.2;
  switch_settings buffers2 = buffers;
  for (auto& b : buffers2.buffers) b.dynamic_th = 1, b.xoff_bytes = 80000;
  switch_settings dscp2;
  dscp2.dscp_maps = {{"Ethernet0", {{26, 4}}}, {"Ethernet4", {{26, 4}}}};
  const case_t cases[] = {
      {"ECN", ecn, ecn2},         {"PFC", pfc, switch_settings{}}, {"buffers on a range key", buffers, buffers2},
      {"DSCP map", dscp, dscp2},  {"SPAN", span, switch_settings{}}, {"ERSPAN then off", erspan, [] {
                                                                        switch_settings off;
                                                                        off.mirror = incast_settings().mirror;
                                                                        off.mirror->enabled = false;
                                                                        return off;
                                                                      }()},
      {"all", incast_settings(), ecn2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fake_switch sw;
    auto d = sonic_switch_driver::open(options());
    ASSERT_TRUE(d.ok());
    auto st = (*d)->apply(c.first);
    ASSERT_TRUE(st.ok()) << st.message();
    std::string out;
    EXPECT_EQ(validate_db(sw.config_db(), out), 0) << out;
    if (!c.second.empty()) {
      st = (*d)->apply(c.second);
      ASSERT_TRUE(st.ok()) << st.message();
    }
    st = (*d)->restore();
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(sw.config_db(), running_config) << sw.config_db().dump(1);
    EXPECT_EQ(sw.flapped_ports(), std::vector<std::string>{});
    // Only what the driver added is ever removed: nothing of the running config_db.
    for (int i = 0; i < sw.patches(); ++i)
      for (const auto& op : sw.patch(i))
        if (op["op"] == "remove") {
          EXPECT_FALSE(running_config.contains(json::json_pointer(op["path"].get<std::string>()))) << op.dump();
        }
  }
}

// The rules are not a formality: the fake updater refuses what sonic-utilities refuses --
// the profiles of our own an earlier driver added -- and takes the replaces it allows.
TEST(sonic_switch_driver, the_fake_updater_refuses_what_the_config_updater_refuses) {
  fake_switch sw;
  auto run = [&](const json& patch) {
    auto r = run_process({"ssh", "--", "admin@sw1", "sudo", "config", "apply-patch", "/dev/stdin"}, patch.dump(),
                         std::chrono::seconds(30));
    EXPECT_TRUE(r.ok());
    return *r;
  };
  const json refused[] = {
      json::array({{{"op", "add"}, {"path", "/WRED_PROFILE/ROCELAB_Ethernet0_Q3"}, {"value", {{"ecn", "ecn_all"}}}}}),
      json::array({{{"op", "add"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold"}, {"value", "1"}}}),
      json::array({{{"op", "replace"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/yellow_min_threshold"}, {"value", "1"}}}),
      json::array({{{"op", "replace"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/ecn"}, {"value", "ecn_none"}}}),
      json::array({{{"op", "add"},
                    {"path", "/BUFFER_PROFILE/ROCELAB_PG_Ethernet0_3"},
                    {"value", {{"pool", "ingress_lossless_pool"}, {"size", "0"}}}}}),
      json::array({{{"op", "replace"}, {"path", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/size"}, {"value", "1"}}}),
  };
  for (const auto& p : refused) {
    const auto r = run(p);
    EXPECT_EQ(r.exit_code, 1) << p.dump();
    EXPECT_NE(r.err.find("table is illegal"), std::string::npos) << r.err;
  }
  EXPECT_EQ(sw.config_db(), running_config);
  const auto ok = run(json::array(
      {{{"op", "replace"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold"}, {"value", "1"}},
       {{"op", "replace"}, {"path", "/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff"}, {"value", "1"}}}));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // An HWSKU the updater does not list may not change them at all.
  json db = running_config;
  db["DEVICE_METADATA"]["localhost"]["hwsku"] = "Some-Vendor-Box";
  sw.set_config_db(db);
  const auto unlisted = run(json::array(
      {{{"op", "replace"}, {"path", "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold"}, {"value", "2"}}}));
  EXPECT_EQ(unlisted.exit_code, 1);
}

// What the updater would refuse, the driver refuses before it sends anything, naming why.
TEST(sonic_switch_driver, settings_the_config_updater_cannot_apply_are_refused_by_name) {
  struct case_t {
    const char* name;
    switch_settings settings;
    std::function<void(json&)> switch_state;
    error_code code;
    const char* in_message;
  };
  switch_settings ecn_off;
  ecn_off.ecn = {{"Ethernet0", 3, false, 0, 0, 0.0}};
  switch_settings two_curves;
  two_curves.ecn = {{"Ethernet0", 3, true, 20480, 204800, 0.05}, {"Ethernet4", 3, true, 40960, 204800, 0.05}};
  switch_settings other_size;
  other_size.buffers = {{"Ethernet0", 3, 65536, 65536, 1248, 2496, 0}};
  switch_settings pg7;
  pg7.buffers = {{"Ethernet0", 7, 1248, 65536, 1248, 2496, 0}};
  switch_settings dscp_two_ways;
  dscp_two_ways.dscp_maps = {{"Ethernet0", {{26, 3}}}, {"Ethernet4", {{26, 4}}}};
  const case_t cases[] = {
      {"ECN off", ecn_off, {}, error_code::unsupported, "turning ECN off"},
      {"two curves on one shared profile", two_curves, {}, error_code::unsupported, "AZURE_LOSSLESS"},
      {"another PG size", other_size, {}, error_code::unsupported, "only xoff and dynamic_th"},
      {"a PG no BUFFER_PG entry covers", pg7, {}, error_code::not_found, "no BUFFER_PG entry covers"},
      {"one DSCP two ways in a shared map", dscp_two_ways, {}, error_code::unsupported, "is shared"},
      {"an unlisted HWSKU", incast_settings(),
       [](json& db) { db["DEVICE_METADATA"]["localhost"]["hwsku"] = "Some-Vendor-Box"; }, error_code::unsupported,
       "HWSKU 'Some-Vendor-Box'"},
      {"a profile name without a digit", incast_settings(),
       [](json& db) {
         db["BUFFER_PROFILE"]["ingress_lossless_profile"] = db["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"];
         db["BUFFER_PG"]["Ethernet0|3-4"]["profile"] = "ingress_lossless_profile";
       },
       error_code::unsupported, "whose name has a digit"},
      {"no DSCP map bound", incast_settings(),
       [](json& db) {
         for (auto& [k, v] : db["PORT_QOS_MAP"].items()) v.erase("dscp_to_tc_map");
       },
       error_code::not_found, "binds no dscp_to_tc_map"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fake_switch sw;
    json db = running_config;
    if (c.switch_state) c.switch_state(db);
    sw.set_config_db(db);
    auto d = sonic_switch_driver::open(options());
    ASSERT_TRUE(d.ok());
    const status st = (*d)->apply(c.settings);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_NE(st.message().find(c.in_message), std::string::npos) << st.message();
    EXPECT_EQ(sw.patches(), 0) << "nothing was sent";
  }
}

// ---- port flaps: tables the config updater ties to PORT admin_status ----

// Recorded: patch_sorter.py makes any change under QUEUE or PORT_QOS_MAP (and the buffer
// tables of required_values.json) take the port admin down and up; in-flight QPs die.
// Every patch the driver sends, at apply and at restore, must stay clear of them, and a
// QUEUE entry must keep the fields the driver does not write (its scheduler).
TEST(sonic_switch_driver, apply_and_restore_never_make_the_config_updater_flap_a_port) {
  const json required = json::parse(
      testing::slurp(fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-gcu/required_values.json"))["settings"][0];
  for (const auto& pattern : required["requiring_patterns"])
    EXPECT_TRUE(apply_patch_flaps_ports(pattern[0].get<std::string>())) << pattern.dump();
  EXPECT_FALSE(apply_patch_flaps_ports("WRED_PROFILE"));
  EXPECT_FALSE(apply_patch_flaps_ports("MIRROR_SESSION"));

  fake_switch sw;
  json db = running_config;
  db["QUEUE"]["Ethernet0|3"] = {{"scheduler", "scheduler.0"}};  // bound to no WRED profile yet
  db["QUEUE"].erase("Ethernet4|3");                             // no entry at all
  sw.set_config_db(db);
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->apply(incast_settings()).ok());
  EXPECT_EQ(sw.flapped_ports(), std::vector<std::string>{}) << "apply";
  const json after = sw.config_db();
  EXPECT_EQ(after["QUEUE"]["Ethernet0|3"], (json{{"scheduler", "scheduler.0"}, {"wred_profile", "AZURE_LOSSLESS"}}));
  EXPECT_EQ(after["QUEUE"]["Ethernet4|3"], (json{{"wred_profile", "AZURE_LOSSLESS"}}));
  EXPECT_EQ(after["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"], "3");
  EXPECT_EQ(after["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"], "AZURE");
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(sw.flapped_ports(), std::vector<std::string>{}) << "restore";
  EXPECT_EQ(sw.config_db(), db) << sw.config_db().dump(1);
  for (int i = 0; i < sw.patches(); ++i)
    for (const auto& op : sw.patch(i)) EXPECT_FALSE(apply_patch_flaps_ports(pointer_table(op["path"]))) << op.dump();
}

TEST(sonic_switch_driver, db_writes_set_fields_one_by_one_and_never_replace_an_entry) {
  json running = running_config;
  running["QUEUE"]["Ethernet0|3"] = {{"scheduler", "scheduler.0"}, {"wred_profile", "WRED_OTHER"}};
  const json desired = {{"QUEUE", {{"Ethernet0|3", {{"wred_profile", "AZURE_LOSSLESS"}}}, {"Ethernet0|5", nullptr}}},
                        {"PORT_QOS_MAP", {{"Ethernet0", {{"pfc_enable", "3,4"}}}}},
                        {"WRED_PROFILE", {{"AZURE_LOSSLESS", {{"green_min_threshold", "1"}}}}}};
  running["QUEUE"]["Ethernet0|5"] = {{"scheduler", "scheduler.1"}};
  const auto writes = make_db_writes(running, desired);
  const std::vector<std::vector<std::string>> expected{
      {"sonic-db-cli", "CONFIG_DB", "HSET", "'QUEUE|Ethernet0|3'", "'wred_profile'", "'AZURE_LOSSLESS'"},
      {"sonic-db-cli", "CONFIG_DB", "DEL", "'QUEUE|Ethernet0|5'"}};
  EXPECT_EQ(writes, expected) << "pfc_enable 3,4 is already there; WRED_PROFILE goes by apply-patch";
  const json patch = make_apply_patch(running, desired);
  ASSERT_EQ(patch.size(), 1u) << patch.dump();
  EXPECT_EQ(patch[0]["path"], "/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold");
  // A quote in a value stays inside its word on the switch's shell.
  const json quoted = {{"QUEUE", {{"Ethernet0|3", {{"wred_profile", "it's"}}}}}};
  EXPECT_EQ(make_db_writes(running, quoted).at(0).back(), R"('it'\''s')");
}

// ---- the config updater's rules per SONiC release (recorded in tests/data/sonic-gcu) ----

// The updater's verdict on a `replace` of `field` (as it cleans paths) of `table` on a
// switch, computed from the recorded conf.json of its release, as
// rdma_config_update_validator does: the reference the driver is checked against.
struct recorded_gcu {
  json conf;
  static recorded_gcu of(const std::string& release) {
    return {json::parse(testing::slurp(fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-gcu" / release /
                                       "gcu_field_operation_validators.conf.json"))};
  }
  [[nodiscard]] std::string asic(const std::string& asic_type, const std::string& hwsku) const {
    const json& m = conf["helper_data"]["rdma_config_update_validator"];
    auto lower = [](std::string x) {
      for (auto& c : x) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return x;
    };
    if (asic_type == "cisco-8000") return "cisco-8000";
    if (asic_type == "mellanox" || asic_type == "vs")
      for (const char* a : {"spc1", "spc2", "spc3", "spc4"})
        if (m["mellanox_asics"].contains(a))
          for (const auto& h : m["mellanox_asics"][a])
            if (lower(h.get<std::string>()) == lower(hwsku)) return a;
    if (asic_type == "broadcom" || asic_type == "vs")
      for (const auto& [a, hs] : m["broadcom_asics"].items())
        for (const auto& h : hs)
          if (lower(hwsku).find(lower(h.get<std::string>())) != std::string::npos) return a;
    return "unknown";
  }
  [[nodiscard]] bool allows(const std::string& table, const std::string& field, const std::string& asic,
                            const std::string& branch) const {
    if (asic == "unknown") return false;
    for (const auto& [name, sc] : conf["tables"][table]["validator_data"]["rdma_config_update_validator"].items()) {
      if (std::find(sc["fields"].begin(), sc["fields"].end(), field) == sc["fields"].end()) continue;
      if (!sc["platforms"].contains(asic)) return false;
      const std::string min = sc["platforms"][asic];
      if (min.empty()) return false;
      if (std::find(sc["operations"].begin(), sc["operations"].end(), "replace") == sc["operations"].end()) return false;
      return branch.empty() || branch >= min;
    }
    return false;
  }
};

switch_settings ecn_change() {
  switch_settings s;
  s.ecn = {{"Ethernet0", 3, true, 20480, 204800, 0.05}};  // green min and max change
  return s;
}
switch_settings xoff_change() {
  switch_settings s;
  s.buffers = {{"Ethernet0", 3, 1248, 65536, 1248, 2496, 0}};  // xoff only
  return s;
}
switch_settings dynamic_th_change() {
  switch_settings s;
  s.buffers = {{"Ethernet0", 3, 1248, 56160, 1248, 2496, -2}};  // dynamic_th only
  return s;
}

// Every HWSKU any recorded release lists, on every recorded release, for each change the
// driver can emit on WRED_PROFILE and BUFFER_PROFILE: the driver refuses exactly what the
// recorded rules refuse (a 202305 switch knows spc1-4, th, th2, td2, td3 only; td2 never
// changes xoff).
TEST(sonic_switch_driver, config_updater_rules_follow_the_switchs_release_per_field) {
  const std::vector<std::string> releases{"202305", "202311", "202405", "202411"};
  std::set<std::pair<std::string, std::string>> hwskus;  // asic_type, hwsku
  for (const auto& r : releases) {
    const recorded_gcu gcu = recorded_gcu::of(r);
    const json& m = gcu.conf["helper_data"]["rdma_config_update_validator"];
    for (const auto& [a, hs] : m["mellanox_asics"].items())
      for (const auto& h : hs) hwskus.insert({"mellanox", h.get<std::string>()});
    for (const auto& [a, hs] : m["broadcom_asics"].items())
      for (const auto& h : hs) hwskus.insert({"broadcom", h.get<std::string>()});
  }
  hwskus.insert({"cisco-8000", "Cisco-8102-C64"});
  hwskus.insert({"mellanox", "Some-Vendor-Box"});
  struct change {
    const char* name;
    switch_settings settings;
    const char* table;
    const char* field;
  };
  const change changes[] = {{"ECN thresholds", ecn_change(), "WRED_PROFILE", "azure_lossless/green_min_threshold"},
                            {"PG xoff", xoff_change(), "BUFFER_PROFILE", "xoff"},
                            {"PG dynamic_th", dynamic_th_change(), "BUFFER_PROFILE", "dynamic_th"}};
  int allowed = 0, refused = 0;
  for (const auto& r : releases) {
    const recorded_gcu gcu = recorded_gcu::of(r);
    sonic_options o = options();
    o.version = sonic_version{r.substr(0, 6) + "31.17", "", r};
    for (const auto& [asic_type, hwsku] : hwskus) {
      o.version->asic_type = asic_type;
      json db = running_config;
      db["DEVICE_METADATA"]["localhost"]["hwsku"] = hwsku;
      const std::string asic = gcu.asic(asic_type, hwsku);
      for (const auto& c : changes) {
        SCOPED_TRACE(r + " " + asic_type + " " + hwsku + " (" + asic + "): " + c.name);
        auto changes_made = to_config_db_changes(c.settings, db, o);
        if (gcu.allows(c.table, c.field, asic, o.version->branch_version())) {
          ++allowed;
          EXPECT_TRUE(changes_made.ok()) << changes_made.error().message();
        } else {
          ++refused;
          ASSERT_FALSE(changes_made.ok());
          EXPECT_EQ(changes_made.error().code(), error_code::unsupported);
          EXPECT_NE(changes_made.error().message().find(r), std::string::npos) << changes_made.error().message();
        }
      }
    }
  }
  EXPECT_GT(allowed, 300);
  EXPECT_GT(refused, 100);
}

TEST(sonic_switch_driver, config_updater_rules_refuse_by_name) {
  struct case_t {
    const char* name;
    const char* yml;
    const char* hwsku;
    switch_settings settings;
    const char* in_message;  // empty: allowed
  };
  const case_t cases[] = {
      {"td2 never changes xoff", "build_version: '20230531.17'\nasic_type: broadcom\nrelease: '202305'\n",
       "Force10-S6000", xoff_change(), "BUFFER_PROFILE|pg_lossless_100000_5m_profile xoff"},
      {"td2 changes dynamic_th", "build_version: '20230531.17'\nasic_type: broadcom\nrelease: '202305'\n",
       "Force10-S6000", dynamic_th_change(), ""},
      {"202305 does not know th5", "build_version: '20230531.17'\nasic_type: broadcom\nrelease: '202305'\n",
       "Arista-7060X6-64PE", ecn_change(), "HWSKU 'Arista-7060X6-64PE'"},
      {"202405 does not know this th5", "build_version: '20240531.9'\nasic_type: broadcom\nrelease: '202405'\n",
       "Arista-7060X6-64PE", ecn_change(), "HWSKU 'Arista-7060X6-64PE'"},
      {"202411 does", "build_version: '20241130.3'\nasic_type: broadcom\nrelease: '202411'\n",
       "Arista-7060X6-64PE", ecn_change(), ""},
      {"202411 lists spc5 but never detects it",
       "build_version: '20241130.3'\nasic_type: mellanox\nrelease: '202411'\n", "ACS-SN5640", ecn_change(),
       "HWSKU 'ACS-SN5640'"},
      {"a master build", "build_version: 'master.21742-7b0d6a1b7'\nasic_type: mellanox\nrelease: 'none'\n",
       "Mellanox-SN2700", ecn_change(), "SONiC release 'master.21742-7b0d6a1b7'"},
      {"the release from the build date", "build_version: '20231130.12'\nasic_type: mellanox\n", "Mellanox-SN2700",
       ecn_change(), ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fake_switch sw;
    sw.set_version(c.yml);
    json db = running_config;
    db["DEVICE_METADATA"]["localhost"]["hwsku"] = c.hwsku;
    sw.set_config_db(db);
    auto d = sonic_switch_driver::open(options());
    ASSERT_TRUE(d.ok());
    const status st = (*d)->apply(c.settings);
    if (std::string_view(c.in_message).empty()) {
      EXPECT_TRUE(st.ok()) << st.message();
      continue;
    }
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), error_code::unsupported) << st.message();
    EXPECT_NE(st.message().find(c.in_message), std::string::npos) << st.message();
    EXPECT_EQ(sw.patches(), 0) << "nothing was sent";
  }
}

TEST(parse_sonic_version, reads_release_build_and_asic) {
  auto v = parse_sonic_version(
      "---\nbuild_version: '20230531.17'\ndebian_version: '11.7'\nasic_type: mellanox\ncommit_id: 'abc'\n"
      "branch: '202305'\nrelease: '202305'\nbuild_date: Wed Jun 14 01:02:03 UTC 2023\n");
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(*v, (sonic_version{"20230531.17", "mellanox", "202305"}));
  EXPECT_EQ(v->branch_version(), "20230531");
  auto master = parse_sonic_version("build_version: 'master.123-abc'\nasic_type: vs\nrelease: 'none'\n");
  ASSERT_TRUE(master.ok());
  EXPECT_EQ(master->release, "");
  EXPECT_EQ(master->branch_version(), "");
  EXPECT_FALSE(parse_sonic_version("asic_type: mellanox\n").ok());
}

// ---- BUFFER_PG range keys (recorded: SONiC's buffers_config.j2 writes Ethernet0|3-4) ----

TEST(sonic_switch_driver, restore_keeps_sonics_range_key_and_pg_3_keeps_its_buffer) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  switch_settings s;
  s.buffers = {{"Ethernet0", 3, 1248, 65536, 1248, 2496, -2}};
  ASSERT_TRUE((*d)->apply(s).ok());
  json db = sw.config_db();
  EXPECT_EQ(db["BUFFER_PG"], running_config["BUFFER_PG"]) << "no Ethernet0|3 key beside Ethernet0|3-4";
  EXPECT_EQ(db["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]["xoff"], "65536");
  ASSERT_TRUE((*d)->restore().ok());
  db = sw.config_db();
  ASSERT_TRUE(db["BUFFER_PG"].contains("Ethernet0|3-4")) << "PG 3 still has its lossless buffer";
  EXPECT_EQ(db["BUFFER_PG"]["Ethernet0|3-4"]["profile"], "pg_lossless_100000_5m_profile");
  EXPECT_EQ(db, running_config);
  for (int i = 0; i < sw.patches(); ++i)
    for (const auto& op : sw.patch(i)) EXPECT_FALSE(op["path"].get<std::string>().starts_with("/BUFFER_PG")) << op;
}

// Older releases write references as "[TABLE|name]": read and changed alike.
// A config_db of a switch or from a file whose tables, keys or fields the driver reads have
// another JSON type: an error naming the table, key (and field), the type expected and the
// type found; never an exception out of nlohmann::json (lab check aborted on these).
TEST(sonic_switch_driver, a_config_db_part_of_the_wrong_json_type_is_an_error_naming_it) {
  struct wrong_case {
    const char* name;
    json::json_pointer at;
    json value;
    const char* names;  // what the error names
  };
  const std::vector<wrong_case> cases{
      {"mirror_session_entry_is_a_number", json::json_pointer("/MIRROR_SESSION/rocelab"), 7,
       "MIRROR_SESSION|rocelab: expected an object of fields, found a number"},
      {"port_qos_map_entry_is_a_string", json::json_pointer("/PORT_QOS_MAP/Ethernet0"), "3",
       "PORT_QOS_MAP|Ethernet0: expected an object of fields, found a string"},
      {"wred_profile_entry_is_an_array", json::json_pointer("/WRED_PROFILE/AZURE_LOSSLESS"), json::array({1}),
       "WRED_PROFILE|AZURE_LOSSLESS: expected an object of fields, found an array"},
      {"wred_profile_entry_is_null", json::json_pointer("/WRED_PROFILE/AZURE_LOSSLESS"), nullptr,
       "WRED_PROFILE|AZURE_LOSSLESS: expected an object of fields, found a null"},
      {"a_table_is_an_array", json::json_pointer("/BUFFER_PG"), json::array(),
       "table BUFFER_PG: expected an object of keys, found an array"},
      {"a_field_is_a_number", json::json_pointer("/WRED_PROFILE/AZURE_LOSSLESS/ecn"), 1,
       "WRED_PROFILE|AZURE_LOSSLESS field ecn: expected a string, found a number"},
      {"a_dscp_map_value_is_null", json::json_pointer("/DSCP_TO_TC_MAP/AZURE/26"), nullptr,
       "DSCP_TO_TC_MAP|AZURE field 26: expected a string, found a null"},
      {"device_metadata_is_a_string", json::json_pointer("/DEVICE_METADATA/localhost"), "x",
       "DEVICE_METADATA|localhost: expected an object of fields, found a string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    json db = running_config;
    db[c.at] = c.value;
    auto read = settings_from_config_db(db, {"Ethernet0"});
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().code(), error_code::malformed_input);
    EXPECT_NE(read.error().message().find(c.names), std::string::npos) << read.error().message();
    auto changes = to_config_db_changes(incast_settings(), db, options());
    ASSERT_FALSE(changes.ok());
    EXPECT_NE(changes.error().message().find(c.names), std::string::npos) << changes.error().message();
  }
  // A live switch printing such a config_db: read_settings and apply say so, naming it.
  fake_switch sw;
  json db = running_config;
  db["MIRROR_SESSION"] = {{"everflow0", "not an entry"}};
  sw.set_config_db(db);
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto read = (*d)->read_settings({"Ethernet0"});
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message().find("MIRROR_SESSION|everflow0"), std::string::npos) << read.error().message();
  const status applied = (*d)->apply(incast_settings());
  EXPECT_NE(applied.message().find("MIRROR_SESSION|everflow0"), std::string::npos) << applied.message();
}

TEST(sonic_switch_driver, bracketed_references_of_older_releases_are_followed) {
  fake_switch sw;
  json db = running_config;
  db["BUFFER_PG"]["Ethernet0|3-4"]["profile"] = "[BUFFER_PROFILE|pg_lossless_100000_5m_profile]";
  db["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] = "[DSCP_TO_TC_MAP|AZURE]";
  db["QUEUE"]["Ethernet0|3"]["wred_profile"] = "[WRED_PROFILE|AZURE_LOSSLESS]";
  sw.set_config_db(db);
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto read = (*d)->read_settings({"Ethernet0"});
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->buffers.size(), 2u) << "PGs 3 and 4 of the range";
  EXPECT_EQ(read->buffers[0].xoff_bytes, 56160);
  EXPECT_EQ(read->dscp_maps[0].dscp_to_tc.at(26), 1);
  ASSERT_FALSE(read->ecn.empty());
  switch_settings s;
  s.buffers = {{"Ethernet0", 4, 1248, 60000, 1248, 2496, 0}};
  s.dscp_maps = {{"Ethernet0", {{26, 3}}}};
  ASSERT_TRUE((*d)->apply(s).ok());
  EXPECT_EQ(sw.config_db()["DSCP_TO_TC_MAP"]["AZURE"]["26"], "3");
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(sw.config_db(), db);
}

// ---- the lossless class on a SONiC switch ----

// A stock switch sends DSCP 26 to lossy TC 1: the check names it; after apply it agrees.
TEST(sonic_switch_driver, the_lossless_class_is_checked_then_programmed_into_dscp_to_tc_map) {
  fake_switch sw;
  auto d = sonic_switch_driver::open(options());
  ASSERT_TRUE(d.ok());
  auto cls = make_lossless_class(3, 26, dcqcn_config::mlx5(), true);
  ASSERT_TRUE(cls.ok());
  const std::vector<std::string> ports{"Ethernet0", "Ethernet4"};
  auto before = (*d)->read_settings(ports);
  ASSERT_TRUE(before.ok());
  lossless_observation seen;
  seen.switch_ports = lossless_ports(*before, ports);
  const auto m = lossless_mismatches(*cls, seen);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], "switch port Ethernet0: DSCP_TO_TC_MAP maps DSCP 26 to TC 1, not to the data priority 3");

  ASSERT_TRUE((*d)->apply(lossless_class_settings(*cls, ports, {3, 4})).ok());
  auto after = (*d)->read_settings(ports);
  ASSERT_TRUE(after.ok());
  seen.switch_ports = lossless_ports(*after, ports);
  EXPECT_TRUE(check_lossless_class(*cls, seen).ok()) << check_lossless_class(*cls, seen).message();
  EXPECT_EQ(sw.config_db()["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"], "3,4");
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(sw.config_db()["DSCP_TO_TC_MAP"]["AZURE"]["26"], "1") << "the stock map is back";
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
