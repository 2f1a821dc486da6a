#pragma once
// Buffer validation (`rocelab buffers`): is this switch's packet buffer enough for this
// workload? Per switch profile (examples/fabric-profiles/*.yaml: total buffer, cell,
// ports and speed, alpha, headroom policy) and the spec's workload, on the twin:
//
// - PFC headroom per port and lossless priority group (headroom.hpp: two cable delays,
//   two MTUs, the PFC frame, the peer's response time, PHY delays), and what reserving it
//   costs: per_port reserves it on every port, shared pools it with an oversubscription
//   factor (one port's worst case rarely meets all the others'); what is left is the
//   shared buffer.
// - The largest incast degree that stays loss-free, with PFC and without: the spec's
//   incast (flow size, rounds) with N senders into one port of a switch of this profile,
//   N searched by bisection up to the radix minus one (loss grows with N: a larger fan-in
//   brings more bytes at once into the same buffer).
// - The buffer needed to keep the spec's p99 FCT under a target, with every other setting
//   from the profile and the spec. p99 over buffer size is not monotone (a smaller buffer
//   can pause earlier and finish sooner), so the search never bisects on it as if it
//   were: from the top of the range (`max_buffer_factor` x the profile's buffer, or the
//   profile's own when that meets the target) it steps down a log grid
//   (`grid_steps_per_octave`) until a size misses, then bisects between that miss and the
//   last size that met, to `buffer_tolerance`. The answer is the smallest probed size at
//   and above which every probed size met the target: the pooled p99 made monotone
//   (its running maximum from the largest size down) is under the target there.
//
// Every probe pools `seeds_per_probe` seeds (spec.seed, spec.seed + 1, ...; more when
// spec.repeats asks for more): drops, completion and the p99 are over all of them.
//
// A probe that dropped with PFC on is a headroom shortfall: the lossless class lost
// packets, so the headroom the profile reserves (or the switch's XOFF) does not cover
// what arrives after a pause. It is never an answer: the buffer search stops there with
// target_outcome::headroom_shortfall, and every such probe (of any search) is listed in
// profile_buffers::shortfalls.
//
// The switch of each twin run is the profile's: port speed, cell, alpha, port-to-port
// latency, cable (as the links' propagation delay), and the buffer left after the
// headroom the profile's other ports hold (the run only has spec.topology.hosts ports;
// the others exist and keep their reserve). Pure library over the twin; no files.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/compare/compare_profiles.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments {

struct buffers_settings {
  std::int64_t p99_target_ns = 0;          // 0: no buffer-for-target search
  std::int64_t min_buffer_bytes = 256 * 1024;
  double max_buffer_factor = 8;            // search up to this x the profile's buffer
  double buffer_tolerance = 0.05;          // bisection stops when hi/lo - 1 is below this
  std::uint32_t grid_steps_per_octave = 2; // the buffer search's downward grid: sizes 2^(1/n) apart
  std::uint32_t seeds_per_probe = 3;       // seeds pooled per probe (at least 3; spec.repeats if more)
  std::uint32_t max_degree = 0;            // 0: the radix minus one
  std::function<bool()> cancel_requested;  // polled between twin runs (and inside them)
  // Where each probe's twin runs go (an executor's trial runner: workers here or on Slurm);
  // empty: in this process. The search is the same either way.
  trial_runner runner;
};

struct headroom_figures {
  std::int64_t per_pg_bytes = 0;       // one lossless PG on one port
  std::int64_t cable_bytes = 0, mtu_bytes = 0, response_bytes = 0, phy_bytes = 0, pfc_frame_bytes = 0;
  std::uint32_t lossless_pgs = 0;      // per port (the spec's PFC priorities)
  std::int64_t reserved_bytes = 0;     // the whole switch, after the policy
  double reserved_share = 0;           // of the buffer
  std::int64_t shared_bytes = 0;       // buffer - reserved
};

// One twin run of the searches: what was tried and what it gave.
struct buffer_probe {
  std::string search;   // "degree_pfc", "degree_no_pfc", "buffer_for_target"
  std::uint32_t degree = 0;
  std::int64_t buffer_bytes = 0;
  std::uint32_t seeds = 0;  // runs pooled in
  bool pfc = false;         // PFC on for the probe's run
  std::uint64_t drops = 0, pause_frames = 0;  // summed over the seeds
  std::uint64_t headroom_drops = 0;           // of the drops: a lossless PG's headroom ran out
  std::int64_t fct_p99_ns = 0;                // pooled over the seeds' flows
  bool complete = true;  // every flow finished
  // PFC on and packets dropped: the lossless class lost packets (see the file comment).
  [[nodiscard]] bool headroom_shortfall() const { return pfc && drops > 0; }
};

