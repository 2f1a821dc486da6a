#pragma once
// The run report's tables: one shape for the HTML page and the CSV files. Private to
// experiments/src.
//
// Cells hold what the CSV files carry (times in integer nanoseconds, sizes in bytes, so a
// script reads them exactly). The page shows the same tables to a person: a column whose
// name ends in "_ns" is printed as a readable duration ("296 ms", "1.31 us") and one whose
// name ends in "_bytes" (or is "bytes") as a readable size ("10.7 MiB"), under its name
// without the suffix.
//
// Hosts are named as the spec counts them: host i is "h<i>", h0 the first, whatever name
// the backend gave it (the twin calls host 0 "h1"); a name that says something more (a
// lab's inventory name, "node-a") follows in brackets.

#include <charconv>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/analysis/correlation.hpp"
#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments::report_detail {

// Whether `name` is "h" and digits only: a backend's numbering, not a name of its own.
inline bool is_numbered_host(const std::string& name) {
  return name.size() > 1 && name[0] == 'h' &&
         name.find_first_not_of("0123456789", 1) == std::string::npos;
}
inline std::string host_name(const run_records& r, std::uint32_t h) {
  const std::string numbered = "h" + std::to_string(h);
  if (h >= r.hosts.size() || r.hosts[h].empty() || is_numbered_host(r.hosts[h])) return numbered;
  return numbered + " (" + r.hosts[h] + ")";
}
// A device by its record name; a host's NIC (a device whose name is a host's) by the
// host's spec number.
inline std::string device_name(const run_records& r, std::uint32_t d) {
  if (d >= r.devices.size()) return "dev" + std::to_string(d);
  for (std::uint32_t h = 0; h < r.hosts.size(); ++h)
    if (r.hosts[h] == r.devices[d]) return host_name(r, h);
  return r.devices[d];
}
inline std::string port_name(const run_records& r, const pause_index::key& k) {
  return device_name(r, k.device) + ":" + std::to_string(k.port) + " p" + std::to_string(k.priority);
}

struct table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};

inline bool is_ns_column(const std::string& name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, "_ns") == 0;
}
inline bool is_bytes_column(const std::string& name) {
  return name == "bytes" || (name.size() > 6 && name.compare(name.size() - 6, 6, "_bytes") == 0);
}

// A nanosecond or byte cell as the page shows it; text that is not a number stays as it is.
inline std::string readable_cell(const std::string& cell, bool bytes) {
  double v = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (ec != std::errc() || end != cell.data() + cell.size()) return cell;
  return bytes ? svg::readable_bytes(v) : readable_duration(v);
}

inline std::string html_table(const table& t, const std::string& id, const std::string& empty = "none") {
  std::string out = "<table id=\"" + svg::escape(id) + "\"><thead><tr>";
  std::vector<bool> ns(t.head.size()), bytes(t.head.size());
  for (std::size_t i = 0; i < t.head.size(); ++i) {
    ns[i] = is_ns_column(t.head[i]);
    bytes[i] = is_bytes_column(t.head[i]);
    std::string name = t.head[i];
    if (ns[i]) name.resize(name.size() - 3);
    if (bytes[i] && name != "bytes") name.resize(name.size() - 6);
    out += "<th>" + svg::escape(name) + "</th>";
  }
  out += "</tr></thead><tbody>";
  if (t.rows.empty())
    out += "<tr><td colspan=\"" + std::to_string(t.head.size()) + "\" class=\"empty\">" + svg::escape(empty) + "</td></tr>";
  for (const auto& r : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < r.size(); ++i)
      out += "<td>" + svg::escape(i < ns.size() && (ns[i] || bytes[i]) ? readable_cell(r[i], bytes[i]) : r[i]) +
             "</td>";
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace rocelab::experiments::report_detail
