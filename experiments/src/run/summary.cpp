#include "rocelab/experiments/run/summary.hpp"

#include "rocelab/experiments/run/start_skew.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "rocelab/experiments/run/start_skew.hpp"

namespace rocelab::experiments {
namespace {

template <class T>
T nearest_rank(std::span<const T> sorted, double p) {
  if (sorted.empty()) return T{};
  const double n = static_cast<double>(sorted.size());
  // Rank ceil(p/100 x n), 1-based, at least 1. A tiny epsilon keeps p x n that is an
  // integer in exact arithmetic (99 x 100 / 100) from rounding up past it.
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

nlohmann::ordered_json flow_json(const flow_stats& s) {
  nlohmann::ordered_json j;
  j["flows"] = s.flows;
  j["completed"] = s.completed;
  j["fct_ns"] = {{"p50", s.fct_p50_ns}, {"p99", s.fct_p99_ns}, {"max", s.fct_max_ns}};
  j["slowdown"] = {{"p50", s.slowdown_p50}, {"p99", s.slowdown_p99}};
  return j;
}

nlohmann::ordered_json summary_object(const run_summary& s) {
  nlohmann::ordered_json j = flow_json(s.all);
  j["pfc"] = {{"pause_frames", s.pause_frames}, {"paused_ns", s.paused_ns}};
  j["ecn"] = {{"ce_marked", s.ce_marked}};
  j["cnp"] = s.cnp_measured ? nlohmann::ordered_json(s.cnp) : nlohmann::ordered_json(nullptr);
  j["drops"] = s.drops;
  j["retransmits"] = s.retransmits_measured ? nlohmann::ordered_json(s.retransmits) : nlohmann::ordered_json(nullptr);
  if (s.allreduce) {
    const allreduce_stats& a = *s.allreduce;
    j["allreduce"] = {{"algorithm", a.algorithm},   {"ranks", a.ranks},
                      {"bytes", a.bytes},           {"iterations", a.iterations},
                      {"time_ns", a.time_mean_ns},  {"algbw_gbps", a.algbw_gbps},
                      {"busbw_gbps", a.busbw_gbps}};
  }
  // Always, one kind too: metrics name their kind ("incast.slowdown_p99") and a reader
  // of this JSON (tuning through a controller) must find it.
  if (!s.by_kind.empty()) {
    nlohmann::ordered_json k;
    for (const auto& [kind, stats] : s.by_kind) k[kind] = flow_json(stats);
    j["by_kind"] = k;
  }
  j["simulated_ns"] = s.simulated_ns;
  j["start_skew_ns"] = s.start_skew_ns;
  if (!s.start_offsets_ns.empty()) {
    j["start_offsets_ns"] = s.start_offsets_ns;
    j["start_source"] = s.start_source;
  }
  if (!s.start_clock.empty()) {
    j["start_clock"] = s.start_clock;
    j["start_clock_uncertainty_ns"] = s.start_clock_uncertainty_ns;
  }
  if (!s.degraded.empty()) {
    j["degraded"] = true;
    j["degraded_reasons"] = s.degraded;
  }
  if (s.capture) {
    if (!s.capture->file.empty()) j["capture_file"] = s.capture->file;
    j["capture"] = {{"frames", s.capture->captured}, {"mirrored", s.capture->mirrored}, {"loss", s.capture->loss}};
  }
  return j;
}

}  // namespace

double percentile(std::span<const double> sorted, double p) { return nearest_rank(sorted, p); }
std::int64_t percentile(std::span<const std::int64_t> sorted, double p) { return nearest_rank(sorted, p); }

flow_stats flow_statistics(std::span<const flow_record> flows) {
  flow_stats s;
  std::vector<std::int64_t> fct;
  std::vector<double> slowdown;
  for (const flow_record& f : flows) {
    ++s.flows;
    if (!f.completed()) continue;
    ++s.completed;
    fct.push_back(f.fct_ns);
    if (f.ideal_fct_ns > 0) slowdown.push_back(f.slowdown());
  }
  std::sort(fct.begin(), fct.end());
  std::sort(slowdown.begin(), slowdown.end());
  s.fct_p50_ns = percentile(std::span<const std::int64_t>(fct), 50);
  s.fct_p99_ns = percentile(std::span<const std::int64_t>(fct), 99);
  s.fct_max_ns = fct.empty() ? 0 : fct.back();
  s.slowdown_p50 = percentile(std::span<const double>(slowdown), 50);
  s.slowdown_p99 = percentile(std::span<const double>(slowdown), 99);
  return s;
}

run_summary summarize(const std::vector<const run_records*>& runs, const std::vector<std::uint64_t>& seeds) {
  run_summary s;
  s.seeds = seeds;
  std::vector<flow_record> pooled;
  std::map<std::string, std::vector<flow_record>> kinds;
  double ar_time_sum = 0;
  for (const run_records* r : runs) {
    pooled.insert(pooled.end(), r->flows.begin(), r->flows.end());
    for (const flow_record& f : r->flows) kinds[to_string(f.kind)].push_back(f);
    s.pause_frames += r->totals.pfc_pause_frames;
    s.paused_ns += r->totals.paused_ns;
    s.ce_marked += r->totals.ce_marked;
    s.cnp += r->totals.cnps;
    s.drops += r->totals.drops;
    s.retransmits += r->totals.retransmits;
    s.cnp_measured = s.cnp_measured && r->totals.cnps_measured;
    s.retransmits_measured = s.retransmits_measured && r->totals.retransmits_measured;
    s.simulated_ns = std::max(s.simulated_ns, r->simulated_ns);
    s.degraded.insert(s.degraded.end(), r->degraded.begin(), r->degraded.end());
    s.start_skew_ns = std::max(s.start_skew_ns, start_skew_ns(r->start_offsets_ns));
    if (s.start_offsets_ns.empty() && !r->start_offsets_ns.empty()) {
      s.start_offsets_ns = r->start_offsets_ns;
      s.start_source = r->start_source;
    }
    if (!r->start_clock.empty()) {
      if (s.start_clock.empty()) s.start_clock = r->start_clock;
      s.start_clock_uncertainty_ns = std::max(s.start_clock_uncertainty_ns, r->start_clock_uncertainty_ns);
    }
    if (r->capture) {
      if (!s.capture) {
        s.capture = run_records::capture_info{};
        // The name in the run directory, where the summary and the report sit.
        s.capture->file = std::filesystem::path(r->capture->file).filename().string();
      }
      s.capture->mirrored += r->capture->mirrored;
      s.capture->captured += r->capture->captured;
      s.capture->loss += r->capture->loss;
    }
    for (const allreduce_result& a : r->allreduce) {
      if (!s.allreduce) s.allreduce = allreduce_stats{a.algorithm, a.ranks, a.bytes, 0, 0, 0, 0};
      ++s.allreduce->iterations;
      ar_time_sum += static_cast<double>(a.time_ns);
    }
  }
  s.all = flow_statistics(pooled);
  for (const auto& [kind, flows] : kinds) s.by_kind[kind] = flow_statistics(flows);
  if (s.allreduce && s.allreduce->iterations > 0) {
    allreduce_stats& a = *s.allreduce;
    a.time_mean_ns = ar_time_sum / static_cast<double>(a.iterations);
    if (a.time_mean_ns > 0) {
      a.algbw_gbps = static_cast<double>(a.bytes) * 8.0 / a.time_mean_ns;
      a.busbw_gbps = a.algbw_gbps * 2.0 * (a.ranks - 1) / a.ranks;
    }
  }
  return s;
}

std::string summary_json(const summary_header& header, const run_summary& aggregate,
                         const std::vector<run_summary>& each) {
  nlohmann::ordered_json j;
  j["run_id"] = header.run_id;
  j["backend"] = header.backend;
  j["name"] = header.name;
  j["seeds"] = aggregate.seeds;
  j.update(summary_object(aggregate));
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const run_summary& r : each) {
    nlohmann::ordered_json one;
    one["seed"] = r.seeds.empty() ? 0 : r.seeds.front();
    one.update(summary_object(r));
    runs.push_back(std::move(one));
  }
  j["runs"] = std::move(runs);
  return j.dump(2);
}

namespace {

flow_stats flow_from(const nlohmann::json& j) {
  flow_stats f;
  f.flows = j.value("flows", std::uint64_t{0});
  f.completed = j.value("completed", std::uint64_t{0});
  if (j.contains("fct_ns")) {
    f.fct_p50_ns = j["fct_ns"].value("p50", std::int64_t{0});
    f.fct_p99_ns = j["fct_ns"].value("p99", std::int64_t{0});
    f.fct_max_ns = j["fct_ns"].value("max", std::int64_t{0});
  }
  if (j.contains("slowdown")) {
    f.slowdown_p50 = j["slowdown"].value("p50", 0.0);
    f.slowdown_p99 = j["slowdown"].value("p99", 0.0);
  }
  return f;
}

run_summary summary_from(const nlohmann::json& j) {
  run_summary s;
  s.all = flow_from(j);
  if (j.contains("seeds"))
    s.seeds = j["seeds"].get<std::vector<std::uint64_t>>();
  else if (j.contains("seed"))
    s.seeds = {j["seed"].get<std::uint64_t>()};
  if (j.contains("pfc")) {
    s.pause_frames = j["pfc"].value("pause_frames", std::uint64_t{0});
    s.paused_ns = j["pfc"].value("paused_ns", std::int64_t{0});
  }
  if (j.contains("ecn")) s.ce_marked = j["ecn"].value("ce_marked", std::uint64_t{0});
  // null: not measured (a real lab's NICs without the counter).
  s.cnp_measured = !(j.contains("cnp") && j["cnp"].is_null());
  s.cnp = s.cnp_measured ? j.value("cnp", std::uint64_t{0}) : 0;
  s.drops = j.value("drops", std::uint64_t{0});
  s.retransmits_measured = !(j.contains("retransmits") && j["retransmits"].is_null());
  s.retransmits = s.retransmits_measured ? j.value("retransmits", std::uint64_t{0}) : 0;
  s.simulated_ns = j.value("simulated_ns", std::int64_t{0});
  s.start_skew_ns = j.value("start_skew_ns", std::int64_t{0});
  if (j.contains("start_offsets_ns")) {
    s.start_offsets_ns = j["start_offsets_ns"].get<std::map<std::string, std::int64_t>>();
    s.start_source = j.value("start_source", std::string());
  }
  s.start_clock = j.value("start_clock", std::string());
  s.start_clock_uncertainty_ns = j.value("start_clock_uncertainty_ns", std::int64_t{0});
  if (j.contains("allreduce")) {
    const auto& a = j["allreduce"];
    allreduce_stats x;
    x.algorithm = a.value("algorithm", std::string());
    x.ranks = a.value("ranks", std::uint32_t{0});
    x.bytes = a.value("bytes", std::uint64_t{0});
    x.iterations = a.value("iterations", std::uint64_t{0});
    x.time_mean_ns = a.value("time_ns", 0.0);
    x.algbw_gbps = a.value("algbw_gbps", 0.0);
    x.busbw_gbps = a.value("busbw_gbps", 0.0);
    s.allreduce = x;
  }
  if (j.contains("by_kind"))
    for (const auto& [kind, stats] : j["by_kind"].items()) s.by_kind[kind] = flow_from(stats);
  if (j.contains("degraded_reasons")) s.degraded = j["degraded_reasons"].get<std::vector<std::string>>();
  if (j.contains("capture")) {
    s.capture = run_records::capture_info{j.value("capture_file", std::string()),
                                          j["capture"].value("mirrored", std::uint64_t{0}),
                                          j["capture"].value("frames", std::uint64_t{0}),
                                          j["capture"].value("loss", std::uint64_t{0})};
  }
  return s;
}

}  // namespace

result<parsed_summary> parse_summary_json(std::string_view text) {
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object()) return status(error_code::malformed_input, "run summary: not a JSON object");
    parsed_summary out;
    out.aggregate = summary_from(j);
    if (j.contains("runs"))
      for (const auto& r : j["runs"]) out.each.push_back(summary_from(r));
    return out;
  } catch (const nlohmann::json::exception& e) {
    return status(error_code::malformed_input, std::string("run summary: ") + e.what());
  }
}

}  // namespace rocelab::experiments
