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

#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
#include "rocelab/controller/client.hpp"
#endif
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
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
  py::list params;
  for (const auto& p : s.parameters) params.append(p.path);
  d["parameters"] = params;
  return d;
}

tuning_settings settings_from(const experiment_spec& spec, const std::string& yaml_text, const std::string& source,
                              std::uint32_t budget, const std::string& method, std::uint32_t parallelism,
                              const std::string& name) {
  auto s = load_tuning(yaml_text, source, spec);
  if (!s) throw_spec_error(s.error());
  if (budget > 0) s->budget = budget;
  if (parallelism > 0) s->parallelism = parallelism;
  if (!name.empty()) s->name = name;
  if (!method.empty()) {
    auto m = parse_tuning_method(method);
    if (!m) throw_spec_error(m.error(), "tuning.method");
    s->method = *m;
  }
  if (auto st = validate(*s); !st.ok()) throw_spec_error(st);
  return std::move(*s);
}

// Trials on a lab behind a controller: each trial's spec is submitted as `rocelab run
// SPEC --controller` submits it, the controller runs and stores it, and its summary
// scores the trial. One lab runs one trial at a time.
trial_runner controller_runner(const std::string& address, const std::string& token, std::int64_t timeout_ms) {
#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
  return [address, token, timeout_ms](const experiment_spec& spec) -> result<trial_runs> {
    controller::submit_options options;
    options.controller = address;
    options.token = token;
    options.connect_timeout = std::chrono::milliseconds(timeout_ms);
    // The controller opens no path a client names: the trial's files travel inlined.
    experiment_spec sent = spec;
    if (auto st = experiments::inline_file_references(sent); !st.ok()) return st;
    auto done = controller::submit_spec(options, to_yaml(sent), "<tuning trial>", {});
    if (!done.ok()) return std::move(done).error();
    if (done->status != "completed")
      return status(error_code::unavailable, "run " + std::to_string(done->run) + " on " + address + " " +
                                                 done->status + (done->error.empty() ? "" : ": " + done->error));
    auto parsed = parse_summary_json(done->summary_json);
    if (!parsed.ok()) return std::move(parsed).error().with_context("the summary of run " + std::to_string(done->run));
    trial_runs r;
    r.seeds = parsed->aggregate.seeds;
    r.summaries = parsed->each.empty() ? std::vector<run_summary>{parsed->aggregate} : parsed->each;
    r.summary_json = done->summary_json;
    r.run_id = done->run;
    return r;
  };
#else
  (void)token;
  (void)timeout_ms;
  return [address](const experiment_spec&) -> result<trial_runs> {
    return status(error_code::unavailable, "cannot tune on " + address + ": this build has no controller client");
  };
#endif
}

