// Running a spec from Python. The run releases the GIL (notebook kernels stay responsive
// and other Python threads run) and polls Python's signal handlers through the runner's
// cancel hook, so Ctrl-C (KeyboardInterrupt) ends a twin run within milliseconds with
// its records so far; rocelab/lab.py then stores the run as interrupted and re-raises.
#include <chrono>

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_poll.hpp"
#include "records.hpp"
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

py::dict run(const experiments::experiment_spec& spec, const py::object& on_repeat, const std::string& lab_name,
             const std::string& rocelab_binary, bool keep_lab, bool capture, const std::string& log_dir,
             int poll_ms) {
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
      py::dict d;
      d["seeds"] = py::list();
      d["repeats"] = py::list();
      d["interrupted"] = poll.caught();
      d["error"] = ran->error().message();
      return d;
    }
    throw_error(ran->error(), ran->error().code() == error_code::invalid_argument ? "spec" : "");
  }
  py::list repeats;
  for (auto& r : (*ran)->repeats) repeats.append(std::make_shared<run_records>(std::move(r)));
  py::dict d;
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
        py::arg("log_dir") = "", py::arg("poll_ms") = 20,
        "Runs a spec on its backend (GIL released). Returns {seeds, repeats: [Records], interrupted: "
        "the exception that stopped it or None, error}");
  m.def("summary_json", &summarize, py::arg("repeats"), py::arg("seeds"), py::arg("run_id") = "",
        py::arg("backend") = "", py::arg("name") = "",
        "The summary `rocelab run --json` prints, pooled over the repeats, as JSON text");
}

}  // namespace rocelab::bindings
