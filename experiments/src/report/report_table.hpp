#pragma once
// The run report's tables: one shape for the HTML page and the CSV files. Private to
// experiments/src.
//
// Cells hold what the CSV files carry (times in integer nanoseconds, so a script reads
// them exactly). The page shows the same tables to a person: a column whose name ends in
// "_ns" is printed as a readable duration ("296 ms", "1.31 us") under its name without
// the suffix.

#include <charconv>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/analysis/correlation.hpp"
#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments::report_detail {

inline std::string device_name(const run_records& r, std::uint32_t d) {
  return d < r.devices.size() ? r.devices[d] : "dev" + std::to_string(d);
}
inline std::string host_name(const run_records& r, std::uint32_t h) {
  return h < r.hosts.size() ? r.hosts[h] : "h" + std::to_string(h + 1);
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

// A nanosecond cell as the page shows it; text that is not a number stays as it is.
inline std::string readable_ns_cell(const std::string& cell) {
  double ns = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), ns);
  if (ec != std::errc() || end != cell.data() + cell.size()) return cell;
  return readable_duration(ns);
}

inline std::string html_table(const table& t, const std::string& id, const std::string& empty = "none") {
  std::string out = "<table id=\"" + svg::escape(id) + "\"><thead><tr>";
  std::vector<bool> ns(t.head.size());
  for (std::size_t i = 0; i < t.head.size(); ++i) {
    ns[i] = is_ns_column(t.head[i]);
    const std::string name = ns[i] ? t.head[i].substr(0, t.head[i].size() - 3) : t.head[i];
    out += "<th>" + svg::escape(name) + "</th>";
  }
  out += "</tr></thead><tbody>";
  if (t.rows.empty())
    out += "<tr><td colspan=\"" + std::to_string(t.head.size()) + "\" class=\"empty\">" + svg::escape(empty) + "</td></tr>";
  for (const auto& r : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < r.size(); ++i)
      out += "<td>" + svg::escape(i < ns.size() && ns[i] ? readable_ns_cell(r[i]) : r[i]) + "</td>";
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

}  // namespace rocelab::experiments::report_detail
