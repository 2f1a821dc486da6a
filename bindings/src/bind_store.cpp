// The run store (store/run_store.hpp) from Python: where lab.run() keeps its runs and
// where rocelab.open_store(path).runs() reads them back (read-only opens work while a
// run is being written). The Python object owns the connection until close()
// (store_handle.hpp). Python reads runs and sweeps here; it writes them only through the
// run and sweep sessions every front end uses (bind_run.cpp's run_experiment(store=),
// bind_tune.cpp's tune(store=)), so a run is stored one way.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "records.hpp"
#include "store_handle.hpp"

#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/run/summary_metrics.hpp"
#include "rocelab/store/run_ending.hpp"
#include "rocelab/store/run_store.hpp"

namespace py = pybind11;

namespace rocelab::bindings {

store::run_store& store_handle::get() {
  if (!store_) throw_error(status(error_code::not_found, "run store " + path_ + " is closed"), "store");
  return *store_;
}

store::run_store* store_argument(const py::object& store_object) {
  if (store_object.is_none()) return nullptr;
  return &store_object.cast<store_handle&>().get();
}

namespace {

// with_spec: the resolved spec's YAML, which a listing of many runs leaves out.
py::dict info_dict(const store::run_info& r, bool with_spec = true) {
  py::dict d;
  d["id"] = r.id;
  d["name"] = r.name;
  d["backend"] = r.backend;
  d["seed"] = r.seed;
  d["status"] = store::to_string(r.status);
  d["error"] = r.error;
  d["started_unix_ns"] = r.started_unix_ns;
  d["ended_unix_ns"] = r.ended_unix_ns;
  d["sweep"] = r.sweep ? py::object(py::int_(*r.sweep)) : py::object(py::none());
  d["calibration"] = r.calibration ? py::object(py::int_(*r.calibration)) : py::object(py::none());
  if (with_spec) d["spec_yaml"] = r.spec_yaml;
  d["parameters"] = r.parameters;
  return d;
}

py::dict ending_dict(const store::run_ending& e) {
  py::dict d;
  d["status"] = store::to_string(e.status);
  d["flows"] = e.flows;
  d["completed"] = e.completed;
  d["note"] = e.note;
  return d;
}

std::vector<const run_records*> pointers(const std::vector<records_ptr>& repeats) {
  std::vector<const run_records*> out;
  for (const auto& r : repeats) {
    if (!r) throw py::value_error("records: None in the list of repeats");
    out.push_back(r.get());
  }
  return out;
}

// The run's key results (summary_metrics.hpp, as `rocelab runs show` names them, times
// with " ns" after the name: "fct p99 ns", "paused ns"), from its flows and totals through
// the summary `rocelab run` prints: metric name -> value, None for a count the run did not
// measure. Only the run's record tables are read, not its row or spec: the key results do
// not depend on the seed, so the summary carries none.
py::dict key_results(const store::run_store& s, std::int64_t id) {
  std::optional<result<run_records>> records;
  {
    py::gil_scoped_release release;
    records.emplace(s.load(id, store::load_parts::summary()));
  }
  const run_records loaded = value_or_throw(std::move(*records), "store");
  py::dict d;
  for (const auto& m : experiments::key_metrics(experiments::summarize({&loaded}, {})))
    d[py::str(m.duration_ns ? m.name + " ns" : m.name)] =
        m.measured ? py::object(py::float_(m.value)) : py::object(py::none());
  return d;
}

}  // namespace

void bind_store(py::module_& m) {
  m.def(
      "run_ending", [](const std::vector<records_ptr>& repeats) { return ending_dict(store::ending_of(pointers(repeats))); },
      py::arg("repeats"),
      "How a run of these repeats would be finished: {status: completed | partial, flows, completed, note}.");
  py::class_<store_handle>(m, "Store", "A run store (SQLite), open until close()")
      .def(py::init([](const std::string& path, bool read_only) {
             return store_handle(value_or_throw(
                 store::run_store::open(path, read_only ? store::open_mode::read_only : store::open_mode::read_write),
                 "store"));
           }),
           py::arg("path"), py::arg("read_only") = false)
      .def_property_readonly("path", &store_handle::path)
      .def_property_readonly("closed", &store_handle::closed)
      .def("close", &store_handle::close, "Closes the database connection; every later use raises StoreError")
      .def(
          "runs",
          [](store_handle& h, bool with_spec) {
            auto& s = h.get();
            auto runs = value_or_throw(s.runs(with_spec ? store::with_spec_yaml::yes : store::with_spec_yaml::no), "store");
            py::list out;
            for (const auto& r : runs) out.append(info_dict(r, with_spec));
            return out;
          },
          py::arg("with_spec") = false,
          "Every run's row, oldest first; spec_yaml (the resolved spec) only with with_spec")
      .def(
          "key_results", [](store_handle& h, std::int64_t id) { return key_results(h.get(), id); }, py::arg("id"),
          "The run's key results as `rocelab runs show` names them, times with \" ns\" (metric -> value, None when "
          "not measured)")
      .def(
          "run", [](store_handle& h, std::int64_t id) { return info_dict(value_or_throw(h.get().run(id), "store")); },
          py::arg("id"))
      .def("sweeps",
           [](store_handle& h) {
             auto& s = h.get();
             py::list out;
             for (const auto& w : value_or_throw(s.sweeps(), "store")) {
               py::dict d;
               d["id"] = w.id, d["name"] = w.name, d["method"] = w.method, d["spec_yaml"] = w.spec_yaml;
               d["budget"] = w.budget, d["started_unix_ns"] = w.started_unix_ns;
               out.append(d);
             }
             return out;
           })
      .def(
          "trials",
          [](store_handle& h, std::int64_t sweep) {
            auto& s = h.get();
            py::list out;
            for (const auto& t : value_or_throw(s.trials(sweep), "store")) {
              py::dict d;
              d["sweep"] = t.sweep, d["index"] = t.index, d["params"] = t.params, d["objective"] = t.objective;
              d["feasible"] = t.feasible;
              d["run"] = t.run ? py::object(py::int_(*t.run)) : py::object(py::none());
              d["metrics_json"] = t.metrics_json;
              out.append(d);
            }
            return out;
          },
          py::arg("sweep"))
      .def(
          "load",
          [](store_handle& h, std::int64_t id) {
            auto& s = h.get();
            std::optional<result<run_records>> r;
            {
              py::gil_scoped_release release;
              r.emplace(s.load(id));
            }
            return std::make_shared<run_records>(value_or_throw(std::move(*r), "store"));
          },
          py::arg("id"));
}

}  // namespace rocelab::bindings
