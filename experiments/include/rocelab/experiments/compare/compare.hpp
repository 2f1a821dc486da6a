#pragma once
// The fabric decision report (`rocelab compare SPEC --fabrics ib,roce-tuned,roce-default`):
// the customer's workload run on the twin once per fabric (InfiniBand, RoCEv2 with tuned
// ECN/DCQCN thresholds, RoCEv2 as configured), with what each fabric delivers and costs.
//
// Per fabric, three scenarios from the spec's workload sections, each run alone:
// - allreduce: algorithm and bus bandwidth (nccl-tests), completion time, link
//   utilisation, and the share of a training step spent communicating for a given
//   compute time per step (no overlap of compute and communication), so the MFU impact
//   is visible: MFU factor = compute / (compute + communication);
// - incast: FCT p50/p99;
// - background: FCT p50/p99 of the small messages (<= small_message_bytes) under the
//   background load, i.e. the tail latency a latency-sensitive message sees;
// and in all of them pauses (RoCE: PFC pause time and frames) or credit stalls
// (InfiniBand: time a VL waited for credits), drops, marks, retransmissions.
//
// Fabrics come from switch profiles (examples/fabric-profiles/*.yaml, compare_profiles.hpp):
// latency, buffer per port, prices. "roce-tuned" first searches the ECN thresholds with
// rocelab tune's optimiser (tuning.hpp) on the incast and background workloads together,
// then runs every scenario with the best trial's values.
// Cost: the topology the twin ran (topology_cost: the spec's single switch or leaf-spine,
// its switch count and ports against the profile's radix, NICs and optics at the spec's
// link and uplink speeds), per GPU (one NIC per GPU), and per Gb/s of delivered bus
// bandwidth.
// Seeds: every scenario of every fabric runs `seeds` seeds (at least 3; spec.repeats if
// more), the same seeds on every fabric. Each metric gets the 95% confidence interval of
// its mean over the seeds (Student's t, mean_ci95), and each verdict ("highest bus
// bandwidth", "cheapest per delivered Gb/s", ...) compares the best fabric with every
// other by the paired difference over their common seeds: when that difference's 95% CI
// includes zero, or its mean is within tie_tolerance of the best's mean, the two are a
// tie, and the verdict says so instead of naming a winner.
// roce-tuned's search trials run spec.repeats seeds (the search, not the answer).
// Scale sweep: the all-reduce scenario at each host count of `scale_hosts` on a leaf-spine
// (priced as that leaf-spine), and the host counts where the cheapest fabric per
// delivered bandwidth changes (the crossover points; a point whose cheapest is tied with
// another is no crossover).
//
// Runs go to the run store when one is given (one stored run per fabric x scenario x
// seed, named "compare/<fabric>/<scenario>", parameters carrying fabric, profile and
// scenario), so Python and later reports read them like any other run.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/compare/compare_profiles.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::store {
class run_store;
}

