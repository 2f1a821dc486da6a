#pragma once
// One stored run, from begin to its ending: the one way every front end keeps a run it
// ran in the run store (rocelab run through the controller, tuning trials, baselines,
// verify and compare runs, Python's Lab.run).
//
//   auto session = run_session::begin(store, new_run);   // the run is `running`
//   session->append_repeat(0, records0);                  // records stamped repeat 0
//   session->append_repeat(1, records1);
//   session->finish_ran(repeats);                         // completed or partial
//
// - append_repeat stamps every record with the repeat's index (set_repeat, records.hpp)
//   before the store appends them, so a load() of the run tells its repeats apart. The
//   records are stamped in place: what the caller keeps (a run directory, a summary) says
//   the same repeats as the store.
// - The ending: finish_ran decides completed or partial from the records
//   (store/run_ending.hpp); finish_interrupted for a run its requester cut short;
//   finish_failed for one that did not run to its end. The first finish ends the session,
//   whether or not the store took it (a refusal is the finish's error, not asked again).
// - A session destroyed unfinished (an early return, an exception) marks its run `failed`
//   with the note "its session ended before the run was finished": the caller stopped for
//   a reason of its own, which is an error, not a requester's cancel (interrupted is what
//   the store gives runs whose process is gone). The destructor logs a store that refuses.
//
// Threading: a session uses its store from the calling thread only; a caller that shares
// the store between threads (the controller) calls the session under its lock, and ends it
// there (the destructor writes too).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/store/run_ending.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

class run_session {
 public:
  // begin_run. Errors: the store's, naming the run.
  [[nodiscard]] static result<run_session> begin(store::run_store& store, const store::new_run& run);

  run_session(run_session&& other) noexcept;
  run_session& operator=(run_session&& other) noexcept;
  run_session(const run_session&) = delete;
  run_session& operator=(const run_session&) = delete;
  ~run_session();

  [[nodiscard]] std::int64_t id() const noexcept { return id_; }
  [[nodiscard]] bool finished() const noexcept { return finished_; }
  [[nodiscard]] store::run_store& store() const noexcept { return *store_; }

  // set_repeat(records, index), then the store's append (in `options`' batches, stopping
  // at its cancel: error_code::cancelled, the rows before it kept). Errors: the store's,
  // naming the run and the repeat; invalid_argument after the session ended.
  [[nodiscard]] status append_repeat(std::uint32_t index, run_records& records,
                                     const store::append_options& options = {});

  // Completed or partial from `repeats` (every repeat the run ran), as store::finish_ran.
  [[nodiscard]] result<store::run_ending> finish_ran(const std::vector<const run_records*>& repeats);
  [[nodiscard]] result<store::run_ending> finish_ran(const std::vector<run_records>& repeats);
  [[nodiscard]] status finish_interrupted(std::string_view why);
  [[nodiscard]] status finish_failed(std::string_view why);

  // The note a session destroyed unfinished leaves on its run.
  static constexpr std::string_view unfinished_note = "its session ended before the run was finished";

 private:
  run_session(store::run_store& store, std::int64_t id) noexcept : store_(&store), id_(id), finished_(false) {}
  [[nodiscard]] status finish_as(store::run_status final_status, std::string_view note);
  [[nodiscard]] status ended_error() const;
  void abandon() noexcept;  // finishes an unfinished run failed (unfinished_note), logging a refusal

  store::run_store* store_ = nullptr;
  std::int64_t id_ = 0;
  bool finished_ = true;  // a moved-from session has nothing to finish
};

}  // namespace rocelab::experiments
