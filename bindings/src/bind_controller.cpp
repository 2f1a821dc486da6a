// A running controller from Python (controller/client.hpp): rocelab.connect(ADDR,
// token=...) submits resolved specs to it, as `rocelab run SPEC --controller ADDR` does,
// and waits (GIL released) for the run it stores in its own run store.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "interrupt_poll.hpp"

#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
#include "rocelab/controller/client.hpp"
#endif

namespace py = pybind11;

namespace rocelab::bindings {

#ifdef ROCELAB_HAVE_CONTROLLER_CLIENT
void bind_controller(py::module_& m) {
  m.attr("have_controller_client") = true;
  m.def(
      "submit_spec",
      [](const std::string& controller, const std::string& token, const std::string& spec_yaml,
         const std::string& source, std::int64_t connect_timeout_ms) {
        controller::submit_options options;
        options.controller = controller;
        options.token = token;
        options.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
        // Ctrl-C closes the connection: the controller stops the run and stores it
        // interrupted with what it measured (controller/client.hpp).
        interrupt_poll poll{std::chrono::milliseconds(50)};
        options.cancel_requested = [&poll] { return poll(); };
        std::optional<result<protocol::run_finished>> done;
        {
          py::gil_scoped_release release;
          done.emplace(controller::submit_spec(options, spec_yaml, source, {}));
        }
        py::dict d;
        d["interrupted"] = poll.caught();
        if (poll.stopped()) {
          d["run"] = 0;
          d["status"] = "interrupted";
          d["error"] = done->ok() ? std::string() : done->error().message();
          d["summary_json"] = "";
          return d;
        }
        if (!done->ok()) throw_error(done->error());
        d["run"] = (*done)->run;
        d["status"] = (*done)->status;
        d["error"] = (*done)->error;
        d["summary_json"] = (*done)->summary_json;
        return d;
      },
      py::arg("controller"), py::arg("token"), py::arg("spec_yaml"), py::arg("source") = "<python>",
      py::arg("connect_timeout_ms") = 5000,
      "Submits a resolved spec to a controller and waits for the run (GIL released): {run, status, error, "
      "summary_json, interrupted}. Ctrl-C closes the connection, so the controller stops the run and stores it "
      "interrupted; then status is 'interrupted' and interrupted holds the KeyboardInterrupt.");
}
#else
void bind_controller(py::module_& m) {
  m.attr("have_controller_client") = false;
}
#endif

}  // namespace rocelab::bindings