namespace rocelab::experiments {

struct compare_settings {
  // Fabric names: ib, roce-tuned, roce-default, or any name of a profile in `profiles`.
  std::vector<std::string> fabrics{"ib", "roce-tuned", "roce-default"};
  // Profile per fabric name; load_profiles() reads the missing ones from profiles_dir
  // (default_profile_file names them).
  std::map<std::string, fabric_profile_file> profiles;
  std::string profiles_dir = "examples/fabric-profiles";
  double compute_ms_per_step = 50;           // GPU compute per training step
  std::int64_t small_message_bytes = 64 * 1024;
  std::uint32_t tune_budget = 8;             // roce-tuned: trials of rocelab tune's search
  tuning_method tune_method = tuning_method::bayes;
  // Scale sweep: host counts on a leaf-spine of hosts_per_leaf hosts per leaf, as many
  // spines as hosts per leaf divided by the oversubscription; empty: no sweep.
  std::vector<std::uint32_t> scale_hosts;
  std::uint32_t scale_hosts_per_leaf = 8;
  double scale_oversubscription = 1.0;
  std::int64_t scale_allreduce_bytes = 0;    // 0: the spec's all-reduce size
  // Seeds per fabric and scenario (and scale point): spec.seed, spec.seed + 1, ...; at
  // least 3 (fewer is an error), spec.repeats when that is more.
  std::uint32_t seeds = 3;
  // A verdict is also a tie when the paired mean difference is within this fraction of
  // the best's mean: a metric the seeds do not move (the twin's all-reduce is the same on
  // every seed) has a CI of no width, which cannot tell a model-level sliver from a win.
  double tie_tolerance = 0.01;
  // Polled while the twin runs and between runs; once it returns true the comparison
  // stops with error_code::cancelled (runs already stored stay). Python's Ctrl-C.
  std::function<bool()> cancel_requested;
  // Where each twin run goes (an executor's trial runner: workers here or on Slurm): each
  // run is sent as its resolved spec with one repeat at its seed, which gives the records
  // the twin gives here. Empty: the twin runs in this process. `parallelism` runs of the
  // scale sweep go at once (their results are stored and reported in the same order
  // either way, so the report does not depend on it).
  trial_runner runner;
  std::uint32_t parallelism = 1;
};

struct fabric_metrics {
  std::string fabric;   // the name asked for
  std::string profile;  // the profile's name
  std::string link;     // roce | infiniband | uec
  std::string routing;  // ecmp | adaptive
  std::string congestion;
  std::map<std::string, std::string> settings;  // tuned or profile-applied spec values
  std::string tuning_note;                      // how roce-tuned was tuned
  // allreduce
  bool has_allreduce = false;
  double algbw_gbps = 0, busbw_gbps = 0;
  double allreduce_time_ns = 0;
  double link_util_mean = 0, link_util_max = 0;  // switch ports that carried traffic
  double step_ms = 0, comm_share = 0, mfu_factor = 0;
  // incast
  bool has_incast = false;
  std::int64_t incast_fct_p50_ns = 0, incast_fct_p99_ns = 0;
  // background
  bool has_background = false;
  std::uint64_t small_messages = 0;
  std::int64_t small_fct_p50_ns = 0, small_fct_p99_ns = 0;
  std::vector<double> incast_fct_us, small_fct_us;  // sorted, for the CDF plots
  // all scenarios together
  std::uint64_t pause_frames = 0;
  std::int64_t paused_ns = 0;  // PFC pauses (RoCE) or credit stalls (InfiniBand)
  std::uint64_t pause_intervals = 0;
  std::uint64_t drops = 0, retransmits = 0, ce_marked = 0, cnps = 0;
  std::uint64_t trims = 0;  // packets switches cut to their header (UEC trimming)
  std::uint64_t incomplete_flows = 0;
  // cost
  cluster_cost cost;
  double usd_per_busbw_gbps = 0;  // cost per GPU / bus bandwidth per GPU
  std::vector<std::int64_t> run_ids;  // in the store
  // Per seed (in `seeds` order) the value of each metric of compare_metric_names() the
  // fabric measured, and the 95% CI of its mean over the seeds.
  std::vector<std::uint64_t> seeds;
  std::map<std::string, std::vector<double>> per_seed;
  std::map<std::string, confidence_interval> ci;
};

// The metrics with per-seed values and CIs: allreduce.busbw_gbps, allreduce.algbw_gbps,
// allreduce.time_ns, usd_per_busbw_gbps, incast.fct_p50_ns, incast.fct_p99_ns,
// small.fct_p50_ns, small.fct_p99_ns.
[[nodiscard]] const std::vector<std::string>& compare_metric_names();

// A verdict on one metric: the fabric with the best mean, and which others are tied with
// it: the paired difference over common seeds has a 95% CI that includes zero (noise), or
// a mean within tie_tolerance x |best's mean| (a sliver the model does not resolve).
struct metric_verdict {
  std::string metric;  // a compare_metric_names() name
  std::string label;   // "highest all-reduce bus bandwidth", ...
  bool higher_better = false;
  double tie_tolerance = 0;
  std::string best;
  std::vector<std::string> tied;                       // within noise of best, in fabric order
  std::map<std::string, confidence_interval> vs_best;  // other fabric -> CI of (other - best), paired
  [[nodiscard]] bool tie() const { return !tied.empty(); }
};
// The verdict of `metric` over the fabrics that measured it; nullopt when none did. Fabrics
// with fewer than 2 common seeds are a tie (no noise estimate).
[[nodiscard]] std::optional<metric_verdict> judge(const std::vector<fabric_metrics>& fabrics, const std::string& metric,
                                                  const std::string& label, bool higher_better,
                                                  double tie_tolerance = 0.01);
// The verdict in one sentence, with the best's mean and CI and each other's paired
// difference ("tie: uec and roce-tuned are within noise (...)" or "roce-tuned (...); ib 12.0% lower, 95% CI ...").
[[nodiscard]] std::string verdict_text(const metric_verdict& v, const std::vector<fabric_metrics>& fabrics);

struct scale_point {
  std::uint32_t hosts = 0;
  std::int64_t allreduce_bytes = 0;  // the all-reduce size its runs used (scale_allreduce_bytes or the spec's)
  std::map<std::string, double> busbw_gbps;          // per fabric
  std::map<std::string, double> cost_per_gpu_usd;    // per fabric
  std::map<std::string, double> usd_per_busbw_gbps;  // per fabric
  std::string cheapest;                              // lowest mean usd_per_busbw_gbps
  std::vector<std::string> cheapest_tied;            // within noise of the cheapest (judge())
  std::map<std::string, cluster_cost> cost;          // per fabric: the leaf-spine priced
};

struct compare_result {
  std::string name;      // the spec's name
  std::uint32_t hosts = 0;
  double link_gbps = 0;
  compare_settings settings;
  std::vector<fabric_metrics> fabrics;
  std::uint32_t seeds = 0;  // per fabric and scenario, as run
  // The verdicts on the metrics the fabrics measured: bus bandwidth, cost per delivered
  // Gb/s, incast p99, small-message p99.
  std::vector<metric_verdict> verdicts;
  std::vector<scale_point> scale;
  // "at 512 hosts roce-tuned becomes cheaper per delivered Gb/s than ib" ...; empty: none.
  std::vector<std::string> crossovers;
};

// Progress lines, one per step as it starts (a tuning trial: as it ends), each
// "step i of n: " and what the step is ("step 3 of 14: ib: incast"); may be empty.
using compare_progress = std::function<void(const std::string&)>;

// The n of those lines: per fabric, roce-tuned's tuning trials (planned_trials of its
// sweep) and one step per workload the spec has (all-reduce, incast, background), then
// one per scale point and fabric. Counted before anything runs; a comparison that stops
// early (an error, a cancel) has run fewer.
[[nodiscard]] std::uint32_t compare_steps(const experiment_spec& spec, const compare_settings& settings);

// Runs the comparison. `store` may be null. Errors: an invalid spec or profile, a
// scenario that cannot run (naming fabric and scenario), a store failure.
[[nodiscard]] result<compare_result> run_compare(const experiment_spec& spec, const compare_settings& settings,
                                                 store::run_store* store = nullptr,
                                                 const compare_progress& progress = {});

// The report's data as one JSON object (fabrics[], scale[], crossovers[]).
[[nodiscard]] std::string compare_json(const compare_result& r);
// A self-contained HTML page: the verdict, the per-fabric table, cost, the scale sweep.
[[nodiscard]] std::string compare_html(const compare_result& r);

// Splits a compare spec file: the experiment spec (loadable by load_spec, line numbers
// kept) and its optional top-level `compare:` section applied onto `settings` (profile
// paths relative to the spec file). Errors name file:line.
[[nodiscard]] result<experiment_spec> load_compare_spec(const std::string& path, compare_settings& settings);
// Loads the profile of every fabric in settings.fabrics that has none yet.
[[nodiscard]] status load_profiles(compare_settings& settings);

}  // namespace rocelab::experiments
