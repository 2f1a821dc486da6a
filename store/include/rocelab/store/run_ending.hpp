#pragma once
// How a run that ran to its end is finished in the store: completed, or partial when its
// records show it is not whole. The one place that decides it, for every caller that
// stores a run it ran (the controller's runs, so `rocelab run`'s; tuning trials, verify
// and compare runs; Python's runs and trials). A run cut short by its requester is
// `interrupted` and one that did not run `failed`: those the caller knows, not the records.
//
// Partial when, over every repeat:
// - fewer of its flow records completed than it has (a flow without an end did not
//   complete: the twin's stop_ns came first, the virtual lab's time limit, a lost host), or
// - a host was lost during the run (run_records::lost_hosts).
// The note says how much: "0 of 16 flows completed", then the lost hosts; a completed
// run's note names why it is degraded (run_records::degraded), if it is; otherwise empty.
//
// Pure: no I/O except finish_ran's one store call.

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::store {

struct run_ending {
  run_status status = run_status::completed;  // completed or partial
  std::uint64_t flows = 0;                    // flow records over every repeat
  std::uint64_t completed = 0;                // of them, completed
  std::string note;                           // the store's note (run_info::error) for the run
};

[[nodiscard]] run_ending ending_of(const std::vector<const run_records*>& repeats);
[[nodiscard]] run_ending ending_of(const std::vector<run_records>& repeats);

// ending_of(repeats), then store.finish(run, its status, its note). Errors: the store's,
// with the run named.
[[nodiscard]] result<run_ending> finish_ran(run_store& store, std::int64_t run, const std::vector<run_records>& repeats);
[[nodiscard]] result<run_ending> finish_ran(run_store& store, std::int64_t run,
                                            const std::vector<const run_records*>& repeats);

}  // namespace rocelab::store