// on_trial(trial: dict, repeats: [Records], seeds, spec_yaml, applied) -> run id (int) or None.
py::dict tune(const experiment_spec& spec, const std::string& yaml_text, const std::string& source,
              std::uint32_t budget, const std::string& method, std::uint32_t parallelism, const std::string& name,
              const py::object& on_trial, const py::list& history_in, const std::string& controller_address,
              const std::string& controller_token, std::int64_t connect_timeout_ms, const py::object& store_object,
              std::int64_t sweep, std::uint32_t fresh_seeds) {
  tuning_settings settings = settings_from(spec, yaml_text, source, budget, method, parallelism, name);
  if (!controller_address.empty()) settings.parallelism = 1;
  std::vector<trial> history;
  for (const auto& h : history_in) {
    const py::dict d = h.cast<py::dict>();
    trial t;
    t.index = d["index"].cast<std::uint32_t>();
    for (const auto& p : settings.parameters) t.values.push_back(d["values"][py::str(p.path)].cast<double>());
    t.evaluated = d["evaluated"].cast<bool>();
    t.objective = d["objective"].cast<double>();
    t.feasible = d["feasible"].cast<bool>();
    t.metrics_json = d.contains("metrics_json") ? d["metrics_json"].cast<std::string>() : std::string();
    history.push_back(std::move(t));
  }
  std::atomic<bool> stop{false};
  py::object caught;
  sweep_hooks hooks;
  hooks.stop = &stop;
  hooks.on_trial = [&](trial& t, trial_payload& payload) -> status {
    py::gil_scoped_acquire gil;
    try {
      if (!on_trial.is_none()) {
        py::list repeats;
        for (auto& r : payload.repeats) repeats.append(std::make_shared<run_records>(std::move(r)));
        payload.repeats.clear();
        py::object run_id = on_trial(trial_dict(settings, t), repeats, payload.seeds, payload.spec_yaml,
                                     payload.applied);
        if (!run_id.is_none()) t.run_id = run_id.cast<std::int64_t>();
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    } catch (py::error_already_set& e) {
      caught = e.value();
      stop = true;
    }
    return status::success();
  };
  std::optional<result<std::vector<trial>>> done;
  {
    py::gil_scoped_release release;
    done.emplace(run_sweep(settings,
                           controller_address.empty()
                               ? spec_evaluator(spec, settings, local_backends())
                               : spec_evaluator(spec, settings,
                                                controller_runner(controller_address, controller_token,
                                                                  connect_timeout_ms)),
                           std::move(history), hooks));
  }
  if (!done->ok()) throw_error(done->error());
  py::list trials;
  for (const trial& t : **done) trials.append(trial_dict(settings, t));
  const trial* best = best_trial(**done);
  py::dict d;
  d["settings"] = settings_dict(settings);
  d["trials"] = trials;
  d["best"] = best ? py::object(trial_dict(settings, *best)) : py::object(py::none());
  d["interrupted"] = caught ? caught : py::object(py::none());
  // The answer (tuning_baselines.hpp): baselines, the best among trials and baselines
  // with its interval on fresh seeds, the front. The baselines run here on the spec's
  // backend; on a lab behind a controller they are not run (None).
  d["answer"] = py::none();
  if (!caught && controller_address.empty()) {
    answer_options o;
    o.fresh_seeds = fresh_seeds;
    o.parallelism = settings.parallelism;
    if (!store_object.is_none()) {
      o.db = store_object.cast<store::run_store*>();
      o.sweep = sweep;
    }
    std::optional<result<tuning_answer>> answer;
    {
      py::gil_scoped_release release;
      answer.emplace(answer_tuning(spec, settings, **done, o, local_config_runner(local_backends())));
    }
    if (!answer->ok()) throw_error(answer->error());
    d["answer"] = answer_json_text(settings, **answer);
  }
  return d;
}

}  // namespace

void bind_tune(py::module_& m) {
  m.def(
      "tuning_settings",
      [](const experiment_spec& spec, const std::string& yaml_text, const std::string& source, std::uint32_t budget,
         const std::string& method, std::uint32_t parallelism, const std::string& name) {
        return settings_dict(settings_from(spec, yaml_text, source, budget, method, parallelism, name));
      },
      py::arg("spec"), py::arg("tuning_yaml"), py::arg("source") = "<python>", py::arg("budget") = 0,
      py::arg("method") = "", py::arg("parallelism") = 0, py::arg("name") = "",
      "The sweep settings a tuning section resolves to (validated), as a dict");
  m.def("tune", &tune, py::arg("spec"), py::arg("tuning_yaml"), py::arg("source") = "<python>",
        py::arg("budget") = 0, py::arg("method") = "", py::arg("parallelism") = 0, py::arg("name") = "",
        py::arg("on_trial") = py::none(), py::arg("history") = py::list(), py::arg("controller") = "",
        py::arg("token") = "", py::arg("connect_timeout_ms") = 5000, py::arg("store") = py::none(),
        py::arg("sweep") = 0, py::arg("fresh_seeds") = 5,
        "Runs a tuning sweep (the `tuning:` section in tuning_yaml) over `spec`, here on its backend or, with "
        "controller=ADDR, each trial on the lab behind that controller");
}

}  // namespace rocelab::bindings
