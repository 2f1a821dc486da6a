#pragma once
// The SONiC driver's tests' switch: the part of a running config_db the driver touches,
// COUNTERS_DB, and a fake `ssh` (Python) that plays the switch's shell, sonic-cfggen,
// sonic-db-cli and config apply-patch against them in a temporary directory, with the
// config updater's recorded rules (tests/data/sonic-gcu). Each of the driver's test files
// includes it once; its names are private to that file.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"
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

[[maybe_unused]] sonic_options options() {
  sonic_options o;
  o.host = "admin@sw1";
  o.ssh_options = {"-i", "/etc/rocelab/switch_key"};
  o.ports = {"Ethernet0"};
  o.timeout = std::chrono::seconds(30);
  return o;
}

[[maybe_unused]] switch_settings incast_settings() {
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

}  // namespace
}  // namespace rocelab::fabric::drivers
