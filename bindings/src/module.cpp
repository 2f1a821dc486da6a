// The `_rocelab` extension: a private module the `rocelab` Python package re-exports.
// It holds no logic of its own; each bind_*.cpp exposes one C++ folder.
#include "bindings.hpp"

PYBIND11_MODULE(_rocelab, m) {
  m.doc() = "rocelab's C++ core (specs, the twin and virtual backends, records, the run store)";
  rocelab::bindings::bind_errors(m);
  rocelab::bindings::bind_spec(m);
  rocelab::bindings::bind_records(m);
  rocelab::bindings::bind_run(m);
  rocelab::bindings::bind_store(m);
  rocelab::bindings::bind_report(m);
  rocelab::bindings::bind_tune(m);
  rocelab::bindings::bind_compare(m);
  rocelab::bindings::bind_buffers(m);
  rocelab::bindings::bind_qualify(m);
  rocelab::bindings::bind_controller(m);
}
