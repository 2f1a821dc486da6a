// The fabric decision report from Python (experiments/compare/compare.hpp): the comparison
// `rocelab compare` runs, with its data returned as the report's JSON (rocelab/compare.py
// turns it into DataFrames) and its HTML page. The comparison runs with the GIL released;
// progress lines call back into Python; Ctrl-C stops it at the next poll (the runs it
// already stored stay in the store).
#include <chrono>
#include <optional>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_poll.hpp"
#include "store_handle.hpp"

#include "rocelab/experiments/compare/compare.hpp"
#include "rocelab/store/run_store.hpp"

namespace py = pybind11;

namespace rocelab::bindings {

namespace {

using namespace experiments;

template <typename T>
T take(const py::dict& d, const char* key, T fallback) {
  return d.contains(key) && !d[key].is_none() ? d[key].cast<T>() : fallback;
}

// Keyword settings over those of the spec file's compare: section. Sizes are numbers of
// bytes here (rocelab/compare.py parses "1MiB" with the spec's own parser).
void apply(const py::dict& d, compare_settings& s) {
  s.fabrics = take(d, "fabrics", s.fabrics);
  s.profiles_dir = take(d, "profiles_dir", s.profiles_dir);
  s.compute_ms_per_step = take(d, "compute_ms_per_step", s.compute_ms_per_step);
  s.small_message_bytes = take(d, "small_message_bytes", s.small_message_bytes);
  s.seeds = take(d, "seeds", s.seeds);
  s.tune_budget = take(d, "tune_budget", s.tune_budget);
  if (d.contains("tune_method") && !d["tune_method"].is_none()) {
    auto m = parse_tuning_method(d["tune_method"].cast<std::string>());
    if (!m.ok()) throw_spec_error(m.error(), "tune_method");
    s.tune_method = *m;
  }
  s.scale_hosts = take(d, "scale_hosts", s.scale_hosts);
  s.scale_hosts_per_leaf = take(d, "scale_hosts_per_leaf", s.scale_hosts_per_leaf);
  s.scale_oversubscription = take(d, "scale_oversubscription", s.scale_oversubscription);
  s.scale_allreduce_bytes = take(d, "scale_allreduce_bytes", s.scale_allreduce_bytes);
}

// `spec` is the resolved spec (file plus overrides); `compare_file`, when given, is the
// spec file whose compare: section sets the defaults (its profile paths relative to it).
py::dict compare(const experiment_spec& spec, const std::string& compare_file, const py::dict& options,
                 const py::object& store_object, const py::object& on_progress, int poll_ms) {
  compare_settings settings;
  if (!compare_file.empty()) {
    auto loaded = load_compare_spec(compare_file, settings);
    if (!loaded.ok()) throw_spec_error(loaded.error());
  }
  apply(options, settings);
  if (status st = load_profiles(settings); !st.ok()) throw_spec_error(st, "profiles");

  store::run_store* store = store_argument(store_object);

  interrupt_poll poll{std::chrono::milliseconds(poll_ms)};
  settings.cancel_requested = [&] { return poll(); };
  const compare_progress progress = python_progress(on_progress, poll);
  std::optional<result<compare_result>> ran;
  {
    py::gil_scoped_release release;
    ran.emplace(run_compare(spec, settings, store, progress));
  }
  return reported_result(poll, *ran, [](py::dict& d, const compare_result& c) {
    d["json"] = compare_json(c);
    d["html"] = compare_html(c);
  });
}

}  // namespace

void bind_compare(py::module_& m) {
  m.def("compare", &compare, py::arg("spec"), py::arg("compare_file") = "", py::arg("options") = py::dict(), py::arg("store") = py::none(),
        py::arg("on_progress") = py::none(), py::arg("poll_ms") = 20,
        "Runs the fabric comparison (`rocelab compare`) on a spec, with the compare: section of compare_file (if any) under the options. Returns "
        "{json: the report's data, html: the report page, interrupted: the exception that stopped it or None}");
}

}  // namespace rocelab::bindings
