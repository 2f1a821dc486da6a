#include "switch_qos_items.hpp"

#include <algorithm>
#include <optional>

namespace rocelab::experiments::bringup_items {
namespace {

enum class port_state { ok, bad, unknown };

struct port_line {
  std::string port;
  port_state state = port_state::unknown;
  std::string observed;
  std::string fix;
};

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

check_item make(std::string item, const std::string& target, std::string expected) {
  check_item c;
  c.item = std::move(item);
  c.target = target;
  c.expected = std::move(expected);
  return c;
}

// One item over the hosts' ports: FAIL when any port is wrong (its fixes), else MISSING
// when any port's fact was not read, else PASS.
check_item combine(check_item c, const std::vector<port_line>& ports) {
  std::vector<std::string> bad, unknown, good, fixes, how;
  for (const auto& p : ports) {
    auto& into = p.state == port_state::ok ? good : p.state == port_state::bad ? bad : unknown;
    into.push_back(p.port + ": " + p.observed);
    auto& fix_list = p.state == port_state::bad ? fixes : how;
    if (p.state != port_state::ok && !p.fix.empty() && std::find(fix_list.begin(), fix_list.end(), p.fix) == fix_list.end())
      fix_list.push_back(p.fix);
  }
  if (!bad.empty()) {
    c.verdict = check_verdict::fail;
    c.observed = join(bad, "; ");
    c.fix = join(fixes, "; ");
  } else if (!unknown.empty() || good.empty()) {
    c.verdict = check_verdict::missing;
    c.observed = good.empty() && unknown.empty() ? "no ports" : join(unknown, "; ");
    c.fix = join(how, "; ");
  } else {
    c.verdict = check_verdict::pass;
    c.observed = join(good, "; ");
  }
  return c;
}

const switch_qos_map* binding(const switch_facts& sw, const std::string& port, const char* name) {
  const auto p = sw.qos_maps.find(port);
  if (p == sw.qos_maps.end()) return nullptr;
  const auto b = p->second.find(name);
  return b == p->second.end() ? nullptr : &b->second;
}

std::string list(const std::vector<std::uint8_t>& v) {
  std::string out;
  for (auto x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out.empty() ? "none" : out;
}

std::string patch_fix(const std::string& table, const std::string& map, int key, int value, bool exists) {
  return R"(`echo '[{"op":")" + std::string(exists ? "replace" : "add") + R"(","path":"/)" + table + "/" + map + "/" +
         std::to_string(key) + R"(","value":")" + std::to_string(value) + R"("}]' | sudo config apply-patch /dev/stdin`)";
}

const char* dump_fix = "a config_db dump with every table (`sudo sonic-cfggen -d --print-data` on the switch)";

// The verdict a lossless-class item has before any SONiC table is read: skipped when the
// spec runs without PFC, a pass on the soft switch (what it does by construction,
// `soft_observed`); none when the switch's tables decide.
std::optional<check_item> settled_without_tables(check_item& c, const bringup_expectation& want,
                                                 const switch_facts& sw, const char* soft_observed) {
  if (!want.lossless.pfc) {
    c.verdict = check_verdict::skip;
    c.observed = "the spec runs without PFC (switch.pfc.enabled false)";
    return std::move(c);
  }
  if (sw.driver == "soft") {
    c.verdict = check_verdict::pass;
    c.observed = soft_observed;
    return std::move(c);
  }
  return std::nullopt;
}

}  // namespace

