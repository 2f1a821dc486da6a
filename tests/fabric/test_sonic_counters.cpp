// The SONiC driver's counters: COUNTERS_DB hashes onto the common vocabulary, object ids
// that change, missing ECN counters, the PFC watchdog's fields, sonic-db-cli's dicts.
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <gtest/gtest.h>

#include "sonic_fake_switch.hpp"

namespace rocelab::fabric::drivers {
namespace {

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

TEST(parse_python_dict, reads_what_sonic_db_cli_prints) {
  auto d = parse_python_dict("{'Ethernet0': 'oid:0x1000000000002', 'Ethernet4': 'oid:0x1000000000003'}\n");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->size(), 2u);
  EXPECT_EQ(d->at("Ethernet4"), "oid:0x1000000000003");
  EXPECT_TRUE(parse_python_dict("{}\n")->empty());
  EXPECT_FALSE(parse_python_dict("Error: no such db\n").ok());
  EXPECT_FALSE(parse_python_dict("{'a': 'b', 'c'}").ok());
}

}  // namespace
}  // namespace rocelab::fabric::drivers
