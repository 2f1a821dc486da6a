// What the SONiC driver emits against SONiC's YANG models (yanglint) and the config
// updater's field rules of each recorded release (tests/data/sonic-gcu), and the version
// file that picks the release.
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <gtest/gtest.h>

#include <set>

#include "rocelab/fabric/drivers/process_runner.hpp"
#include "sonic_fake_switch.hpp"

namespace rocelab::fabric::drivers {
namespace {

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

}  // namespace
}  // namespace rocelab::fabric::drivers
