#pragma once
// The run store: every run of every backend, its parameters, records and tuning trials,
// in one SQLite database (WAL mode, versioned schema). The only code that speaks SQL.
//
// Durability contract ("nothing lost"):
// - Each call that writes is one transaction; a crash (kill -9) between calls loses at
//   most the call in flight, and the database always passes PRAGMA integrity_check.
// - A run is inserted `running` with its owner (host and pid). Opening the store read-write
//   marks every `running` run whose owner process is gone as `interrupted`, keeping what
//   it already wrote.
// - Readers (notebooks) open read-only and read while a run is being written; load()
//   reads one consistent snapshot.
//
// Threading: a run_store is one SQLite connection; use it from one thread at a time (open
// one per thread or process; they share the file safely).
// Name mapping in append(): records refer to hosts and devices by index into
// records.hosts / records.devices; those names are matched to the run's own name tables
// (new names get the next index), so agents may append with their own local numbering.
// When records.hosts (or .devices) is empty, the indexes are taken as the run's already.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::store {

enum class run_status : std::uint8_t { running, completed, partial, interrupted, failed };

[[nodiscard]] const char* to_string(run_status s) noexcept;
[[nodiscard]] result<run_status> parse_run_status(std::string_view text);

// What a run is, as listed by runs().
struct run_info {
  std::int64_t id = 0;
  std::string name;     // the spec's name
  std::string backend;  // twin | virtual | lab
  std::uint64_t seed = 0;
  run_status status = run_status::running;
  std::string error;    // why it failed or was partial
  std::int64_t started_unix_ns = 0;
  std::int64_t ended_unix_ns = 0;  // 0 while running
  std::optional<std::int64_t> sweep;  // the tuning sweep it belongs to
  std::string spec_yaml;              // the resolved spec (every field, loadable again)
  std::map<std::string, std::string> parameters;  // spec path -> value, e.g. switch.ecn.kmin_bytes -> 20480
  std::optional<std::int64_t> calibration;         // the lab calibration a twin run modelled
};

struct new_run {
  std::string name;
  std::string backend;
  std::uint64_t seed = 0;
  std::string spec_yaml;
  std::map<std::string, std::string> parameters;
  std::optional<std::int64_t> sweep;
};

// A lab's calibration as kept with the runs it calibrates: rocelab calibrate's YAML,
// stored once per text.
struct calibration_info {
  std::int64_t id = 0;
  std::string lab;       // the lab's name ("virtual" for the virtual lab)
  std::string taken_at;  // UTC, ISO 8601, as the file says
  std::string sha256;    // of yaml, 64 hex digits
  std::string yaml;
};

// A tuning sweep and its trials (rocelab tune): an interrupted sweep resumes from them.
struct sweep_info {
  std::int64_t id = 0;
  std::string name;
  std::string method;  // bayes | grid | random
  std::string spec_yaml;
  std::uint32_t budget = 0;
  std::int64_t started_unix_ns = 0;
};

struct trial_record {
  std::int64_t sweep = 0;
  std::uint32_t index = 0;  // 0-based order of proposal
  std::map<std::string, double> params;  // spec path -> value
  double objective = 0;
  bool feasible = true;     // constraints held (zero drops, bus bandwidth floor, ...)
  std::optional<std::int64_t> run;  // the run that measured it
  std::string metrics_json;          // the run summary it was scored from
};

struct agent_record {  // agents that took part in a run (controller)
  std::string name;
  std::string address;
  double clock_offset_ns = 0;
  double clock_uncertainty_ns = 0;
  std::string state;  // ok | lost
};

enum class open_mode : std::uint8_t { read_write, read_only };

// Whether runs() reads each run's resolved spec (run_info::spec_yaml; empty when not).
enum class with_spec_yaml : bool { no, yes };

// Which record tables load() reads.
struct load_parts {
  bool flows = true, pauses = true, events = true, counters = true, queues = true, allreduce = true;
  // What a run's summary needs (summary.hpp): flows and all-reduce results; the totals
  // come with every load.
  [[nodiscard]] static load_parts summary() noexcept { return {true, false, false, false, false, true}; }
};

