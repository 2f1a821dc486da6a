// Records to columns. Each *_columns() returns a dict of equally long 1-D numpy arrays
// (name -> array), one per field of the record's table (record_columns.hpp); index columns
// (host, device, kind, source) are numbers, and rocelab/run.py makes pandas Categoricals of
// them with the category names given here, without per-row strings.
#include <array>
#include <limits>
#include <random>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "record_columns.hpp"
#include "records.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

template <typename T, typename Record, typename Get>
py::object column(const std::vector<Record>& rows, Get get) {
  py::array_t<T> out(static_cast<py::ssize_t>(rows.size()));
  T* p = out.mutable_data();
  for (const auto& r : rows) *p++ = static_cast<T>(get(r));
  return out;
}

// NaN for flows that did not complete (or have no ideal time), so pandas skips them.
double slowdown_or_nan(const flow_record& f) {
  return f.completed() && f.ideal_fct_ns > 0 ? f.slowdown() : std::numeric_limits<double>::quiet_NaN();
}

// Columns computed from the records, where Python has always had them (several after one
// field: in this order).
constexpr std::array<derived_column<flow_record>, 2> flow_derived{{
    {"slowdown", "ideal_fct_ns", [](const std::vector<flow_record>& f) { return column<double>(f, slowdown_or_nan); },
     [](const flow_record& f) -> py::object { return py::float_(slowdown_or_nan(f)); }},
    {"completed", "ideal_fct_ns",
     [](const std::vector<flow_record>& f) { return column<bool>(f, [](const flow_record& x) { return x.completed(); }); },
     [](const flow_record& f) -> py::object { return py::bool_(f.completed()); }},
}};
constexpr std::array<derived_column<pause_interval>, 1> pause_derived{{
    {"duration_ns", "end_ns",
     [](const std::vector<pause_interval>& p) {
       return column<std::int64_t>(p, [](const pause_interval& x) { return x.end_ns - x.start_ns; });
     },
     [](const pause_interval& p) -> py::object { return py::int_(p.end_ns - p.start_ns); }},
}};

py::dict totals(const run_records& r) {
  const run_totals& t = r.totals;
  py::dict d;
  d["pfc_pause_frames"] = t.pfc_pause_frames;
  d["pfc_resume_frames"] = t.pfc_resume_frames;
  d["paused_ns"] = t.paused_ns;
  d["ce_marked"] = t.ce_marked;
  // None where nothing in the run counted them (a real lab's NICs): not measured, never 0.
  d["cnps"] = t.cnps_measured ? py::object(py::int_(t.cnps)) : py::none();
  d["drops"] = t.drops;
  d["retransmits"] = t.retransmits_measured ? py::object(py::int_(t.retransmits)) : py::none();
  d["packets_forwarded"] = t.packets_forwarded;
  return d;
}

// Flow records with plausible values for the conversion benchmark (bench/python/) and
// the dtype tests of large runs, where running a million flows through the twin would
// only measure the twin.
records_ptr synthetic_flows(std::size_t n, std::uint64_t seed) {
  auto r = std::make_shared<run_records>();
  r->backend = "synthetic";
  constexpr std::uint32_t hosts = 128;
  for (std::uint32_t h = 0; h < hosts; ++h) r->hosts.push_back("h" + std::to_string(h + 1));
  r->devices.push_back("sw0");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> host(0, hosts - 1);
  std::lognormal_distribution<double> size(10.0, 2.0);
  std::exponential_distribution<double> gap(1.0 / 200.0);
  std::uniform_real_distribution<double> stretch(1.0, 20.0);
  r->flows.resize(n);
  double t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    flow_record& f = r->flows[i];
    f.src = host(rng);
    f.dst = (f.src + 1 + host(rng) % (hosts - 1)) % hosts;
    f.qp = static_cast<std::uint32_t>(i + 1);
    f.priority = 3;
    f.kind = static_cast<workload_kind>(i % 3);
    f.bytes = 64 + static_cast<std::uint64_t>(size(rng));
    t += gap(rng);
    f.start_ns = static_cast<std::int64_t>(t);
    f.ideal_fct_ns = 2000 + static_cast<std::int64_t>(static_cast<double>(f.bytes) * 0.08);
    f.fct_ns = static_cast<std::int64_t>(static_cast<double>(f.ideal_fct_ns) * stretch(rng));
    f.end_ns = f.start_ns + f.fct_ns;
    f.ce_marked = rng() % 4;
    f.cnps = f.ce_marked / 2;
    f.tag = i;
  }
  return r;
}

}  // namespace

void bind_records(py::module_& m) {
  py::class_<run_records, std::shared_ptr<run_records>>(m, "Records", "The records of one run (one repeat)")
      .def_property_readonly("backend", [](const run_records& r) { return r.backend; })
      .def_property_readonly("hosts", [](const run_records& r) { return r.hosts; })
      .def_property_readonly("devices", [](const run_records& r) { return r.devices; })
      .def_property_readonly("simulated_ns", [](const run_records& r) { return r.simulated_ns; })
      .def_property_readonly("totals", &totals)
      .def("__len__", [](const run_records& r) { return r.flows.size(); })
      .def("sizes",
           [](const run_records& r) {
             py::dict d;
             d["flows"] = r.flows.size();
             d["pauses"] = r.pauses.size();
             d["events"] = r.events.size();
             d["queues"] = r.queues.size();
             d["counters"] = r.counters.size();
             d["allreduce"] = r.allreduce.size();
             return d;
           })
      .def("flows_columns", [](const run_records& r) { return record_columns<flow_record>(r.flows, flow_derived); })
      .def("pauses_columns", [](const run_records& r) { return record_columns<pause_interval>(r.pauses, pause_derived); })
      .def("events_columns", [](const run_records& r) { return record_columns(r.events); })
      .def("queues_columns", [](const run_records& r) { return record_columns(r.queues); })
      .def("counters_columns", [](const run_records& r) { return record_columns(r.counters); })
      .def("allreduce_columns", [](const run_records& r) { return record_columns(r.allreduce); })
      // One Python dict per flow: what the columnar path avoids (bench/python/ compares).
      .def("flows_as_dicts", [](const run_records& r) {
        py::list out;
        for (const flow_record& f : r.flows) out.append(record_dict<flow_record>(f, flow_derived));
        return out;
      });

  m.attr("workload_kinds") = py::make_tuple("incast", "allreduce", "background", "other", "victim", "flow_list");
  m.attr("pause_sources") = py::make_tuple("capture", "counter", "model");
  m.attr("event_kinds") = py::make_tuple("ce_mark", "cnp", "retransmit", "drop");
  m.def("synthetic_flows", &synthetic_flows, py::arg("n"), py::arg("seed") = 1,
        "Records of `n` made-up flows (benchmarks and large-run tests only)");
}

}  // namespace rocelab::bindings
