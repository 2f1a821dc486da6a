// The run report (experiments/report/report.hpp) as HTML text, for Run.report() to show inline
// in a notebook: the same page `rocelab report RUN` writes.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"
#include "rocelab/experiments/report/report.hpp"

namespace py = pybind11;

namespace rocelab::bindings {

void bind_report(py::module_& m) {
  m.def(
      "report_html",
      [](const records_ptr& records, const std::string& spec_yaml, std::uint64_t seed, const std::string& run_id,
         const std::string& name, const std::string& backend, const std::string& status) {
        run_records copy = *records;  // the analysis extends pauses with counter-derived ones
        py::gil_scoped_release release;
        experiments::report_header header;
        header.run_id = run_id;
        header.name = name;
        header.backend = backend;
        header.status = status;
        const auto analysis = experiments::analyze_run_with_spec(std::move(copy), header, spec_yaml, seed);
        return experiments::report_html(analysis);
      },
      py::arg("records"), py::arg("spec_yaml"), py::arg("seed"), py::arg("run_id") = "", py::arg("name") = "",
      py::arg("backend") = "", py::arg("status") = "",
      "The self-contained HTML report of one run (inline SVG plots)");
}

}  // namespace rocelab::bindings
