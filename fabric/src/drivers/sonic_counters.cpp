// The SONiC driver's counters: COUNTERS_DB hashes read with sonic-db-cli HGETALL, SAI
// names mapped onto switch_driver.hpp's vocabulary, the PFC watchdog's state kept
// (sonic_switch_driver.hpp).
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <charconv>
#include <cstdio>

#include "sonic_config_db_keys.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

using namespace sonic_keys;

result<std::map<std::string, std::string>> parse_python_dict(const std::string& text) {
  std::map<std::string, std::string> out;
  std::vector<std::string> strings;
  std::size_t i = text.find('{');
  if (i == std::string::npos) {
    // An empty hash prints as {} -- and a missing key too; anything else is not a dict.
    return status(error_code::malformed_input, "not a Python dict: '" + text.substr(0, 80) + "'");
  }
  for (++i; i < text.size() && text[i] != '}'; ++i) {
    const char q = text[i];
    if (q != '\'' && q != '"') continue;
    const auto end = text.find(q, i + 1);
    if (end == std::string::npos) return status(error_code::malformed_input, "unterminated string in a Python dict");
    strings.push_back(text.substr(i + 1, end - i - 1));
    i = end;
  }
  if (strings.size() % 2 != 0) return status(error_code::malformed_input, "a Python dict with an odd number of strings");
  for (std::size_t k = 0; k < strings.size(); k += 2) out[strings[k]] = strings[k + 1];
  return out;
}

result<std::vector<std::map<std::string, std::string>>> sonic_switch_driver::hgetall(
    const std::vector<std::string>& keys, const char* db) {
  // One SSH session for every key: `sonic-db-cli ... HGETALL k1 ; sonic-db-cli ... HGETALL
  // k2 ; ...` runs in the switch's login shell; each prints its dict on one line.
  std::vector<std::string> command;
  for (const auto& key : keys) {
    if (!command.empty()) command.push_back(";");
    command.insert(command.end(), {"sonic-db-cli", db, "HGETALL", key});
  }
  auto out = remote(command);
  if (!out.ok()) return out.error();
  std::vector<std::string> lines;
  for (std::size_t b = 0; b < out->size();) {
    const auto e = out->find('\n', b);
    std::string line = out->substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (line.find_first_not_of(" \r\t") != std::string::npos) lines.push_back(std::move(line));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (lines.size() != keys.size())
    return status(error_code::malformed_input, "SONiC " + options_.host + ": " + std::to_string(keys.size()) +
                                                   " HGETALLs printed " + std::to_string(lines.size()) + " lines");
  std::vector<std::map<std::string, std::string>> values;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto d = parse_python_dict(lines[i]);
    if (!d.ok()) return d.error().with_context("SONiC " + options_.host + ": HGETALL " + keys[i]);
    values.push_back(std::move(*d));
  }
  return values;
}

