#pragma once
// The backend seam: where a resolved spec runs. Every backend yields the same records
// (run_records per repeat, seeds seed .. seed+repeats-1), so summaries, analysis, tuning,
// reports and Python never ask which backend ran.
//
// Backends are objects registered by name in a backend_registry; the spec's `backend`
// field picks one there. The experiments core registers `twin` (core_backends());
// adapters register theirs with add() (the virtual lab: experiments/lab/local_backends.hpp;
// the real lab: the controller). A registry is a value the caller builds, so options a
// backend needs (a lab name, where its NICs run) live in the backend object itself.
//
// Threading: run() is const and may be called from several threads at once when the
// backend allows it (the twin does; the virtual lab brings up one lab per run and is run
// with parallelism 1). A registry is copied cheaply (backends are shared, immutable).

#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

struct experiment_result {
  std::vector<std::uint64_t> seeds;
  std::vector<run_records> repeats;  // one per seed
};

// How far a real-time repeat is: messages completed of those posted so far, and the
// PFC frames the fabric has sent since the repeat started where a live source counts
// them (the virtual lab's switch), none where nothing does.
struct run_progress {
  std::uint64_t completed = 0;
  std::uint64_t posted = 0;
  std::optional<std::uint64_t> pause_frames;
};

struct run_hooks {
  // Called before each repeat starts with (repeat index, seed): progress output.
  std::function<void(std::uint32_t, std::uint64_t)> on_repeat;
  // Polled while a repeat runs; once it returns true the current repeat ends where it is
  // (its records so far are kept, unfinished flows incomplete) and no further repeat
  // starts. The caller that answered true knows the result is partial.
  std::function<bool()> cancel_requested;
  // Told while a real-time repeat runs (the virtual lab: every 20 ms at most) how far its
  // workload is (run_progress). Backends in virtual time, which finish faster than
  // anyone watches, do not call it.
  std::function<void(const run_progress&)> on_progress;
};

class backend {
 public:
  virtual ~backend() = default;

  // Runs every repeat of `spec` (validated first). A repeat that fails names its index and seed.
  [[nodiscard]] virtual result<experiment_result> run(const experiment_spec& spec, const run_hooks& hooks) const = 0;

  // The spec as this backend runs it (limits the backend raises, e.g. the virtual lab's
  // retransmit timeout and headroom), for the twin to predict one of its runs.
  [[nodiscard]] virtual experiment_spec as_run_here(const experiment_spec& spec) const { return spec; }
};

class backend_registry {
 public:
  // Registers `b` under `name`. Errors: an empty name or no backend (invalid_argument), a
  // name already registered (invalid_argument).
  [[nodiscard]] status add(std::string name, std::shared_ptr<const backend> b);

  // The backend registered as `name`; unsupported, listing the registered names, if none.
  [[nodiscard]] result<std::shared_ptr<const backend>> find(std::string_view name) const;

  // The registered names, sorted.
  [[nodiscard]] std::vector<std::string> names() const;

  // Runs `spec` on the backend its `backend` field names.
  [[nodiscard]] result<experiment_result> run(const experiment_spec& spec, const run_hooks& hooks = {}) const;

  // `spec` as the backend its `backend` field names runs it (backend::as_run_here); `spec`
  // itself when no such backend is registered. What a run's record keeps, so that the
  // record says what ran and a twin run from it runs what the lab ran.
  [[nodiscard]] experiment_spec as_run_here(const experiment_spec& spec) const;

 private:
  std::map<std::string, std::shared_ptr<const backend>, std::less<>> backends_;
};

// A registry holding the experiments core's backends: `twin`.
[[nodiscard]] backend_registry core_backends();

// The repeat loop every local backend shares: validates `spec`, then for each repeat i
// (seed spec.seed + i) checks the cancel hook (from the second repeat on), calls
// on_repeat and runs `one_repeat(i, seed)`, whose error ends the run as it is.
// repeat_context(i, seed) is the context a backend gives its repeat's errors.
using repeat_runner = std::function<result<run_records>(std::uint32_t index, std::uint64_t seed)>;
[[nodiscard]] result<experiment_result> run_repeats(const experiment_spec& spec, const run_hooks& hooks,
                                                    const repeat_runner& one_repeat);
[[nodiscard]] std::string repeat_context(std::uint32_t index, std::uint64_t seed);

}  // namespace rocelab::experiments