// What the buffer search for the p99 target concluded.
enum class target_outcome {
  not_searched,        // no target given
  met,                 // buffer_for_target_bytes
  at_most,             // the search's smallest size already met it: buffer_for_target_bytes or less
  not_reachable,       // the search's largest size misses it
  headroom_shortfall,  // a probe dropped with PFC on: no size is an answer
};
[[nodiscard]] const char* to_string(target_outcome o);

struct profile_buffers {
  std::string profile;  // its name
  std::string path;
  double port_gbps = 0;
  std::uint32_t ports = 0;
  std::int64_t buffer_bytes = 0;
  std::int64_t buffer_per_port_bytes = 0;
  headroom_figures headroom;
  std::uint32_t max_degree_searched = 0;
  std::uint32_t lossless_degree_pfc = 0;     // largest N with zero drops, PFC on
  std::uint32_t lossless_degree_no_pfc = 0;  // the same with PFC off (ECN as the spec says)
  std::uint64_t pauses_at_max_degree = 0;    // PFC frames at the largest degree with PFC
  // Buffer for the p99 target (when one was given).
  target_outcome target = target_outcome::not_searched;
  bool target_met_by_profile = false;        // the profile's own buffer meets it
  std::int64_t buffer_for_target_bytes = 0;  // met / at_most: the answer (within the tolerance); else 0
  std::int64_t p99_at_profile_ns = 0;        // the spec's workload on the profile as is (pooled)
  std::vector<buffer_probe> probes;
  std::vector<buffer_probe> shortfalls;      // the probes that dropped with PFC on, in run order
};

// One line naming a profile's headroom shortfall: the lossy PFC-on probes (drops, seeds)
// and the headroom figures; empty when there is none.
[[nodiscard]] std::string shortfall_text(const profile_buffers& p);
// The buffer search's answer in words: "1.5 MiB", "at most 512.0 KiB", "not reachable",
// "headroom shortfall", "-" (not searched).
[[nodiscard]] std::string target_text(const profile_buffers& p);
// How the answer was reached: seeds pooled and the monotone rule (for report notes).
[[nodiscard]] std::string target_rule_text(std::uint32_t seeds_per_probe);

struct buffers_result {
  std::string spec_name;
  std::uint32_t seeds_per_probe = 0;  // as run
  std::string target_rule;            // target_rule_text() of the settings used
  std::uint32_t incast_flow_bytes = 0;
  std::int64_t p99_target_ns = 0;
  std::vector<profile_buffers> profiles;
};

// The headroom of `profile` for the spec's MTU and lossless priorities (no twin runs).
[[nodiscard]] headroom_figures profile_headroom(const fabric_profile_file& profile, const experiment_spec& spec);

// The spec as it runs on a switch of `profile`: topology.link_gbps, switch buffer, cell,
// dynamic threshold, latency and link delay from the profile.
[[nodiscard]] result<experiment_spec> spec_on_profile(const experiment_spec& spec, const fabric_profile_file& profile);

// The steps validate_buffers() takes: per profile, the loss-free degree search with PFC,
// the one without, and the buffer search for the p99 target when there is one. A step is
// a bisection of twin runs (how many depends on what they find), so the step, not the
// run, is what is counted up front.
[[nodiscard]] std::uint32_t buffers_steps(std::size_t profiles, const buffers_settings& settings);

// Runs the validation. The spec needs an incast workload (for the degree search); the
// p99 target applies to the spec's whole workload. `progress` gets a line per twin run,
// "step i of n: <profile>: <probe and outcome>", n from buffers_steps(). Errors: invalid
// spec or profile, a twin failure (naming profile and probe), error_code::cancelled.
[[nodiscard]] result<buffers_result> validate_buffers(const experiment_spec& spec,
                                                      const std::vector<fabric_profile_file>& profiles,
                                                      const buffers_settings& settings,
                                                      const std::function<void(const std::string&)>& progress = {});

[[nodiscard]] std::string buffers_json(const buffers_result& r);
// A self-contained page: the side-by-side table and SVG plots (lossless degree per
// profile, headroom reserve against the buffer, p99 FCT against buffer size).
[[nodiscard]] std::string buffers_html(const buffers_result& r);

}  // namespace rocelab::experiments
