// `rocelab buffers` output (buffers.hpp): the JSON and the self-contained HTML page.
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/html_page.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/buffers/buffers.hpp"
#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments {
namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string size_text(std::int64_t bytes) { return svg::readable_bytes(static_cast<double>(bytes)); }

}  // namespace

std::string buffers_json(const buffers_result& r) {
  nlohmann::json j;
  j["spec"] = r.spec_name;
  j["incast_flow_bytes"] = r.incast_flow_bytes;
  j["p99_target_ns"] = r.p99_target_ns;
  j["seeds_per_probe"] = r.seeds_per_probe;
  j["target_rule"] = r.target_rule;
  j["profiles"] = nlohmann::json::array();
  for (const auto& p : r.profiles) {
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& q : p.probes)
      probes.push_back({{"search", q.search}, {"degree", q.degree}, {"buffer_bytes", q.buffer_bytes},
                        {"seeds", q.seeds}, {"pfc", q.pfc}, {"drops", q.drops}, {"headroom_drops", q.headroom_drops},
                        {"headroom_shortfall", q.headroom_shortfall()}, {"pause_frames", q.pause_frames},
                        {"fct_p99_ns", q.fct_p99_ns}, {"complete", q.complete}});
    const auto& h = p.headroom;
    j["profiles"].push_back(
        {{"profile", p.profile},
         {"path", p.path},
         {"port_gbps", p.port_gbps},
         {"ports", p.ports},
         {"buffer_bytes", p.buffer_bytes},
         {"buffer_per_port_bytes", p.buffer_per_port_bytes},
         {"headroom",
          {{"per_pg_bytes", h.per_pg_bytes},
           {"cable_bytes", h.cable_bytes},
           {"mtu_bytes", h.mtu_bytes},
           {"response_bytes", h.response_bytes},
           {"phy_bytes", h.phy_bytes},
           {"pfc_frame_bytes", h.pfc_frame_bytes},
           {"lossless_pgs", h.lossless_pgs},
           {"reserved_bytes", h.reserved_bytes},
           {"reserved_share", h.reserved_share},
           {"shared_bytes", h.shared_bytes}}},
         {"max_degree_searched", p.max_degree_searched},
         {"lossless_degree_pfc", p.lossless_degree_pfc},
         {"lossless_degree_no_pfc", p.lossless_degree_no_pfc},
         {"pauses_at_max_degree", p.pauses_at_max_degree},
         {"target_outcome", to_string(p.target)},
         {"target_searched", p.target != target_outcome::not_searched},
         {"target_met_by_profile", p.target_met_by_profile},
         {"target_reachable", p.target == target_outcome::met || p.target == target_outcome::at_most},
         {"buffer_for_target_bytes", p.buffer_for_target_bytes},
         {"target_at_search_floor", p.target == target_outcome::at_most},
         {"headroom_shortfall", shortfall_text(p)},
         {"p99_at_profile_ns", p.p99_at_profile_ns},
         {"probes", probes}});
  }
  return j.dump(2);
}

