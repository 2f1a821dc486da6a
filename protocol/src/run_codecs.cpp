// Field codecs of a client's runs: submit_run and its answer, run_finished.
#include <string>

#include "body_codecs.hpp"

namespace rocelab::protocol {

bool valid_submission_id(std::string_view id) noexcept {
  if (id.size() > max_submission_id_chars) return false;
  for (const char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return false;
  return true;
}

json write_body(const submit_run& m) {
  return {{"request", m.request},         {"spec_yaml", m.spec_yaml},   {"source_name", m.source_name},
          {"sets", m.sets},               {"submission", m.submission}, {"retry", m.retry}};
}
void read_body(field_reader& r, submit_run& m) {
  r.get("request", m.request);
  r.get("spec_yaml", m.spec_yaml);
  r.get("source_name", m.source_name);
  r.get_strings("sets", m.sets);
  r.get("submission", m.submission);
  r.get("retry", m.retry);
  if (r.ok() && !valid_submission_id(m.submission))
    r.fail("submission", "expected up to " + std::to_string(max_submission_id_chars) + " of [A-Za-z0-9_-]");
}

json write_body(const run_finished& m) {
  return {{"request", m.request},
          {"run", m.run},
          {"status", m.status},
          {"error", m.error},
          {"summary_json", m.summary_json}};
}
void read_body(field_reader& r, run_finished& m) {
  r.get("request", m.request);
  r.get("run", m.run);
  r.get("status", m.status);
  r.get("error", m.error);
  r.get("summary_json", m.summary_json);
}

}  // namespace rocelab::protocol
