#include "rocelab/controller/stored_outcome.hpp"

#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::controller {

result<std::optional<protocol::run_finished>> stored_outcome(const store::run_store& store, const std::string& submission) {
  if (submission.empty()) return std::optional<protocol::run_finished>{};
  auto runs = store.runs(store::with_spec_yaml::no);
  if (!runs) return runs.error().with_context("looking up submission " + submission);
  for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
    const auto p = it->parameters.find(submission_parameter);
    if (p == it->parameters.end() || p->second != submission) continue;
    protocol::run_finished f;
    f.run = it->id;
    f.status = store::to_string(it->status);
    f.error = it->error;
    if (auto records = store.load(it->id); records) {
      const auto s = experiments::summarize({&*records}, {it->seed});
      f.summary_json = experiments::summary_json({std::to_string(it->id), it->backend, it->name}, s, {s});
    }
    return std::optional<protocol::run_finished>{std::move(f)};
  }
  return std::optional<protocol::run_finished>{};
}

}  // namespace rocelab::controller
