// Buffer validation from Python (experiments/buffers/buffers.hpp): what `rocelab buffers` runs,
// returned as its JSON (rocelab/buffers.py makes DataFrames of it) and its HTML page.
// Twin runs with the GIL released; progress lines call back into Python; Ctrl-C stops it
// at the next poll.
#include <chrono>
#include <optional>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_poll.hpp"
#include "rocelab/experiments/buffers/buffers.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

using namespace experiments;

py::dict buffers(const experiment_spec& spec, const std::vector<std::string>& profile_paths,
                 std::int64_t p99_target_ns, double max_buffer_factor, double buffer_tolerance,
                 std::uint32_t max_degree, const py::object& on_progress, int poll_ms) {
  std::vector<fabric_profile_file> profiles;
  for (const std::string& path : profile_paths) {
    auto p = load_fabric_profile(path);
    if (!p.ok()) throw_spec_error(p.error(), "profiles");
    profiles.push_back(std::move(p).value());
  }
  buffers_settings settings;
  settings.p99_target_ns = p99_target_ns;
  settings.max_buffer_factor = max_buffer_factor;
  settings.buffer_tolerance = buffer_tolerance;
  settings.max_degree = max_degree;
  interrupt_poll poll{std::chrono::milliseconds(poll_ms)};
  settings.cancel_requested = [&] { return poll(); };
  const auto progress = python_progress(on_progress, poll);
  std::optional<result<buffers_result>> ran;
  {
    py::gil_scoped_release release;
    ran.emplace(validate_buffers(spec, profiles, settings, progress));
  }
  return reported_result(poll, *ran, [](py::dict& d, const buffers_result& b) {
    d["json"] = buffers_json(b);
    d["html"] = buffers_html(b);
  });
}

}  // namespace

void bind_buffers(py::module_& m) {
  m.def("buffers", &buffers, py::arg("spec"), py::arg("profiles"), py::arg("p99_target_ns") = 0,
        py::arg("max_buffer_factor") = 8.0, py::arg("buffer_tolerance") = 0.05, py::arg("max_degree") = 0,
        py::arg("on_progress") = py::none(), py::arg("poll_ms") = 20,
        "Validates switch buffers (`rocelab buffers`) for a spec across profile files. Returns {json, html, "
        "interrupted: the exception that stopped it or None}");
}

}  // namespace rocelab::bindings
