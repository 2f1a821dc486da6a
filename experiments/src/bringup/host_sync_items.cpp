#include "host_sync_items.hpp"

#include <charconv>
#include <sstream>

namespace rocelab::experiments {
namespace {

std::string note_or(const host_facts& f, const std::string& fact, const std::string& otherwise) {
  const auto n = f.notes.find(fact);
  return n != f.notes.end() && !n->second.empty() ? n->second : otherwise;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

std::optional<unsigned> number(std::string_view text, unsigned max) {
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v > max) return std::nullopt;
  return v;
}

// A DSCP as dcb prints it: a number, or its name in iproute2's rt_dsfield (the DS field
// value's name, the DSCP shifted left by 2): CS0-CS7, AF11-AF43, EF, LE, default.
std::optional<unsigned> dscp_value(std::string_view text) {
  if (auto v = number(text, 63)) return v;
  if (text == "default") return 0u;
  if (text == "EF") return 46u;
  if (text == "LE") return 1u;
  if (text.size() == 3 && text.substr(0, 2) == "CS" && text[2] >= '0' && text[2] <= '7')
    return static_cast<unsigned>(text[2] - '0') * 8;
  if (text.size() == 4 && text.substr(0, 2) == "AF" && text[2] >= '1' && text[2] <= '4' && text[3] >= '1' &&
      text[3] <= '3')
    return static_cast<unsigned>(text[2] - '0') * 8 + static_cast<unsigned>(text[3] - '0') * 2;
  return std::nullopt;
}

// mlnx_qos: "Priority trust state: dscp|pcp", then under "dscp2prio mapping:" one or more
// "prio:P dscp:D,D,...," rows per priority (8 DSCPs a row; mlnx-tools' print_dscp2prio).
result<nic_trust_state> parse_mlnx_qos(std::string_view text) {
  nic_trust_state out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.rfind("Priority trust state:", 0) == 0) {
      out.trust = trim(std::string_view(t).substr(21));
      if (out.trust != "dscp" && out.trust != "pcp")
        return status(error_code::malformed_input, "mlnx_qos: trust state '" + out.trust + "' is neither dscp nor pcp");
    } else if (t.rfind("prio:", 0) == 0) {
      const auto space = t.find(' ');
      const auto prio =
          number(std::string_view(t).substr(5, space == std::string::npos ? std::string::npos : space - 5), 7);
      const auto at = t.find("dscp:");
      if (!prio || at == std::string::npos)
        return status(error_code::malformed_input, "mlnx_qos: dscp2prio row '" + t + "' is not 'prio:P dscp:D,...'");
      std::string_view list = std::string_view(t).substr(at + 5);
      while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view item = list.substr(0, comma);
        if (!item.empty()) {
          const auto d = number(item, 63);
          if (!d)
            return status(error_code::malformed_input,
                          "mlnx_qos: dscp2prio row '" + t + "': '" + std::string(item) + "' is not a DSCP");
          out.dscp_to_priority[static_cast<std::uint8_t>(*d)] = static_cast<std::uint8_t>(*prio);
        }
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      }
    }
  }
  if (out.trust.empty()) return status(error_code::malformed_input, "mlnx_qos: no 'Priority trust state' line");
  return out;
}

// dcb app show: one line per selector with entries ("dscp-prio AF31:3 CS6:6"); none for an
// empty table.
result<nic_trust_state> parse_dcb_app(std::string_view text) {
  static constexpr std::string_view selectors[] = {
      "default-prio", "ethtype-prio", "stream-port-prio", "dgram-port-prio", "port-prio", "dscp-prio", "pcp-prio"};
  nic_trust_state out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string selector;
    if (!(words >> selector)) continue;
    bool known = false;
    for (auto s : selectors) known = known || selector == s;
    if (!known)
      return status(error_code::malformed_input,
                    "neither `mlnx_qos -i IF` (Priority trust state) nor `dcb app show` output: '" + trim(line) + "'");
    if (selector != "dscp-prio") continue;
    std::string entry;
    while (words >> entry) {
      const auto colon = entry.rfind(':');
      const auto d = colon == std::string::npos ? std::nullopt : dscp_value(std::string_view(entry).substr(0, colon));
      const auto p = colon == std::string::npos ? std::nullopt : number(std::string_view(entry).substr(colon + 1), 7);
      if (!d || !p)
        return status(error_code::malformed_input, "dcb app: dscp-prio entry '" + entry + "' is not DSCP:PRIO");
      out.dscp_to_priority[static_cast<std::uint8_t>(*d)] = static_cast<std::uint8_t>(*p);
    }
  }
  out.trust = out.dscp_to_priority.empty() ? "pcp" : "dscp";
  return out;
}

std::string us_text(std::int64_t ns) {
  std::ostringstream o;
  o.precision(ns < 10'000 ? 2 : 0);
  o << std::fixed << static_cast<double>(ns) / 1000.0 << " us";
  return o.str();
}

}  // namespace

result<nic_trust_state> parse_nic_trust(std::string_view text) {
  if (text.find("Priority trust state") != std::string_view::npos) return parse_mlnx_qos(text);
  return parse_dcb_app(text);
}

