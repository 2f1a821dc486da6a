#pragma once
// A run whole, as a store holds it: what begin_run, add_agent, append and finish were
// given. A run directory keeps its run in a store file of its own (records.db), so a run
// the main store could not keep (locked past every attempt, a full disk) is stored there
// later exactly as it would have been (`rocelab runs import DIR`).

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::store {

struct whole_run {
  new_run run;  // name, backend, seed, resolved spec, parameters; the sweep is not carried
  run_status status = run_status::completed;
  std::string error;  // the store's note
  std::vector<agent_record> agents;
  // Appended in order, as the controller appends a run's repeats; read_whole_run gives
  // one, every repeat merged as load() gives them.
  std::vector<run_records> repeats;
};

// Reads run `id` of `store` whole. Errors: no such run; the store's.
[[nodiscard]] result<whole_run> read_whole_run(const run_store& store, std::int64_t id);

// Stores `run` as a new run of `store`: begin_run, add_agent, append (in `options`'
// batches), finish with its status and note; a load() of the new run gives what a load()
// of the run it was read from gave.
// Errors: the store's, naming the run; a run that fails midway is finished `failed`.
[[nodiscard]] result<std::int64_t> store_whole_run(run_store& store, const whole_run& run,
                                                   const append_options& options = {});

}  // namespace rocelab::store
