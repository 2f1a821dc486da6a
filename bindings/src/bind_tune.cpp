// Tuning from Python (experiments/tuning*.hpp): the sweep `rocelab tune` runs, with the
// trial hook calling back into Python on the calling thread after every trial (progress
// bar, storing the trial, the user's callback). Trials run with the GIL released, in
// parallel threads on the twin. Ctrl-C is noticed at the next trial: the sweep stops
// after the batch in flight and what ran is returned (a sweep resumes from its trials).
#include <atomic>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "records.hpp"
#include "store_handle.hpp"

#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
#include "rocelab/cli/sweep_executor.hpp"
#include "rocelab/controller/client.hpp"
#endif
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/lab/sweep_exports.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_edges.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/sweep_session.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"
#include "rocelab/store/run_store.hpp"

namespace py = pybind11;

namespace rocelab::bindings {

namespace {

using namespace experiments;

py::dict trial_dict(const tuning_settings& settings, const trial& t) {
  py::dict d;
  d["index"] = t.index;
  py::dict values;
  const std::vector<double> applied = t.values.empty() ? std::vector<double>{} : applied_values(settings, t.values);
  for (std::size_t i = 0; i < settings.parameters.size() && i < applied.size(); ++i)
    values[py::str(settings.parameters[i].path)] = applied[i];
  d["values"] = values;
  d["evaluated"] = t.evaluated;
  d["objective"] = t.objective;
  d["feasible"] = t.feasible;
  d["violated"] = t.violated;
  d["error"] = t.error;
  d["metrics_json"] = t.metrics_json;
  d["describe"] = t.values.empty() ? std::string() : describe_values(settings, t.values);
  d["run_id"] = t.run_id;
  return d;
}

py::dict settings_dict(const tuning_settings& s) {
  py::dict d;
  d["name"] = s.name;
  d["method"] = to_string(s.method);
  d["budget"] = s.budget;
  d["parallelism"] = s.parallelism;
  d["seed"] = s.seed;
  d["seeds"] = s.seeds;
  d["widened"] = s.widened;
  py::list params;
  for (const auto& p : s.parameters) params.append(p.path);
  d["parameters"] = params;
  return d;
}

// The settings as `rocelab tune` resolves them (sweep_session.hpp, resolve_settings).
tuning_settings settings_from(const experiment_spec& spec, const std::string& yaml_text, const std::string& source,
                              const sweep_request& request) {
  auto loaded = load_tuning(yaml_text, source, spec);
  if (!loaded) throw_spec_error(loaded.error());
  auto s = resolve_settings(std::move(*loaded), request);
  if (!s) throw_spec_error(s.error());
  return std::move(*s);
}

// resume=: True (or None) resumes the newest unfinished sweep of the same identity, False
// starts a new one, an int continues that sweep.
struct resume_choice {
  std::optional<std::int64_t> sweep;
  bool start_new = false;
};
resume_choice resume_from(const py::object& resume) {
  if (resume.is_none()) return {};
  if (py::isinstance<py::bool_>(resume)) return {std::nullopt, !resume.cast<bool>()};
  return {resume.cast<std::int64_t>(), false};
}

// Trials on a lab behind a controller: each trial's spec is submitted as `rocelab run
// SPEC --controller` submits it, the controller runs and stores it, and its summary
// scores the trial. One lab runs one trial at a time.
trial_runner controller_runner(const std::string& address, const std::string& token, std::int64_t timeout_ms) {
#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
  controller::submit_options options;
  options.controller = address;
  options.token = token;
  options.connect_timeout = std::chrono::milliseconds(timeout_ms);
  return controller::remote_trial_runner(options);
#else
  (void)token;
  (void)timeout_ms;
  return [address](const experiment_spec&) -> result<trial_runs> {
    return status(error_code::unavailable, "cannot tune on " + address + ": this build has no controller client");
  };
#endif
}

#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
using executor_handle = std::unique_ptr<cli::sweep_executor>;
#else
using executor_handle = std::unique_ptr<int>;
#endif

// executor={"kind": "local"|"slurm", "workers": N, "slurm_opts": ["partition=debug"],
// "listen": ADDR, "rocelab_binary": PATH, "work_dir": DIR, "controller": ADDR,
// "token_file": F}: the trials run on N workers (`rocelab worker`) started as `rocelab
// tune --executor` starts them (cli/sweep_executor.hpp), behind a controller in this
// process or, with "controller", attached to that running one.
executor_handle start_executor(const py::dict& e, std::atomic<bool>& stop) {
#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
  cli::executor_options o;
  const std::string kind = e["kind"].cast<std::string>();
  auto k = cli::parse_executor(kind);
  if (!k || *k == cli::executor_kind::threads)
    throw_error(status(error_code::invalid_argument, "executor '" + kind + "': expected local or slurm"));
  o.kind = *k;
  if (e.contains("workers")) o.workers = e["workers"].cast<std::uint32_t>();
  if (e.contains("slurm_opts")) o.slurm_opts = e["slurm_opts"].cast<std::vector<std::string>>();
  if (e.contains("listen")) o.listen = e["listen"].cast<std::string>();
  if (e.contains("rocelab_binary")) o.rocelab_binary = e["rocelab_binary"].cast<std::string>();
  if (e.contains("work_dir")) o.work_dir = e["work_dir"].cast<std::string>();
  if (e.contains("controller")) o.controller = e["controller"].cast<std::string>();
  if (e.contains("token_file")) o.token_file = e["token_file"].cast<std::string>();
  o.stop_requested = [&stop] { return stop.load(); };
  std::optional<result<std::unique_ptr<cli::sweep_executor>>> started;
  {
    py::gil_scoped_release release;  // local workers take seconds to register
    started.emplace(cli::sweep_executor::start(std::move(o)));
  }
  if (!started->ok()) throw_error(started->error());
  return std::move(**started);
#else
  (void)e;
  (void)stop;
  throw_error(status(error_code::unavailable, "this build of rocelab has no controller: no executor"));
#endif
}

// The executor as the sweep's result reports it: kind, workers, controller, and on Slurm
// the job and its tasks' final states ("41_0 COMPLETED on node1").
py::dict finish_executor(executor_handle& ex, const py::dict& e, bool interrupted) {
  py::dict d;
#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
  d["kind"] = e["kind"];
  d["workers"] = e.contains("workers") ? py::object(e["workers"]) : py::object(py::int_(2));
  d["controller"] = ex->controller_address();
  d["attached"] = e.contains("controller");
  d["failure"] = ex->failure();
  std::vector<std::string> states;
  {
    py::gil_scoped_release release;  // waits for the Slurm job to leave the queue
    states = ex->finish(interrupted);
  }
  if (!ex->slurm_job().empty()) {
    d["slurm_job"] = ex->slurm_job();
    d["slurm_tasks"] = states;
  }
  ex.reset();
#else
  (void)ex;
  (void)e;
  (void)interrupted;
#endif
  return d;
}

// on_trial(trial: dict, applied: {path: text}) after each trial, once the sweep session
// stored it (trial["run_id"] is its run). With `store`, the sweep is the one `rocelab tune`
// keeps: opened or resumed by the same identity (sweep_session.hpp).
py::dict tune(const experiment_spec& spec, const std::string& yaml_text, const std::string& source,
              const sweep_request& request_in, const py::object& on_trial, const std::string& controller_address,
              const std::string& controller_token, std::int64_t connect_timeout_ms, const py::object& store_object,
              const py::object& resume, std::uint32_t fresh_seeds, const py::object& executor_object,
              const sweep_export_request& exports, bool force) {
  const py::dict executor = executor_object.is_none() ? py::dict() : executor_object.cast<py::dict>();
  if (!executor.empty() && !controller_address.empty())
    throw_error(status(error_code::invalid_argument,
                       "executor= runs a sweep's trials on workers of the twin; a lab behind a controller runs them "
                       "itself (tune on rocelab.twin())"));
  sweep_request request = request_in;
  // With workers, as many trials in flight as workers (as `rocelab tune --executor`).
  if (!executor.empty() && executor.contains("workers")) request.parallelism = executor["workers"].cast<std::uint32_t>();
  tuning_settings settings = settings_from(spec, yaml_text, source, request);
  if (!controller_address.empty()) settings.parallelism = 1;
  std::optional<sweep_session> session;
  if (store::run_store* db = store_argument(store_object)) {
    const resume_choice choice = resume_from(resume);
    session.emplace(value_or_throw(sweep_session::open(*db, spec, settings, choice.sweep, choice.start_new), "store"));
  }
  std::atomic<bool> stop{false};
  py::object caught;
  executor_handle workers;
  if (!executor.empty()) workers = start_executor(executor, stop);
  sweep_hooks hooks;
  hooks.stop = &stop;
  hooks.on_trial = [&](trial& t, trial_payload& payload) -> status {
    py::gil_scoped_acquire gil;
    try {
      if (!on_trial.is_none()) {
        py::dict td = trial_dict(settings, t);
        // Where the trial ran (worker.slurm_job, worker.node, ...): stored beside its
        // parameters, as `rocelab tune --executor` stores them.
        td["placement"] = payload.placement;
#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
        td["workers"] = workers ? workers->progress() : std::string();
#endif
        on_trial(td, payload.applied);
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (py::error_already_set& e) {
      caught = e.value();
      stop = true;
    }
    return status::success();
  };
  std::optional<result<edge_sweep>> done;
  {
    py::gil_scoped_release release;
    const auto make_evaluator = [&](const tuning_settings& s) {
#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
      if (workers) return spec_evaluator(spec, s, workers->runner());
#endif
      return controller_address.empty()
                 ? spec_evaluator(spec, s, local_backends())
                 : spec_evaluator(spec, s, controller_runner(controller_address, controller_token, connect_timeout_ms));
    };
    done.emplace(session ? session->run(make_evaluator, hooks)
                         : run_sweep_with_edges(spec, settings, make_evaluator, {}, hooks));
  }
  py::object executor_out = py::none();
  if (!executor.empty())
    executor_out = finish_executor(workers, executor, !done->ok() || (*done)->interrupted || bool(caught));
  if (!done->ok()) throw_error(done->error());
  settings = (*done)->settings;  // the final search's ranges, when it widened one
  py::list trials;
  for (const trial& t : (*done)->trials) trials.append(trial_dict(settings, t));
  const trial* best = best_trial((*done)->trials);
  py::dict d;
  d["settings"] = settings_dict(settings);
  d["trials"] = trials;
  d["best"] = best ? py::object(trial_dict(settings, *best)) : py::object(py::none());
  d["interrupted"] = caught ? caught : py::object(py::none());
  d["executor"] = executor_out;
  d["sweep"] = session ? py::object(py::int_(session->id())) : py::object(py::none());
  d["resumed_trials"] = session ? session->stored_trials().size() : 0;
  // The answer (tuning_baselines.hpp): baselines, the best among trials and baselines
  // with its interval on fresh seeds, the front. The baselines run here on the spec's
  // backend; on a lab behind a controller they are not run (None).
  d["answer"] = py::none();
  d["answer_sentence"] = py::none();
  d["exports"] = py::none();
  if (!caught && controller_address.empty()) {
    answer_options o;
    o.fresh_seeds = fresh_seeds;
    o.parallelism = settings.parallelism;
    std::optional<result<tuning_answer>> answer;
    {
      py::gil_scoped_release release;
      answer.emplace(session ? session->answer(**done, o, local_config_runner(local_backends()))
                             : answer_tuning(spec, settings, (*done)->trials, o, local_config_runner(local_backends())));
    }
    if (!answer->ok()) throw_error(answer->error());
    d["answer"] = answer_json_text(settings, **answer);
    // The files `rocelab tune` exports, when export_dir= names where (sweep_exports.hpp).
    if (!exports.dir.empty()) {
      auto files = sweep_export_files(session ? session->id() : 0, spec, settings, (*done)->trials, **answer, exports);
      if (!files.ok()) throw_error(files.error());
      ok_or_throw(write_sweep_exports(*files, exports.dir, force ? existing_output::replace : existing_output::refuse));
      d["exports"] = files->json_text;
    }
    // The one sentence `rocelab tune` prints first under "answer".
    d["answer_sentence"] = answer_sentence(settings, **answer);
  }
  return d;
}

}  // namespace

void bind_tune(py::module_& m) {
  m.def(
      "field_number",
      [](const std::string& path, const std::string& text) { return value_or_throw(field_number(path, text), "spec"); },
      py::arg("path"), py::arg("text"),
      "A numeric spec field's value as that field understands it (bytes, ns, Gb/s, plain) from its text with "
      "units (\"20KiB\", \"300us\"); SpecError for an unknown field or a text it rejects");
  m.def(
      "tuning_settings",
      [](const experiment_spec& spec, const std::string& yaml_text, const std::string& source, std::uint32_t budget,
         const std::string& method, std::uint32_t parallelism, const std::string& name,
         const std::string& default_name) {
        return settings_dict(
            settings_from(spec, yaml_text, source, {budget, method, parallelism, name, default_name}));
      },
      py::arg("spec"), py::arg("tuning_yaml"), py::arg("source") = "<python>", py::arg("budget") = 0,
      py::arg("method") = "", py::arg("parallelism") = 0, py::arg("name") = "", py::arg("default_name") = "",
      "The sweep settings a tuning section resolves to (validated), as a dict");
  m.def(
      "tune",
      [](const experiment_spec& spec, const std::string& yaml_text, const std::string& source, std::uint32_t budget,
         const std::string& method, std::uint32_t parallelism, const std::string& name,
         const std::string& default_name, const py::object& on_trial, const std::string& controller,
         const std::string& token, std::int64_t connect_timeout_ms, const py::object& store_object,
         const py::object& resume, std::uint32_t fresh_seeds, const py::object& executor,
         const std::string& export_dir, double export_for_gbps, const std::vector<std::string>& ports,
         const std::string& nic_if, bool force) {
        return tune(spec, yaml_text, source, {budget, method, parallelism, name, default_name}, on_trial, controller,
                    token, connect_timeout_ms, store_object, resume, fresh_seeds, executor,
                    {export_dir, ports, nic_if, export_for_gbps}, force);
      },
      py::arg("spec"), py::arg("tuning_yaml"), py::arg("source") = "<python>", py::arg("budget") = 0,
      py::arg("method") = "", py::arg("parallelism") = 0, py::arg("name") = "", py::arg("default_name") = "",
      py::arg("on_trial") = py::none(), py::arg("controller") = "", py::arg("token") = "",
      py::arg("connect_timeout_ms") = 5000, py::arg("store") = py::none(), py::arg("resume") = true,
      py::arg("fresh_seeds") = 5, py::arg("executor") = py::none(), py::arg("export_dir") = "",
      py::arg("export_for_gbps") = 0.0, py::arg("ports") = std::vector<std::string>{}, py::arg("nic_if") = "IF",
      py::arg("force") = false,
        "Runs a tuning sweep (the `tuning:` section in tuning_yaml) over `spec`, here on its backend or, with "
        "controller=ADDR, each trial on the lab behind that controller, or with executor={kind, workers, ...} on "
        "workers (local processes or a Slurm job array). With store=, the sweep is kept as `rocelab tune` keeps it: "
      "resume=True continues the newest unfinished sweep of the same spec and search, False starts a new one, an "
      "int continues that sweep. export_dir= writes the files `rocelab tune --export-dir` writes (force=: replace "
      "them)");
}

}  // namespace rocelab::bindings