namespace bringup_detail {

check_item nic_trust_item(const bringup_expectation& want, const host_facts& f, const std::string& facts_fix,
                          const std::string& target) {
  check_item c;
  c.item = "nic_trust";
  c.target = target;
  const unsigned d = want.lossless.data_dscp, p = want.lossless.data_priority;
  const std::string ds = std::to_string(d), ps = std::to_string(p);
  c.expected = "trust dscp, DSCP " + ds + " -> priority " + ps;
  if (!f.unavailable.empty()) {
    c.observed = f.unavailable;
    c.fix = facts_fix;
    return c;
  }
  if (!f.nic_trust) {
    c.observed = note_or(f, "nic_trust", "NIC trust state not read");
    c.fix = "read it on " + f.host + " with `mlnx_qos -i " + f.device + "` (MLNX_OFED) or `dcb app show dev " +
            f.device + "` (iproute2); " + facts_fix;
    return c;
  }
  const std::string source = f.trust_source.empty() ? std::string() : " (" + f.trust_source + ")";
  const std::string set_map = "`mlnx_qos -i " + f.device + " --dscp2prio set," + ds + "," + ps + "`";
  const std::string dcb_add = "`dcb app add dev " + f.device + " dscp-prio " + ds + ":" + ps + "`";
  if (*f.nic_trust != "dscp") {
    c.verdict = check_verdict::fail;
    c.observed = "trust " + *f.nic_trust + source + ": untagged RoCE (DSCP " + ds +
                 ") is received on priority 0, which is not paused: its drops count in rx_discards_phy";
    // --trust dscp keeps the firmware's map, DSCP d -> priority d / 8 by default; mlnx_qos
    // refuses --trust and --dscp2prio in one call.
    c.fix = "`mlnx_qos -i " + f.device + " --trust dscp` on " + f.host +
            (d / 8 != p ? " then " + set_map : std::string()) + " (upstream mlx5 without MLNX_OFED: " + dcb_add +
            ", which switches the NIC to DSCP trust)";
    return c;
  }
  const auto it = f.dscp_to_priority ? f.dscp_to_priority->find(static_cast<std::uint8_t>(d))
                                     : std::map<std::uint8_t, std::uint8_t>::const_iterator{};
  const bool mapped = f.dscp_to_priority && it != f.dscp_to_priority->end();
  c.observed =
      "trust dscp, DSCP " + ds + (mapped ? " -> priority " + std::to_string(it->second) : " not in the map") + source;
  if (mapped && it->second == p) {
    c.verdict = check_verdict::pass;
    return c;
  }
  c.verdict = check_verdict::fail;
  c.fix = set_map + " on " + f.host + " (upstream mlx5 without MLNX_OFED: `dcb app replace dev " + f.device +
          " dscp-prio " + ds + ":" + ps + "`)";
  return c;
}

check_item clock_source_item(const host_facts& f, const std::string& facts_fix, const std::string& target) {
  check_item c;
  c.item = "clock_source";
  c.target = target;
  c.expected = "the host clock synchronised (ptp, or ntp) with an error bound <= " + us_text(max_host_clock_bound_ns);
  if (!f.unavailable.empty()) {
    c.observed = f.unavailable;
    c.fix = facts_fix;
    return c;
  }
  std::string clock =
      f.clocksource ? "clocksource " + *f.clocksource : note_or(f, "clocksource", "clocksource unknown");
  if (!f.phc)
    clock += ", PHC unknown";
  else if (f.phc->empty())
    clock += ", no PHC on " + f.device + " (software timestamps)";
  else
    clock += ", PHC " + *f.phc + " on " + f.device + " (hardware timestamps)";
  const std::string sync_fix =
      "synchronise " + f.host +
      " to the lab's PTP grandmaster and discipline its system clock from the NIC's PHC: `ptp4l -i " + f.device +
      " -s` and `phc2sys -s " + f.device + " -w` (or chronyd with `refclock PHC /dev/" +
      (f.phc && !f.phc->empty() ? *f.phc : std::string("ptpN")) + "` instead of phc2sys)";
  if (!f.clock_sync) {
    c.observed = note_or(f, "clock_sync", "clock synchronisation not read") + "; " + clock;
    c.fix = "read it on " + f.host + " with `pmc -u -b 0 'GET TIME_STATUS_NP'` and `chronyc tracking`; " + facts_fix;
    return c;
  }
  if (!f.clocksource) {
    c.observed = clock;
    c.fix = "`cat /sys/devices/system/clocksource/clocksource0/current_clocksource` on " + f.host;
    return c;
  }
  const std::string detail = f.clock_sync_detail.empty() ? std::string() : " (" + f.clock_sync_detail + ")";
  if (*f.clock_sync == "same-kernel") {
    c.verdict = check_verdict::pass;
    c.observed = "one kernel clock for every host" + detail + "; " + clock;
    return c;
  }
  if (*f.clock_sync != "ptp" && *f.clock_sync != "ntp") {
    c.verdict = check_verdict::fail;
    c.observed = "not synchronised" + detail + "; " + clock;
    c.fix = sync_fix;
    return c;
  }
  if (!f.clock_bound_ns) {
    c.observed = *f.clock_sync + ", bound not read" + detail + "; " + clock;
    c.fix = facts_fix;
    return c;
  }
  c.observed = *f.clock_sync + ", bound " + us_text(*f.clock_bound_ns) + detail + "; " + clock;
  if (*f.clock_bound_ns <= max_host_clock_bound_ns) {
    c.verdict = check_verdict::pass;
    return c;
  }
  c.verdict = check_verdict::fail;
  c.fix = sync_fix;
  return c;
}

}  // namespace bringup_detail
}  // namespace rocelab::experiments
