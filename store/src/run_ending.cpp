#include "rocelab/store/run_ending.hpp"

namespace rocelab::store {

run_ending ending_of(const std::vector<const run_records*>& repeats) {
  run_ending out;
  std::vector<std::string> lost, degraded;
  for (const run_records* r : repeats) {
    for (const flow_record& f : r->flows) {
      ++out.flows;
      if (f.completed()) ++out.completed;
    }
    lost.insert(lost.end(), r->lost_hosts.begin(), r->lost_hosts.end());
    degraded.insert(degraded.end(), r->degraded.begin(), r->degraded.end());
  }
  const auto join = [](const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& s : items) text += (text.empty() ? "" : "; ") + s;
    return text;
  };
  if (out.completed < out.flows || !lost.empty()) {
    out.status = run_status::partial;
    out.note = std::to_string(out.completed) + " of " + std::to_string(out.flows) + " flows completed";
    if (!lost.empty())
      out.note += "; lost during the run: " + join(lost) + " (the flows of the others and every record so far are kept)";
  }
  if (!degraded.empty()) out.note += (out.note.empty() ? "" : "; ") + ("degraded: " + join(degraded));
  return out;
}

run_ending ending_of(const std::vector<run_records>& repeats) {
  std::vector<const run_records*> all;
  all.reserve(repeats.size());
  for (const run_records& r : repeats) all.push_back(&r);
  return ending_of(all);
}

result<run_ending> finish_ran(run_store& store, std::int64_t run, const std::vector<const run_records*>& repeats) {
  run_ending out = ending_of(repeats);
  if (auto st = store.finish(run, out.status, out.note); !st.ok())
    return st.with_context("finishing run " + std::to_string(run) + " " + to_string(out.status));
  return out;
}

result<run_ending> finish_ran(run_store& store, std::int64_t run, const std::vector<run_records>& repeats) {
  std::vector<const run_records*> all;
  all.reserve(repeats.size());
  for (const run_records& r : repeats) all.push_back(&r);
  return finish_ran(store, run, all);
}

}  // namespace rocelab::store
