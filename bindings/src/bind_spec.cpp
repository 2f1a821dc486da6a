// rocelab::experiments specs in Python: the same field table, loader and validation as
// `rocelab run`, so a field path, a value with units and every error message are the
// CLI's. Python builds specs by setting dotted paths (rocelab/spec.py turns
// Incast(senders=16, ...) into "workload.incast.senders" = "16").
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "rocelab/common/units.hpp"
#include "errors.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

using experiments::experiment_spec;

const char* type_name(experiments::field_type t) {
  switch (t) {
    case experiments::field_type::boolean: return "boolean";
    case experiments::field_type::integer: return "integer";
    case experiments::field_type::size: return "size";
    case experiments::field_type::duration: return "duration";
    case experiments::field_type::rate_gbps: return "rate_gbps";
    case experiments::field_type::real: return "real";
    case experiments::field_type::text: return "text";
    case experiments::field_type::choice: return "choice";
    case experiments::field_type::host_list: return "host_list";
  }
  return "text";
}

}  // namespace

void bind_spec(py::module_& m) {
  py::class_<experiment_spec>(m, "Spec", "An experiment spec (the C++ experiment_spec); see rocelab.spec")
      .def(py::init<>(), "A spec with every field at its default (no workload yet)")
      .def_static(
          "load",
          [](const std::string& path) {
            return value_or_throw(experiments::load_spec_file(path), "spec");
          },
          py::arg("path"), "Loads a YAML spec file; errors name file:line and the field")
      .def_static(
          "parse",
          [](const std::string& text, const std::string& source) {
            return value_or_throw(experiments::load_spec(text, source), "spec");
          },
          py::arg("text"), py::arg("source") = "<python>", "Parses YAML text")
      .def(
          "set",
          [](experiment_spec& s, const std::string& path, const std::string& value, const std::string& origin) {
            if (auto st = experiments::set_field(s, path, value, origin); !st.ok())
              throw_spec_error(st.with_context(origin), path);
          },
          py::arg("path"), py::arg("value"), py::arg("origin") = "python",
          "Sets a field from text with units (\"20KiB\", \"10us\", \"100Gbps\")")
      .def(
          "get", [](const experiment_spec& s, const std::string& path) {
            auto v = experiments::get_field(s, path);
            if (!v) throw_spec_error(v.error(), path);
            return *v;
          },
          py::arg("path"))
      .def(
          "validate",
          [](const experiment_spec& s) {
            if (auto st = experiments::validate(s); !st.ok()) throw_spec_error(st);
          },
          "Cross-field checks, as `rocelab run` does before running")
      .def(
          "inline_files",
          [](experiment_spec& s) {
            if (auto st = experiments::inline_file_references(s); !st.ok()) throw_spec_error(st);
          },
          "Reads the files the spec names (a background CDF) into the spec, so it carries data, not "
          "paths: what a spec sent to a controller must do (bounded reads; errors name the field)")
      .def("to_yaml", [](const experiment_spec& s) { return experiments::to_yaml(s); },
           "The resolved spec: every field, loadable again")
      .def("copy", [](const experiment_spec& s) { return experiment_spec(s); })
      .def_property_readonly("backend", [](const experiment_spec& s) { return s.backend; })
      .def_property_readonly("name", [](const experiment_spec& s) { return s.name; })
      .def_property_readonly("seed", [](const experiment_spec& s) { return s.seed; })
      .def_property_readonly("repeats", [](const experiment_spec& s) { return s.repeats; })
      .def_property_readonly("source_file", [](const experiment_spec& s) { return s.source_file; })
      .def_property_readonly("origins", [](const experiment_spec& s) { return s.origins; })
      .def("__copy__", [](const experiment_spec& s) { return experiment_spec(s); })
      .def("__deepcopy__", [](const experiment_spec& s, py::dict) { return experiment_spec(s); });

  m.def(
      "fields",
      [] {
        py::list out;
        for (const auto& f : experiments::field_table())
          out.append(py::make_tuple(f.path, type_name(f.type), f.help, f.choices));
        return out;
      },
      "Every spec field as (path, type, help, choices), in the order of the resolved spec");
  m.def("nearest_field", [](const std::string& path) { return experiments::nearest_path(path); }, py::arg("path"));
  m.def("is_section", [](const std::string& path) { return experiments::is_section(path); }, py::arg("path"));
  m.def(
      "parse_bytes",
      [](const std::string& text) {
        auto v = parse_size_bytes(text);
        if (!v.ok()) throw_spec_error(v.error());
        return *v;
      },
      py::arg("text"), "A size as the spec reads it (B, KiB, MiB, KB, MB, ...) in bytes");
  m.def(
      "parse_duration_ns",
      [](const std::string& text) {
        auto v = parse_duration_ns(text);
        if (!v.ok()) throw_spec_error(v.error());
        return *v;
      },
      py::arg("text"), "A duration as the spec reads it (ns, us, ms, s) in nanoseconds");
}

}  // namespace rocelab::bindings
