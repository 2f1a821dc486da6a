#pragma once
// One bind_<area>() per C++ folder the module exposes; module.cpp calls them in order.

#include <pybind11/pybind11.h>

namespace rocelab::bindings {

void bind_errors(pybind11::module_& m);
void bind_spec(pybind11::module_& m);
void bind_records(pybind11::module_& m);
void bind_run(pybind11::module_& m);
void bind_store(pybind11::module_& m);
void bind_report(pybind11::module_& m);
void bind_tune(pybind11::module_& m);
void bind_compare(pybind11::module_& m);
void bind_buffers(pybind11::module_& m);
void bind_qualify(pybind11::module_& m);
void bind_controller(pybind11::module_& m);

}  // namespace rocelab::bindings
