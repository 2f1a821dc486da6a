// Switch qualification from Python (experiments/qualify/qualify.hpp): what `rocelab qualify`
// runs -- the twin's switch model for backend twin, the virtual lab's soft switch for
// backend virtual (root) -- returned as its JSON (rocelab/qualify.py makes DataFrames of
// it) and its HTML page. Runs with the GIL released; Ctrl-C stops it at the next step.
#include <chrono>
#include <optional>

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_poll.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/qualify/qualify.hpp"
#include "rocelab/experiments/lab/qualify_lab.hpp"
#include "rocelab/experiments/qualify/qualify_model.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

using namespace experiments;

py::dict qualify(const experiment_spec& spec, std::uint32_t samples, std::uint32_t points, std::uint32_t frame_bytes,
                 bool watchdog, const std::string& lab_name, const std::string& rocelab_binary,
                 const py::object& /*on_progress*/, int poll_ms) {
  if (auto st = validate(spec); !st.ok()) throw_spec_error(st);
  qualify_plan plan;
  plan.ecn_samples = samples;
  plan.ecn_points = points;
  plan.frame_bytes = frame_bytes > 0 ? frame_bytes
                                     : static_cast<std::uint32_t>(fabric::twin::roce_max_frame_bytes(spec.nic.mtu_bytes));
  plan.watchdog = watchdog;
  plan.lossless_priority = static_cast<std::uint8_t>(spec.nic.data_priority);
  interrupt_poll poll{std::chrono::milliseconds(poll_ms)};
  plan.cancel_requested = [&] { return poll(); };
  std::optional<result<qualify_result>> ran;
  {
    py::gil_scoped_release release;
    const backend_kind kind = backend_traits_of(spec.backend).kind;
    if (kind == backend_kind::twin) {
      auto twin = to_twin_config(spec, spec.seed);
      auto cfg = twin.ok() ? fabric::twin::switch_config_of(*twin) : result<fabric::switch_config>(twin.error());
      if (!cfg.ok()) {
        ran.emplace(cfg.error());
      } else {
        model_switch_under_test target;
        ran.emplace(qualify_switch(target, *cfg, plan));
      }
    } else if (kind == backend_kind::virtual_lab) {
      ran.emplace(qualify_virtual_lab(spec, plan, lab_name, rocelab_binary));
    } else {
      ran.emplace(status(error_code::unsupported, "qualify: backend '" + spec.backend +
                                                      "' (a real switch needs hosts to send from); use twin or virtual"));
    }
  }
  return reported_result(poll, *ran, [](py::dict& d, const qualify_result& q) {
    d["json"] = qualify_json(q);
    d["html"] = qualify_html(q);
    d["table"] = qualify_table(q);
  });
}

}  // namespace

void bind_qualify(py::module_& m) {
  m.def("qualify", &qualify, py::arg("spec"), py::arg("samples") = 200, py::arg("points") = 7,
        py::arg("frame_bytes") = 0, py::arg("watchdog") = true, py::arg("lab_name") = "qualify",
        py::arg("rocelab_binary") = "", py::arg("on_progress") = py::none(), py::arg("poll_ms") = 20,
        "Qualifies the spec's switch (`rocelab qualify`). Returns {json, html, table, interrupted: the exception "
        "that stopped it or None}");
}

}  // namespace rocelab::bindings
