// The SONiC driver over SSH against the fake switch: the commands and patches apply
// sends, restore, the dynamic buffer model, port flaps, range keys, malformed config_db,
// the lossless class, names that never reach ssh.
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <gtest/gtest.h>

#include "sonic_fake_switch.hpp"

namespace rocelab::fabric::drivers {
namespace {

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

}  // namespace
}  // namespace rocelab::fabric::drivers
