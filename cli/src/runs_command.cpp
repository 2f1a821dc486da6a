// rocelab runs [--db rocelab.db] [--json]: the runs in a run store (read-only, so it works
// while a run is being written), newest last: status, what each run changed from its spec
// (the --set overrides it was run with) and its key results.
//   rocelab runs show ID     one run: settings, overrides, results by traffic class
//   rocelab runs diff A B    two runs: the spec fields that differ and the results side by
//                            side with their change
//   rocelab runs import DIR  stores the run a run directory holds (its records.db, written
//                            by `rocelab run --out DIR`) as a new run, exactly as `run` would
//                            have stored it: for a run its store could not keep
// Results come from the stored flows and totals through the same summary as `rocelab run`
// prints (experiments/run/summary.hpp), so the numbers agree with it.
#include <sys/stat.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "run_overrides.hpp"
#include "run_records_file.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/run/summary_metrics.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/store/whole_run.hpp"

namespace rocelab::cli {
namespace {

using json = nlohmann::ordered_json;
using experiments::summary_metric;

struct runs_args {
  std::string db = "rocelab.db";
  bool json = false;
  std::int64_t show = 0;
  std::vector<std::int64_t> diff;
  std::string import_dir;
};

// runs import DIR: DIR/records.db's run, stored again as a new run of --db.
int import_run(const runs_args& a) {
  const std::string file = a.import_dir + "/" + run_records_file;
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::cerr << "rocelab runs import: " << a.import_dir << " holds no " << run_records_file
              << " (a run directory of `rocelab run`, which writes it)\n";
    return 2;
  }
  auto from = store::run_store::open(file, store::open_mode::read_only);
  if (!from) {
    std::cerr << "rocelab runs import: " << from.error().message() << "\n";
    return 2;
  }
  auto runs = from->runs();
  if (!runs || runs->size() != 1) {
    std::cerr << "rocelab runs import: " << file << ": "
              << (runs ? "holds " + std::to_string(runs->size()) + " runs, not one" : runs.error().message()) << "\n";
    return 2;
  }
  auto whole = store::read_whole_run(*from, runs->front().id);
  if (!whole) {
    std::cerr << "rocelab runs import: " << whole.error().with_context(file).message() << "\n";
    return 1;
  }
  auto into = store::run_store::open(a.db);
  if (!into) {
    std::cerr << "rocelab runs import: " << into.error().message() << "\n";
    return 1;
  }
  auto id = store::store_whole_run(*into, *whole);
  if (!id) {
    std::cerr << "rocelab runs import: " << id.error().message() << "\n";
    return 1;
  }
  if (a.json) {
    std::cout << json{{"run", *id}, {"db", a.db}, {"from", a.import_dir}, {"status", store::to_string(whole->status)}}.dump(2)
              << "\n";
  } else {
    std::printf("run         %lld in %s (%s, from %s)\n", static_cast<long long>(*id), a.db.c_str(),
                store::to_string(whole->status), a.import_dir.c_str());
  }
  return 0;
}

std::string format_utc(std::int64_t unix_ns) {
  if (unix_ns <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

std::string overrides_text(const store::run_info& r) {
  std::string out;
  for (const auto& [path, value] : overrides_of(r)) out += (out.empty() ? "" : " ") + path + "=" + value;
  return out;
}

// The run's pooled summary from its flows and totals (the large tables stay unread).
result<experiments::run_summary> summary_of(const store::run_store& store, const store::run_info& r) {
  auto records = store.load(r.id, store::load_parts::summary());
  if (!records) return std::move(records).error();
  return experiments::summarize({&*records}, {r.seed});
}

json summary_json(const experiments::run_summary& s) {
  auto stats = [](const experiments::flow_stats& f) {
    return json{{"flows", f.flows},           {"completed", f.completed},       {"fct_p50_ns", f.fct_p50_ns},
                {"fct_p99_ns", f.fct_p99_ns}, {"fct_max_ns", f.fct_max_ns},     {"slowdown_p50", f.slowdown_p50},
                {"slowdown_p99", f.slowdown_p99}};
  };
  json by_kind = json::object();
  for (const auto& [kind, f] : s.by_kind) by_kind[kind] = stats(f);
  return {{"all", stats(s.all)},         {"by_kind", by_kind},       {"pause_frames", s.pause_frames},
          {"paused_ns", s.paused_ns},    {"ce_marked", s.ce_marked}, {"cnp", s.cnp_measured ? json(s.cnp) : json(nullptr)},
          {"drops", s.drops},            {"retransmits", s.retransmits_measured ? json(s.retransmits) : json(nullptr)}};
}

json run_json(const store::run_info& r, const experiments::run_summary* s) {
  json overrides = json::object(), notes = json::object();
  for (const auto& [path, value] : r.parameters) (is_spec_field(path) ? overrides : notes)[path] = value;
  json j = {{"id", r.id},
            {"name", r.name},
            {"backend", r.backend},
            {"seed", r.seed},
            {"status", store::to_string(r.status)},
            {"error", r.error},
            {"started_unix_ns", r.started_unix_ns},
            {"ended_unix_ns", r.ended_unix_ns},
            {"sweep", r.sweep ? json(*r.sweep) : json(nullptr)},
            {"calibration", r.calibration ? json(*r.calibration) : json(nullptr)},
            {"overrides", overrides},
            {"notes", notes}};
  if (s != nullptr) j["results"] = summary_json(*s);
  return j;
}


int list_runs(const store::run_store& store, const runs_args& a) {
  auto runs = store.runs(store::with_spec_yaml::no);
  if (!runs) {
    std::cerr << "rocelab runs: " << runs.error().message() << "\n";
    return 1;
  }
  json out = json::array();
  if (!a.json)
    std::printf("%6s  %-11s  %-8s  %-19s  %-24s %12s %9s %8s %8s %7s  %s\n", "id", "status", "backend",
                "started (UTC)", "name", "fct p99", "slowdn99", "pauses", "CE", "drops", "overrides");
  for (const auto& r : *runs) {
    auto s = summary_of(store, r);
    if (a.json) {
      out.push_back(run_json(r, s ? &*s : nullptr));
      continue;
    }
    const std::string fct = s ? readable_duration(static_cast<double>(s->all.fct_p99_ns)) : "-";
    char slowdown[16] = "-", pauses[24] = "-", ce[24] = "-", drops[24] = "-";
    if (s) {
      std::snprintf(slowdown, sizeof slowdown, "%.2f", s->all.slowdown_p99);
      std::snprintf(pauses, sizeof pauses, "%" PRIu64, s->pause_frames);
      std::snprintf(ce, sizeof ce, "%" PRIu64, s->ce_marked);
      std::snprintf(drops, sizeof drops, "%" PRIu64, s->drops);
    }
    std::printf("%6lld  %-11s  %-8s  %-19s  %-24s %12s %9s %8s %8s %7s  %s%s%s\n", static_cast<long long>(r.id),
                store::to_string(r.status), r.backend.c_str(), format_utc(r.started_unix_ns).c_str(), r.name.c_str(),
                fct.c_str(), slowdown, pauses, ce, drops, overrides_text(r).c_str(), r.error.empty() ? "" : "  -- ",
                r.error.c_str());
  }
  if (a.json) std::cout << out.dump(2) << "\n";
  return 0;
}

int show_run(const store::run_store& store, const runs_args& a) {
  auto r = store.run(a.show);
  if (!r) {
    std::cerr << "rocelab runs show: " << r.error().message() << "\n";
    return 1;
  }
  auto s = summary_of(store, *r);
  if (!s) {
    std::cerr << "rocelab runs show: " << s.error().message() << "\n";
    return 1;
  }
  // The lab calibration a twin run modelled (twin.calibration), as stored with it.
  std::optional<store::calibration_info> calibration;
  if (r->calibration) {
    auto c = store.calibration(*r->calibration);
    if (!c) {
      std::cerr << "rocelab runs show: " << c.error().message() << "\n";
      return 1;
    }
    calibration = std::move(*c);
  }
  if (a.json) {
    json j = run_json(*r, &*s);
    j["spec_yaml"] = r->spec_yaml;
    if (calibration)
      j["calibration"] = {{"id", calibration->id}, {"lab", calibration->lab}, {"taken_at", calibration->taken_at},
                          {"sha256", calibration->sha256}, {"yaml", calibration->yaml}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("run         %lld  %s (%s, seed %llu)\n", static_cast<long long>(r->id), r->name.c_str(),
              r->backend.c_str(), static_cast<unsigned long long>(r->seed));
  std::printf("status      %s%s%s\n", store::to_string(r->status), r->error.empty() ? "" : ": ", r->error.c_str());
  std::printf("started     %s UTC, ended %s UTC\n", format_utc(r->started_unix_ns).c_str(),
              format_utc(r->ended_unix_ns).c_str());
  if (r->sweep) std::printf("sweep       %lld\n", static_cast<long long>(*r->sweep));
  if (calibration)
    std::printf("calibration %s taken %s (stored calibration %lld, sha256 %.12s)\n", calibration->lab.c_str(),
                calibration->taken_at.c_str(), static_cast<long long>(calibration->id), calibration->sha256.c_str());
  std::printf("overrides   %s\n", r->parameters.empty() ? "(none: the spec as written)" : "");
  for (const auto& [path, value] : r->parameters)
    if (is_spec_field(path)) std::printf("  %s = %s\n", path.c_str(), value.c_str());
  for (const auto& [path, value] : r->parameters)
    if (!is_spec_field(path)) std::printf("  (%s = %s)\n", path.c_str(), value.c_str());
  std::printf("results\n");
  for (const summary_metric& m : experiments::key_metrics(*s))
    std::printf("  %-28s %s\n", m.name.c_str(), experiments::metric_text(m).c_str());
  std::printf("spec        rocelab runs show %lld --json (spec_yaml), or Python: open_store().run(%lld)\n",
              static_cast<long long>(r->id), static_cast<long long>(r->id));
  return 0;
}

int diff_runs(const store::run_store& store, const runs_args& a) {
  std::vector<store::run_info> info;
  std::vector<experiments::run_summary> summaries;
  std::vector<experiments::experiment_spec> specs;
  for (std::int64_t id : a.diff) {
    auto r = store.run(id);
    if (!r) {
      std::cerr << "rocelab runs diff: " << r.error().message() << "\n";
      return 1;
    }
    auto s = summary_of(store, *r);
    if (!s) {
      std::cerr << "rocelab runs diff: " << s.error().message() << "\n";
      return 1;
    }
    auto spec = experiments::load_spec(r->spec_yaml, "run " + std::to_string(id));
    if (!spec) {
      std::cerr << "rocelab runs diff: the stored spec of " << spec.error().message() << "\n";
      return 1;
    }
    info.push_back(std::move(*r));
    summaries.push_back(std::move(*s));
    specs.push_back(std::move(*spec));
  }
  json settings = json::array();
  for (const auto& f : experiments::field_table()) {
    auto va = experiments::get_field(specs[0], f.path), vb = experiments::get_field(specs[1], f.path);
    const std::string ta = va ? *va : "-", tb = vb ? *vb : "-";
    if (ta != tb) settings.push_back({{"field", f.path}, {"a", ta}, {"b", tb}});
  }
  const auto ma = experiments::key_metrics(summaries[0]), mb = experiments::key_metrics(summaries[1]);
  json results = json::array();
  for (const summary_metric& m : ma) {
    const summary_metric* other = experiments::find_metric(mb, m.name);
    if (other == nullptr) continue;
    const bool both = m.measured && other->measured;  // null: not measured, no change
    const auto percent = both ? experiments::change_percent(m.value, other->value) : std::nullopt;
    results.push_back({{"metric", m.name},
                       {"a", m.measured ? json(m.value) : json(nullptr)},
                       {"b", other->measured ? json(other->value) : json(nullptr)},
                       {"change", both ? json(other->value - m.value) : json(nullptr)},
                       {"change_percent", percent ? json(*percent) : json(nullptr)}});
  }
  if (a.json) {
    std::cout << json{{"a", run_json(info[0], &summaries[0])},
                      {"b", run_json(info[1], &summaries[1])},
                      {"settings", settings},
                      {"results", results}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::printf("a           run %lld  %s (%s, %s)\n", static_cast<long long>(info[0].id), info[0].name.c_str(),
              info[0].backend.c_str(), store::to_string(info[0].status));
  std::printf("b           run %lld  %s (%s, %s)\n", static_cast<long long>(info[1].id), info[1].name.c_str(),
              info[1].backend.c_str(), store::to_string(info[1].status));
  if (settings.empty())
    std::printf("settings    the same spec: no field differs\n");
  else
    std::printf("settings    %zu field%s differ%s\n", settings.size(), settings.size() == 1 ? "" : "s",
                settings.size() == 1 ? "s" : "");
  for (const auto& row : settings)
    std::printf("  %-40s %-22s -> %s\n", row["field"].get<std::string>().c_str(), row["a"].get<std::string>().c_str(),
                row["b"].get<std::string>().c_str());
  std::printf("results     %-28s %14s %14s %10s\n", "", "a", "b", "change");
  for (const summary_metric& m : ma) {
    const summary_metric* other = experiments::find_metric(mb, m.name);
    if (other == nullptr) continue;
    char change[24] = "";
    const bool both = m.measured && other->measured;  // no change against a count not measured
    if (!both) {
    } else if (const auto percent = experiments::change_percent(m.value, other->value))
      std::snprintf(change, sizeof change, "%+.1f%%", *percent);
    else if (other->value != 0)
      std::snprintf(change, sizeof change, "new");
    std::printf("  %-38s %14s %14s %10s\n", m.name.c_str(), experiments::metric_text(m).c_str(),
                experiments::metric_text(*other).c_str(), change);
  }
  return 0;
}

std::function<int()> setup_runs(CLI::App& app) {
  auto a = std::make_shared<runs_args>();
  app.description("List the runs in a run store (SQLite) with their status, overrides and key results; "
                  "`runs show ID` for one run, `runs diff A B` for two side by side");
  app.add_option("--db", a->db, "The run store")->capture_default_str();
  app.add_flag("--json", a->json, "Print JSON");
  app.require_subcommand(0, 1);
  CLI::App* show = app.add_subcommand("show", "One run: settings, overrides and results by traffic class");
  show->add_option("id", a->show, "Run id")->required();
  show->add_option("--db", a->db, "The run store")->capture_default_str();
  show->add_flag("--json", a->json, "Print one JSON object (with the resolved spec)");
  CLI::App* diff = app.add_subcommand("diff", "Two runs: spec fields that differ, results side by side");
  diff->add_option("runs", a->diff, "Run ids A B")->required()->expected(2);
  diff->add_option("--db", a->db, "The run store")->capture_default_str();
  diff->add_flag("--json", a->json, "Print one JSON object");
  CLI::App* import = app.add_subcommand(
      "import", "Store the run of a run directory (its records.db, from `rocelab run --out DIR`) as a new run of --db: "
                "for a run its store could not keep (locked, a full disk)");
  import->add_option("dir", a->import_dir, "The run directory")->required();
  import->add_option("--db", a->db, "The run store to add the run to")->capture_default_str();
  import->add_flag("--json", a->json, "Print the new run's id as JSON");
  return [a, show, diff, import] {
    if (import->parsed()) return import_run(*a);
    auto store = store::run_store::open(a->db, store::open_mode::read_only);
    if (!store.ok()) {
      std::cerr << "rocelab runs: " << store.error().message() << "\n";
      return 1;
    }
    if (show->parsed()) return show_run(*store, *a);
    if (diff->parsed()) return diff_runs(*store, *a);
    return list_runs(*store, *a);
  };
}

}  // namespace

ROCELAB_COMMAND(runs, setup_runs);

}  // namespace rocelab::cli
