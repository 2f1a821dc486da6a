// Running a spec from Python. The run releases the GIL (notebook kernels stay responsive
// and other Python threads run) and polls Python's signal handlers through the runner's
// cancel hook, so Ctrl-C (KeyboardInterrupt) ends a twin run within milliseconds with
// its records so far. With a store, the run is kept there through a run session
// (experiments/run/run_session.hpp) as `rocelab run` keeps it: one run, each repeat's
// records as that repeat, completed or partial, interrupted after a Ctrl-C (with its
// records so far), failed when it did not run; rocelab/lab.py then re-raises.
#include <chrono>

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_poll.hpp"
#include "records.hpp"
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/run/run_session.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "store_handle.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

// An interrupted run's note in the store: what stopped it.
std::string interrupted_note(const py::object& caught) {
  return "interrupted from Python: " +
         (caught.is_none() ? std::string("stopped") : py::type::of(caught).attr("__name__").cast<std::string>());
}

// The stored run's begin: the spec's name (or `name`), the backend, the resolved spec and
// `parameters`.
store::new_run stored_run(const experiments::experiment_spec& spec, const std::string& name,
                          const std::map<std::string, std::string>& parameters) {
  store::new_run nr;
  nr.name = name.empty() ? spec.name : name;
  nr.backend = spec.backend;
  nr.seed = spec.seed;
  nr.spec_yaml = experiments::to_yaml(spec);
  nr.parameters = parameters;
  return nr;
}

py::dict run(const experiments::experiment_spec& spec, const py::object& on_repeat, const std::string& lab_name,
             const std::string& rocelab_binary, bool keep_lab, bool capture, const std::string& log_dir,
             int poll_ms, const py::object& store_object, const std::string& name,
             const std::map<std::string, std::string>& parameters) {
  std::optional<experiments::run_session> session;
  if (store::run_store* db = store_argument(store_object))
    session.emplace(value_or_throw(experiments::run_session::begin(*db, stored_run(spec, name, parameters)), "store"));
  const py::object run_id = session ? py::object(py::int_(session->id())) : py::object(py::none());
  experiments::virtual_backend_options options;
  options.lab_name = lab_name;
  options.rocelab_binary = rocelab_binary;
  options.keep_lab = keep_lab;
  options.capture = capture;
  options.log_dir = log_dir;

  interrupt_poll poll{std::chrono::milliseconds(poll_ms)};
  std::function<void(std::uint32_t, std::uint64_t)> repeat_hook;
  if (!on_repeat.is_none())
    repeat_hook = [&](std::uint32_t i, std::uint64_t seed) {
      py::gil_scoped_acquire gil;
      try {
        on_repeat(i, seed);
      } catch (py::error_already_set& e) {
        e.restore();
        poll.take_error();
      }
    };
  std::optional<result<experiments::experiment_result>> ran;
  {
    py::gil_scoped_release release;
    ran.emplace(experiments::run_experiment(spec, repeat_hook, options, [&] { return poll(); }));
  }
  if (!ran->ok()) {
    // A run cut short before anything ran still reports the interrupt, not a failure.
    if (poll.stopped()) {
      if (session) ok_or_throw(session->finish_interrupted(interrupted_note(poll.caught())), "store");
      py::dict d;
      d["run_id"] = run_id;
      d["seeds"] = py::list();
      d["repeats"] = py::list();
      d["interrupted"] = poll.caught();
      d["error"] = ran->error().message();
      return d;
    }
    if (session) ok_or_throw(session->finish_failed(ran->error().message()), "store");
    throw_error(ran->error(), ran->error().code() == error_code::invalid_argument ? "spec" : "");
  }
  py::dict d;
  d["run_id"] = run_id;
  d["status"] = py::none();
  if (session) {
    auto& repeats = (*ran)->repeats;
    for (std::uint32_t i = 0; i < repeats.size(); ++i) ok_or_throw(session->append_repeat(i, repeats[i]), "store");
    if (poll.stopped()) {
      ok_or_throw(session->finish_interrupted(interrupted_note(poll.caught())), "store");
      d["status"] = "interrupted";
    } else {
      d["status"] = store::to_string(value_or_throw(session->finish_ran(repeats), "store").status);
    }
  }
  py::list repeats;
  for (auto& r : (*ran)->repeats) repeats.append(std::make_shared<run_records>(std::move(r)));
  d["seeds"] = (*ran)->seeds;
  d["repeats"] = repeats;
  d["interrupted"] = poll.caught();
  d["error"] = py::none();
  return d;
}

std::string summarize(const std::vector<records_ptr>& repeats, const std::vector<std::uint64_t>& seeds,
                      const std::string& run_id, const std::string& backend, const std::string& name) {
  if (repeats.size() != seeds.size()) throw std::invalid_argument("summarize: one seed per repeat");
  std::vector<const run_records*> all;
  std::vector<experiments::run_summary> each;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    all.push_back(repeats[i].get());
    each.push_back(experiments::summarize({repeats[i].get()}, {seeds[i]}));
  }
  return experiments::summary_json({run_id, backend, name}, experiments::summarize(all, seeds), each);
}

}  // namespace

void bind_run(py::module_& m) {
  m.def("run_experiment", &run, py::arg("spec"), py::arg("on_repeat") = py::none(), py::arg("lab_name") = "run",
        py::arg("rocelab_binary") = "", py::arg("keep_lab") = false, py::arg("capture") = true,
        py::arg("log_dir") = "", py::arg("poll_ms") = 20, py::arg("store") = py::none(), py::arg("name") = "",
        py::arg("parameters") = std::map<std::string, std::string>{},
        "Runs a spec on its backend (GIL released). Returns {seeds, repeats: [Records], interrupted: "
        "the exception that stopped it or None, error, run_id, status}; with store=, the run is kept there as "
        "`rocelab run` keeps it (one run, each repeat's records as that repeat; run_id and its status)");
  m.def("summary_json", &summarize, py::arg("repeats"), py::arg("seeds"), py::arg("run_id") = "",
        py::arg("backend") = "", py::arg("name") = "",
        "The summary `rocelab run --json` prints, pooled over the repeats, as JSON text");
}

}  // namespace rocelab::bindings
