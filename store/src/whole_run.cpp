#include "rocelab/store/whole_run.hpp"

namespace rocelab::store {

result<whole_run> read_whole_run(const run_store& store, std::int64_t id) {
  auto info = store.run(id);
  if (!info) return info.error();
  auto records = store.load(id);
  if (!records) return records.error();
  auto agents = store.agents(id);
  if (!agents) return agents.error();
  whole_run out;
  out.run.name = info->name;
  out.run.backend = info->backend;
  out.run.seed = info->seed;
  out.run.spec_yaml = info->spec_yaml;
  out.run.parameters = info->parameters;
  out.status = info->status;
  out.error = info->error;
  out.agents = std::move(*agents);
  out.repeats.push_back(std::move(*records));
  return out;
}

result<std::int64_t> store_whole_run(run_store& store, const whole_run& run, const append_options& options) {
  auto id = store.begin_run(run.run);
  if (!id) return id.error().with_context("storing run " + run.run.name);
  const auto failed = [&](const status& st) -> status {
    (void)store.finish(*id, run_status::failed, st.message());
    return st.with_context("storing run " + run.run.name + " as run " + std::to_string(*id));
  };
  for (const auto& agent : run.agents)
    if (auto st = store.add_agent(*id, agent); !st.ok()) return failed(st);
  for (const auto& records : run.repeats)
    if (auto st = store.append(*id, records, options); !st.ok()) return failed(st);
  // A run that is still `running` in the file it came from was not finished there: its
  // copy is not owned by a live process either.
  const run_status status = run.status == run_status::running ? run_status::interrupted : run.status;
  if (auto st = store.finish(*id, status, run.error); !st.ok()) return failed(st);
  return *id;
}

}  // namespace rocelab::store
