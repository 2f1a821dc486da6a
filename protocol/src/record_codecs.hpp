#pragma once
// Field codecs of the run records (rocelab/common/records.hpp) that messages carry:
// job_report's flows and counters, trial_result's whole run_records. Each *_json gives the
// record's JSON object; each read_* reads one through a field_reader (its schema checks).
#include "field_reader.hpp"
#include "rocelab/common/records.hpp"

namespace rocelab::protocol {

[[nodiscard]] json flow_json(const flow_record& f);
void read_flow(field_reader& r, flow_record& f);
[[nodiscard]] json counter_json(const counter_sample& c);
void read_counter(field_reader& r, counter_sample& c);
[[nodiscard]] json records_json(const run_records& r);
void read_records(field_reader& r, run_records& out);

}  // namespace rocelab::protocol