// How a large append is split: transactions of at most `batch_rows` rows (flows, pauses,
// events, counters, queue samples, all-reduce results, in that order), with
// `cancel_requested` asked before every batch after the first and every 1024 rows within
// one. So a run of millions of queue samples is stored in steps of bounded time, and a
// cancel stops it within about a millisecond of inserts, committing the rows before it.
struct append_options {
  std::size_t batch_rows = 20'000;
  std::function<bool()> cancel_requested;
};

class run_store {
 public:
  // Creates the file and schema when missing, migrates older schema versions, refuses a
  // newer one; read_write also marks orphaned `running` runs interrupted.
  [[nodiscard]] static result<run_store> open(const std::string& path, open_mode mode = open_mode::read_write);

  run_store(run_store&&) noexcept;
  run_store& operator=(run_store&&) noexcept;
  ~run_store();

  [[nodiscard]] static constexpr int schema_version() noexcept { return 4; }

  [[nodiscard]] result<std::int64_t> begin_run(const new_run& run);
  // Appends records (any may be empty) in one transaction; callable many times per run,
  // so what an agent already reported is kept when the run later fails. Host and device
  // names in `records` map onto the run's name tables by name.
  [[nodiscard]] status append(std::int64_t run, const run_records& records);
  // The same in batches (append_options). The totals and simulated time go with the first
  // batch. A cancel returns error_code::cancelled; every row inserted before it is
  // committed (at least the first 1023), so the run holds a prefix of its records, in the
  // order above, and is consistent.
  [[nodiscard]] status append(std::int64_t run, const run_records& records, const append_options& options);
  [[nodiscard]] status add_agent(std::int64_t run, const agent_record& agent);
  [[nodiscard]] status finish(std::int64_t run, run_status final_status, std::string_view error = {});
  // Sets (or replaces) one of a run's parameters: what is known only after the run, such
  // as the twin's prediction of a measured run. Errors: no such run.
  [[nodiscard]] status set_parameter(std::int64_t run, std::string_view path, std::string_view value);

  [[nodiscard]] result<std::vector<run_info>> runs(with_spec_yaml spec = with_spec_yaml::yes) const;
  [[nodiscard]] result<run_info> run(std::int64_t id) const;
  [[nodiscard]] result<run_records> load(std::int64_t run) const;
  // Only the parts asked for (names, totals and the capture note always): a listing of
  // many runs reads their flows without their queue samples.
  [[nodiscard]] result<run_records> load(std::int64_t run, const load_parts& parts) const;
  [[nodiscard]] result<std::vector<agent_record>> agents(std::int64_t run) const;

  // Keeps a calibration's text unless the same text (by SHA-256) is kept already; its id
  // either way, for new_run::calibration.
  [[nodiscard]] result<std::int64_t> add_calibration(std::string_view lab, std::string_view taken_at,
                                                     std::string_view yaml);
  // Records that a twin run modelled calibration `calibration` (run_info::calibration).
  // Errors: no such run or calibration.
  [[nodiscard]] status set_calibration(std::int64_t run, std::int64_t calibration);
  [[nodiscard]] result<calibration_info> calibration(std::int64_t id) const;
  [[nodiscard]] result<std::vector<calibration_info>> calibrations() const;

  [[nodiscard]] result<std::int64_t> begin_sweep(const sweep_info& sweep);
  [[nodiscard]] result<std::vector<sweep_info>> sweeps() const;
  [[nodiscard]] status add_trial(const trial_record& trial);
  [[nodiscard]] result<std::vector<trial_record>> trials(std::int64_t sweep) const;

  // PRAGMA integrity_check: ok, or malformed_input listing what SQLite found.
  [[nodiscard]] status check_integrity() const;

  [[nodiscard]] const std::string& path() const noexcept;

 private:
  struct impl;
  explicit run_store(std::unique_ptr<impl> p) noexcept;
  // One transaction; commits the rows inserted before `cancel` said stop.
  [[nodiscard]] status append_batch(std::int64_t run, const run_records& records, const std::function<bool()>& cancel,
                                    bool& cancelled);
  std::unique_ptr<impl> impl_;
};

}  // namespace rocelab::store
