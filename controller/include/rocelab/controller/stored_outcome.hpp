#pragma once
// A submitted run's outcome as its store has it, found by the client's submission id
// (protocol/messages.hpp, submit_run): what a controller answers a retry with, and what a client
// reads itself when the controller does not come back.
//
// Cost: one pass over the store's runs, newest first (retries are rare).

#include <optional>
#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/protocol/messages.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {

// The run parameter that carries the submission id.
inline constexpr const char* submission_parameter = "controller.submission";

// The newest run stored for `submission` as a run_finished (request 0; status as stored;
// summary_json from its stored records), or nullopt when the store has none.
[[nodiscard]] result<std::optional<protocol::run_finished>> stored_outcome(const store::run_store& store,
                                                                 const std::string& submission);

}  // namespace rocelab::controller