check_item priority_group_item(const bringup_expectation& want, const switch_facts& sw, const std::string& target,
                               const std::vector<std::string>& ports) {
  const int p = want.lossless.data_priority;
  check_item c = make("priority_group", target,
                      "TC " + std::to_string(p) + " in a lossless PG that PFC priority " + std::to_string(p) + " pauses");
  if (auto settled = settled_without_tables(
          c, want, sw, "the soft switch keeps one lossless buffer per PFC priority (no TC or PG maps)"))
    return std::move(*settled);
  // Stock SONiC (qos_config.j2) sends TC 3 and 4 to PGs 3 and 4, every other TC to PG 0,
  // and gives only PGs 3 and 4 a lossless buffer: a data priority outside them runs lossy.
  const std::string spec_fix = "run the spec with nic.data_priority 3 or 4, SONiC's lossless classes";
  std::vector<port_line> lines;
  for (const auto& port : ports) {
    port_line l{port, port_state::unknown, {}, {}};
    const switch_qos_map* tc_to_pg = binding(sw, port, "tc_to_pg_map");
    const auto lossless = sw.lossless_pgs.find(port);
    if (tc_to_pg == nullptr || lossless == sw.lossless_pgs.end()) {
      l.observed = tc_to_pg == nullptr ? "TC_TO_PRIORITY_GROUP_MAP not read" : "BUFFER_PG not read";
      l.fix = dump_fix;
      lines.push_back(std::move(l));
      continue;
    }
    l.state = port_state::bad;
    if (tc_to_pg->name.empty()) {
      l.observed = "PORT_QOS_MAP|" + port + " binds no tc_to_pg_map (every TC in PG 0)";
      l.fix = spec_fix + ", or bind the map: `echo '[{\"op\":\"add\",\"path\":\"/PORT_QOS_MAP/" + port +
              "/tc_to_pg_map\",\"value\":\"AZURE\"}]' | sudo config apply-patch /dev/stdin` (takes the port down "
              "and up)";
      lines.push_back(std::move(l));
      continue;
    }
    const auto pg_it = tc_to_pg->entries.find(static_cast<std::uint8_t>(p));
    const int pg = pg_it == tc_to_pg->entries.end() ? -1 : pg_it->second;
    l.observed = "TC " + std::to_string(p) + " -> " + (pg < 0 ? std::string("no PG") : "PG " + std::to_string(pg)) +
                 " (" + tc_to_pg->name + "), lossless PGs " + list(lossless->second);
    const bool pg_lossless =
        pg >= 0 && std::find(lossless->second.begin(), lossless->second.end(), pg) != lossless->second.end();
    const switch_qos_map* pfc_to_pg = binding(sw, port, "pfc_to_pg_map");
    int paused_pg = pg;  // without a PFC-priority-to-PG map the ASIC pauses by TC's PG
    if (pfc_to_pg != nullptr && !pfc_to_pg->name.empty()) {
      const auto it = pfc_to_pg->entries.find(static_cast<std::uint8_t>(p));
      paused_pg = it == pfc_to_pg->entries.end() ? -1 : it->second;
      l.observed += ", PFC priority " + std::to_string(p) + " -> " +
                    (paused_pg < 0 ? std::string("no PG") : "PG " + std::to_string(paused_pg)) + " (" +
                    pfc_to_pg->name + ")";
    }
    if (pg_lossless && paused_pg == pg) {
      l.state = port_state::ok;
      lines.push_back(std::move(l));
      continue;
    }
    std::vector<std::string> steps;
    if (pg != p) steps.push_back(patch_fix("TC_TO_PRIORITY_GROUP_MAP", tc_to_pg->name, p, p, pg >= 0));
    if (!pg_lossless || pg != p)
      steps.push_back("a lossless buffer on PG " + std::to_string(p) +
                      " (dynamic buffer model: `sudo config interface buffer priority_group lossless add " + port + " " +
                      std::to_string(p) + "`)");
    if (pfc_to_pg != nullptr && !pfc_to_pg->name.empty() && paused_pg != p)
      steps.push_back(patch_fix("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", pfc_to_pg->name, p, p, paused_pg >= 0));
    l.fix = spec_fix + "; or " + join(steps, ", ");
    lines.push_back(std::move(l));
  }
  return combine(std::move(c), lines);
}

