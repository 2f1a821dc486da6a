// Field codecs of the sweep workers' messages: register_worker, trial_assignment and
// trial_result (whose repeats carry whole run records, record_codecs.hpp).
#include "body_codecs.hpp"
#include "record_codecs.hpp"

namespace rocelab::protocol {

json write_body(const register_worker& m) {
  return {{"name", m.name},
          {"host", m.host},
          {"pid", m.pid},
          {"capabilities", m.capabilities},
          {"threads", m.threads},
          {"slurm_job_id", m.slurm_job_id},
          {"slurm_array_task_id", m.slurm_array_task_id},
          {"slurm_node", m.slurm_node}};
}
void read_body(field_reader& r, register_worker& m) {
  r.get("name", m.name);
  r.get("host", m.host);
  r.get("pid", m.pid);
  r.get_strings("capabilities", m.capabilities);
  r.get("threads", m.threads);
  r.get("slurm_job_id", m.slurm_job_id);
  r.get("slurm_array_task_id", m.slurm_array_task_id);
  r.get("slurm_node", m.slurm_node);
  if (r.ok() && (m.name.empty() || m.name.size() > 128)) r.fail("name", "expected 1 to 128 characters");
  if (r.ok() && m.threads == 0) r.fail("threads", "must be at least 1");
}

json write_body(const trial_assignment& m) {
  return {{"trial", m.trial}, {"attempt", m.attempt}, {"spec_yaml", m.spec_yaml}, {"source_name", m.source_name}};
}
void read_body(field_reader& r, trial_assignment& m) {
  r.get("trial", m.trial);
  r.get("attempt", m.attempt);
  r.get("spec_yaml", m.spec_yaml);
  r.get("source_name", m.source_name);
  if (r.ok() && m.attempt == 0) r.fail("attempt", "must be at least 1");
}

json write_body(const trial_result& m) {
  json repeats = json::array();
  for (const auto& r : m.repeats)
    repeats.push_back({{"index", r.index}, {"seed", r.seed}, {"records", records_json(r.records)}});
  return {{"trial", m.trial},
          {"attempt", m.attempt},
          {"error", m.error},
          {"repeats", std::move(repeats)},
          {"done", m.done}};
}
void read_body(field_reader& r, trial_result& m) {
  r.get("trial", m.trial);
  r.get("attempt", m.attempt);
  r.get("error", m.error);
  r.get_objects("repeats", m.repeats, [](field_reader& f, trial_repeat& x) {
    f.get("index", x.index);
    f.get("seed", x.seed);
    f.get_object("records", [&](field_reader& rr) { read_records(rr, x.records); });
  });
  r.get("done", m.done);
}

}  // namespace rocelab::protocol