namespace {

// SAI counter names onto switch_driver.hpp's vocabulary.
const std::map<std::string, std::string>& port_names() {
  static const std::map<std::string, std::string> m{
      {"SAI_PORT_STAT_IF_IN_UCAST_PKTS", "rx_packets"}, {"SAI_PORT_STAT_IF_IN_OCTETS", "rx_bytes"},
      {"SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "tx_packets"}, {"SAI_PORT_STAT_IF_OUT_OCTETS", "tx_bytes"},
      {"SAI_PORT_STAT_IF_IN_DISCARDS", "rx_drops"},      {"SAI_PORT_STAT_IF_OUT_DISCARDS", "tx_drops"}};
  return m;
}
const std::map<std::string, std::string>& queue_names() {
  static const std::map<std::string, std::string> m{
      {"SAI_QUEUE_STAT_PACKETS", "tx_packets"},
      {"SAI_QUEUE_STAT_BYTES", "tx_bytes"},
      {"SAI_QUEUE_STAT_DROPPED_PACKETS", "dropped_packets"},
      {"SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "ecn_marked_packets"},
      {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES", "watermark_bytes"}};
  return m;
}
const std::map<std::string, std::string>& pg_names() {
  static const std::map<std::string, std::string> m{
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_PACKETS", "rx_packets"},
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS", "dropped_packets"},
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES", "shared_watermark_bytes"},
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES", "headroom_watermark_bytes"}};
  return m;
}

// Fields the PFC watchdog writes into a watched queue's COUNTERS hash that are text, not
// counters: PFC_WD_ACTION and PFC_STAT_HISTORY (sonic-swss orchagent/pfcwdsworch.cpp,
// registerInWdDb), PFC_WD_STATUS (pfcactionhandler.cpp), BIG_RED_SWITCH_MODE
// (pfcwdsworch.cpp) and DEBUG_STORM (read by pfc_detect_<asic>.lua).
constexpr std::string_view watchdog_text_fields[] = {"PFC_WD_STATUS", "PFC_WD_ACTION", "PFC_STAT_HISTORY",
                                                     "BIG_RED_SWITCH_MODE", "DEBUG_STORM"};

// Whether `field` of a COUNTERS_DB hash is something other than a counter: a watchdog text
// field, the watchdog's restoration time left empty (it is optional: pfcwdsworch.cpp
// writes "" when none is configured), or a SAI attribute (SAI_QUEUE_ATTR_PAUSE_STATUS,
// "true"/"false", and its "_last" copy that pfc_detect_broadcom.lua keeps).
bool not_a_counter(const std::string& field, const std::string& value) {
  for (std::string_view f : watchdog_text_fields)
    if (field == f) return true;
  if (field == "PFC_WD_RESTORATION_TIME" && value.empty()) return true;
  return field.starts_with("SAI_") && field.find("_ATTR_") != std::string::npos;
}

result<std::uint64_t> parse_u64(const std::string& s, const std::string& what) {
  std::uint64_t v = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v); ec != std::errc{} || p != s.data() + s.size())
    return status(error_code::malformed_input, what + " holds '" + s + "', not a counter value");
  return v;
}

}  // namespace

result<std::vector<switch_counter>> sonic_switch_driver::read_counters() {
  const std::string context = "reading counters of SONiC " + options_.host;
  // The name maps change only when the switch re-creates its objects (a config reload, a
  // restart); an object id that answers with nothing sends us back to the maps, once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool fresh = !port_map_ || attempt > 0;
    if (fresh) {
      auto maps = hgetall({"COUNTERS_PORT_NAME_MAP", "COUNTERS_QUEUE_NAME_MAP", "COUNTERS_PG_NAME_MAP"});
      if (!maps.ok()) return maps.error().with_context(context);
      port_map_ = (*maps)[0];
      queue_map_ = (*maps)[1];
      pg_map_ = (*maps)[2];
    }
    struct object {
      std::string port;
      const char* scope;
      int index;
      std::string table, oid;
      const std::map<std::string, std::string>* names;
    };
    std::vector<object> objects;
    for (const auto& port : options_.ports) {
      const auto p = port_map_->find(port);
      if (p == port_map_->end())
        return status(error_code::not_found, context + ": no port " + port + " in COUNTERS_PORT_NAME_MAP");
      objects.push_back({port, "port", -1, "COUNTERS", p->second, &port_names()});
      for (int i = 0; i < 8; ++i) {
        const std::string key = port + ":" + std::to_string(i);
        if (auto q = queue_map_->find(key); q != queue_map_->end()) {
          objects.push_back({port, "queue", i, "COUNTERS", q->second, &queue_names()});
          objects.push_back({port, "queue", i, "USER_WATERMARKS", q->second, &queue_names()});
        }
        if (auto g = pg_map_->find(key); g != pg_map_->end()) {
          objects.push_back({port, "pg", i, "COUNTERS", g->second, &pg_names()});
          objects.push_back({port, "pg", i, "USER_WATERMARKS", g->second, &pg_names()});
        }
      }
    }
    std::vector<std::string> keys;
    for (const auto& o : objects) {
      if (!oid_name(o.oid)) return status(error_code::malformed_input, context + ": '" + o.oid + "' is not an object id");
      keys.push_back(o.table + ":" + o.oid);
    }
    auto values = hgetall(keys);
    if (!values.ok()) return values.error().with_context(context);
    bool stale = false;
    for (std::size_t i = 0; i < objects.size(); ++i)
      if (objects[i].table == "COUNTERS" && (*values)[i].empty()) stale = true;
    if (stale && !fresh) continue;

    std::vector<switch_counter> out;
    std::vector<pfc_watchdog_queue> watchdog;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      const auto& o = objects[i];
      if (o.table == "COUNTERS" && std::string_view(o.scope) == "queue") {
        const auto& fields = (*values)[i];
        const auto st = fields.find("PFC_WD_STATUS");
        const auto act = fields.find("PFC_WD_ACTION");
        if (st != fields.end() || act != fields.end())
          watchdog.push_back({o.port, o.index, st != fields.end() ? st->second : "",
                              act != fields.end() ? act->second : ""});
      }
      for (const auto& [sai, text] : (*values)[i]) {
        if (not_a_counter(sai, text)) continue;
        auto v = parse_u64(text, keys[i] + " field " + sai);
        if (!v.ok()) return v.error().with_context(context);
        // PFC frames per priority are port counters in SAI; they belong to the PG.
        int prio = -1;
        if (std::sscanf(sai.c_str(), "SAI_PORT_STAT_PFC_%d_", &prio) == 1 && prio >= 0 && prio < 8) {
          if (sai.ends_with("_RX_PKTS")) out.push_back({o.port, "pg", prio, "pfc_rx_frames", *v});
          else if (sai.ends_with("_TX_PKTS")) out.push_back({o.port, "pg", prio, "pfc_tx_frames", *v});
          else out.push_back({o.port, "pg", prio, sai, *v});
          continue;
        }
        const auto it = o.names->find(sai);
        out.push_back({o.port, o.scope, o.index, it != o.names->end() ? it->second : sai, *v});
      }
      // A platform that does not count WRED ECN marks leaves the SAI name out: unknown.
      if (o.table == "COUNTERS" && std::string_view(o.scope) == "queue" &&
          !(*values)[i].contains("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"))
        out.push_back({o.port, "queue", o.index, "ecn_marked_packets", 0, true});
    }
    pfc_watchdog_ = std::move(watchdog);
    return out;
  }
  return status(error_code::internal, context + ": unreachable");
}

}  // namespace rocelab::fabric::drivers