std::string buffers_html(const buffers_result& r) {
  std::ostringstream h;
  h << html_page_head("rocelab buffers: " + r.spec_name);
  h << "<h1>Switch buffers for " << svg::escape(r.spec_name.empty() ? "the workload" : r.spec_name) << "</h1>\n";
  h << "<p class=note>Each profile's switch on the rocelab twin: its port speed, cell, alpha, latency and cable, "
       "and its buffer less the PFC headroom its other ports reserve; "
    << r.seeds_per_probe << " seeds pooled per probe. Incast of "
    << size_text(r.incast_flow_bytes) << " per sender"
    << (r.p99_target_ns > 0 ? "; p99 FCT target " + readable_duration(static_cast<double>(r.p99_target_ns))
                            : std::string())
    << ".</p>\n<table>\n<tr><th></th>";
  for (const auto& p : r.profiles) h << "<th>" << svg::escape(p.profile) << "</th>";
  h << "</tr>\n";
  auto line = [&](const std::string& label, auto cell) {
    h << "<tr><th>" << svg::escape(label) << "</th>";
    for (const auto& p : r.profiles) h << cell(p);
    h << "</tr>\n";
  };
  auto td = [](const std::string& text, const char* cls = nullptr) {
    return std::string("<td") + (cls ? std::string(" class=") + cls : std::string()) + ">" + svg::escape(text) + "</td>";
  };
  line("ports x speed", [&](const auto& p) { return td(std::to_string(p.ports) + " x " + fmt("%g", p.port_gbps) + "G"); });
  line("buffer (per port)", [&](const auto& p) {
    return td(size_text(p.buffer_bytes) + " (" + size_text(p.buffer_per_port_bytes) + ")");
  });
  line("PFC headroom per port and PG", [&](const auto& p) { return td(size_text(p.headroom.per_pg_bytes)); });
  line("headroom reserved, switch", [&](const auto& p) {
    return td(size_text(p.headroom.reserved_bytes) + " (" + fmt("%.0f", 100 * p.headroom.reserved_share) + "%)",
              p.headroom.reserved_share > 0.5 ? "bad" : nullptr);
  });
  line("shared buffer left", [&](const auto& p) { return td(size_text(p.headroom.shared_bytes)); });
  line("largest loss-free incast, PFC on", [&](const auto& p) {
    return td(std::to_string(p.lossless_degree_pfc) + "-to-1 (of " + std::to_string(p.max_degree_searched) + ")",
              p.lossless_degree_pfc == p.max_degree_searched ? "good" : "bad");
  });
  line("PFC frames at the largest degree", [&](const auto& p) { return td(std::to_string(p.pauses_at_max_degree)); });
  line("largest loss-free incast, PFC off", [&](const auto& p) {
    return td(std::to_string(p.lossless_degree_no_pfc) + "-to-1",
              p.lossless_degree_no_pfc == p.max_degree_searched ? "good" : nullptr);
  });
  if (r.p99_target_ns > 0) {
    line("p99 FCT with the profile's buffer", [&](const auto& p) {
      return td(readable_duration(static_cast<double>(p.p99_at_profile_ns)), p.target_met_by_profile ? "good" : "bad");
    });
    line("buffer for the p99 target", [&](const auto& p) {
      return td(target_text(p), p.target == target_outcome::headroom_shortfall ? "bad" : nullptr);
    });
  }
  h << "</table>\n";
  for (const auto& p : r.profiles)
    if (!p.shortfalls.empty())
      h << "<p class=note><b>" << svg::escape(p.profile) << "</b>: " << svg::escape(shortfall_text(p)) << ".</p>\n";
  if (r.p99_target_ns > 0) h << "<p class=note>Buffer for the target: " << svg::escape(r.target_rule) << ".</p>\n";

  // Plots: loss-free degree per profile (x: the profiles by name), p99 against buffer size.
  std::vector<std::string> profile_names;
  for (const auto& p : r.profiles) profile_names.push_back(p.profile);
  svg::plot degree;
  degree.id = "lossless-degree";
  degree.title = "Largest loss-free incast degree per profile";
  svg::set_x_categories(degree, "profile", profile_names);
  degree.y.label = "senders";
  degree.y.min = 0;
  svg::series with{"PFC on", svg::mark::scatter, {}, {}, {}}, without{"PFC off", svg::mark::scatter, {}, {}, {}};
  for (std::size_t i = 0; i < r.profiles.size(); ++i) {
    with.x.push_back(static_cast<double>(i + 1));
    with.y.push_back(r.profiles[i].lossless_degree_pfc);
    without.x.push_back(static_cast<double>(i + 1));
    without.y.push_back(r.profiles[i].lossless_degree_no_pfc);
  }
  degree.lines = {with, without};
  h << svg::render(degree) << "\n";

  svg::plot reserve;
  reserve.id = "headroom-reserve";
  reserve.title = "Buffer and the PFC headroom it reserves";
  svg::set_x_categories(reserve, "profile", profile_names);
  reserve.y.label = "size";
  reserve.y.unit = svg::unit_kind::bytes;
  svg::series total{"buffer", svg::mark::scatter, {}, {}, {}}, held{"headroom reserved", svg::mark::scatter, {}, {}, {}};
  for (std::size_t i = 0; i < r.profiles.size(); ++i) {
    total.x.push_back(static_cast<double>(i + 1));
    total.y.push_back(static_cast<double>(r.profiles[i].buffer_bytes));
    held.x.push_back(static_cast<double>(i + 1));
    held.y.push_back(static_cast<double>(r.profiles[i].headroom.reserved_bytes));
  }
  reserve.lines = {total, held};
  h << svg::render(reserve) << "\n";

  if (r.p99_target_ns > 0) {
    svg::plot curve;
    curve.id = "p99-vs-buffer";
    curve.title = "p99 FCT against switch buffer (the search's runs)";
    curve.x.label = "buffer";
    curve.x.unit = svg::unit_kind::bytes;
    curve.y.label = "p99 FCT";
    curve.y.unit = svg::unit_kind::ns;
    for (const auto& p : r.profiles) {
      svg::series s{p.profile, svg::mark::scatter, {}, {}, {}};
      for (const auto& q : p.probes)
        if (q.search == "buffer_for_target" && q.complete) {
          s.x.push_back(static_cast<double>(q.buffer_bytes));
          s.y.push_back(static_cast<double>(q.fct_p99_ns));
        }
      curve.lines.push_back(std::move(s));
    }
    svg::series target{"target", svg::mark::line, {}, {}, "#cc0000"};
    double lo = 0, hi = 0;
    for (const auto& s : curve.lines)
      for (double x : s.x) {
        lo = lo == 0 ? x : std::min(lo, x);
        hi = std::max(hi, x);
      }
    if (hi > 0) {
      target.x = {lo, hi};
      target.y = {static_cast<double>(r.p99_target_ns), static_cast<double>(r.p99_target_ns)};
      curve.lines.push_back(target);
    }
    h << svg::render(curve) << "\n";
  }
  h << "</body></html>\n";
  return h.str();
}

}  // namespace rocelab::experiments