check_item pfc_queue_item(const bringup_expectation& want, const switch_facts& sw, const std::string& target,
                          const std::vector<std::string>& ports) {
  const int p = want.lossless.data_priority;
  check_item c = make("pfc_queue", target,
                      "PFC priority " + std::to_string(p) + " pauses the queue TC " + std::to_string(p) + " is sent on");
  if (auto settled = settled_without_tables(c, want, sw, "the soft switch pauses the queue of the PFC frame's priority"))
    return std::move(*settled);
  std::vector<port_line> lines;
  for (const auto& port : ports) {
    port_line l{port, port_state::unknown, {}, {}};
    const switch_qos_map* tc_to_queue = binding(sw, port, "tc_to_queue_map");
    const switch_qos_map* pfc_to_queue = binding(sw, port, "pfc_to_queue_map");
    if (tc_to_queue == nullptr || pfc_to_queue == nullptr) {
      l.observed = std::string(tc_to_queue == nullptr ? "TC_TO_QUEUE_MAP" : "MAP_PFC_PRIORITY_TO_QUEUE") + " not read";
      l.fix = dump_fix;
      lines.push_back(std::move(l));
      continue;
    }
    l.state = port_state::bad;
    if (tc_to_queue->name.empty() || pfc_to_queue->name.empty()) {
      l.observed = "PORT_QOS_MAP|" + port + " binds no " + (tc_to_queue->name.empty() ? "tc_to_queue_map" : "pfc_to_queue_map");
      l.fix = "bind SONiC's maps: `echo '[{\"op\":\"add\",\"path\":\"/PORT_QOS_MAP/" + port + "/" +
              (tc_to_queue->name.empty() ? "tc_to_queue_map" : "pfc_to_queue_map") +
              "\",\"value\":\"AZURE\"}]' | sudo config apply-patch /dev/stdin` (takes the port down and up)";
      lines.push_back(std::move(l));
      continue;
    }
    const auto q_it = tc_to_queue->entries.find(static_cast<std::uint8_t>(p));
    const auto pq_it = pfc_to_queue->entries.find(static_cast<std::uint8_t>(p));
    const int q = q_it == tc_to_queue->entries.end() ? -1 : q_it->second;
    const int paused = pq_it == pfc_to_queue->entries.end() ? -1 : pq_it->second;
    l.observed = "TC " + std::to_string(p) + " -> " + (q < 0 ? std::string("no queue") : "queue " + std::to_string(q)) +
                 " (" + tc_to_queue->name + "), PFC priority " + std::to_string(p) + " pauses " +
                 (paused < 0 ? std::string("no queue") : "queue " + std::to_string(paused)) + " (" + pfc_to_queue->name +
                 ")";
    if (q >= 0 && q == paused) {
      l.state = port_state::ok;
    } else if (q < 0) {
      l.fix = patch_fix("TC_TO_QUEUE_MAP", tc_to_queue->name, p, p, false);
    } else {
      l.fix = patch_fix("MAP_PFC_PRIORITY_TO_QUEUE", pfc_to_queue->name, p, q, paused >= 0);
    }
    lines.push_back(std::move(l));
  }
  return combine(std::move(c), lines);
}

check_item pfc_watchdog_item(const bringup_expectation& want, const switch_facts& sw, const std::string& target,
                             const std::vector<std::string>& ports) {
  check_item c = make("pfc_watchdog", target, "no PFC watchdog that drops or forwards the lossless queue");
  if (auto settled = settled_without_tables(c, want, sw, "the soft switch has no PFC watchdog")) return std::move(*settled);
  if (!sw.pfc_watchdog) {
    c.observed = sw.pfc_watchdog_note.empty() ? "PFC watchdog state not read" : sw.pfc_watchdog_note;
    c.fix = "`show pfcwd config` on the switch, or " + std::string(dump_fix);
    return c;
  }
  std::vector<port_line> lines;
  for (const auto& port : ports) {
    port_line l{port, port_state::ok, {}, {}};
    const auto it = sw.pfc_watchdog->find(port);
    if (it == sw.pfc_watchdog->end() || !it->second.on) {
      l.observed = "no PFC watchdog";
    } else {
      const auto& w = it->second;
      l.observed = "PFC watchdog, action " + w.action + ", detection " + std::to_string(w.detection_ms) + " ms";
      // pfcwd's storm detection fires after the queue has been paused for detection_time
      // (sonic-utilities pfcwd/main.py: 200 ms by default, 100..5000 ms); a drop or forward
      // action then empties the lossless queue mid-experiment. alert only logs.
      if (w.action != "alert") {
        l.state = port_state::bad;
        l.fix = "`sudo pfcwd stop " + port + "` for the experiment (`sudo pfcwd start_default` restores it), or "
                "alert only: `sudo pfcwd start --action alert " + port + " 5000`";
      }
    }
    lines.push_back(std::move(l));
  }
  return combine(std::move(c), lines);
}

}  // namespace rocelab::experiments::bringup_items
