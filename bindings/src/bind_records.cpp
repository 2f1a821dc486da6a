// Records to columns. Each *_columns() returns a dict of equally long 1-D numpy arrays
// (name -> array); index columns (host, device, kind, source) come with their category
// names so rocelab/run.py makes pandas Categoricals without per-row strings.
#include <cmath>
#include <limits>
#include <random>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "records.hpp"

namespace py = pybind11;

namespace rocelab::bindings {
namespace {

template <typename T, typename Rows, typename Get>
py::array_t<T> column(const Rows& rows, Get get) {
  py::array_t<T> out(static_cast<py::ssize_t>(rows.size()));
  T* p = out.mutable_data();
  for (const auto& r : rows) *p++ = static_cast<T>(get(r));
  return out;
}

// One pass over the records fills every column (each record is read once, while it is in
// cache), with the GIL released: only the array allocations need Python.
py::dict flows_columns(const run_records& r) {
  const auto& f = r.flows;
  const auto n = static_cast<py::ssize_t>(f.size());
  py::array_t<std::uint32_t> src(n), dst(n), qp(n);
  py::array_t<std::uint8_t> priority(n), kind(n);
  py::array_t<std::uint64_t> bytes(n), retransmits(n), ce_marked(n), cnps(n), tag(n);
  py::array_t<std::int64_t> start_ns(n), end_ns(n), fct_ns(n), ideal_fct_ns(n);
  py::array_t<double> slowdown(n);
  py::array_t<bool> completed(n), retransmits_measured(n), cnps_measured(n);
  struct {
    std::uint32_t *src, *dst, *qp;
    std::uint8_t *priority, *kind;
    std::uint64_t *bytes, *retransmits, *ce_marked, *cnps, *tag;
    std::int64_t *start_ns, *end_ns, *fct_ns, *ideal_fct_ns;
    double* slowdown;
    bool *completed, *retransmits_measured, *cnps_measured;
  } out{src.mutable_data(),         dst.mutable_data(),          qp.mutable_data(),       priority.mutable_data(),
        kind.mutable_data(),        bytes.mutable_data(),        retransmits.mutable_data(),
        ce_marked.mutable_data(),   cnps.mutable_data(),         tag.mutable_data(),      start_ns.mutable_data(),
        end_ns.mutable_data(),      fct_ns.mutable_data(),       ideal_fct_ns.mutable_data(),
        slowdown.mutable_data(),    completed.mutable_data(),    retransmits_measured.mutable_data(),
        cnps_measured.mutable_data()};
  {
    py::gil_scoped_release release;
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < f.size(); ++i) {
      const flow_record& x = f[i];
      out.src[i] = x.src, out.dst[i] = x.dst, out.qp[i] = x.qp;
      out.priority[i] = x.priority, out.kind[i] = static_cast<std::uint8_t>(x.kind);
      out.bytes[i] = x.bytes, out.retransmits[i] = x.retransmits, out.ce_marked[i] = x.ce_marked;
      out.cnps[i] = x.cnps, out.tag[i] = x.tag;
      out.start_ns[i] = x.start_ns, out.end_ns[i] = x.end_ns, out.fct_ns[i] = x.fct_ns;
      out.ideal_fct_ns[i] = x.ideal_fct_ns;
      // NaN for flows that did not complete (or have no ideal time), so pandas skips them.
      out.slowdown[i] = x.completed() && x.ideal_fct_ns > 0 ? x.slowdown() : nan;
      out.completed[i] = x.completed();
      out.retransmits_measured[i] = x.retransmits_measured, out.cnps_measured[i] = x.cnps_measured;
    }
  }
  py::dict d;
  d["src"] = src, d["dst"] = dst, d["qp"] = qp, d["priority"] = priority, d["kind"] = kind, d["bytes"] = bytes;
  d["start_ns"] = start_ns, d["end_ns"] = end_ns, d["fct_ns"] = fct_ns, d["ideal_fct_ns"] = ideal_fct_ns;
  d["slowdown"] = slowdown, d["completed"] = completed, d["retransmits"] = retransmits;
  d["ce_marked"] = ce_marked, d["cnps"] = cnps, d["tag"] = tag;
  d["retransmits_measured"] = retransmits_measured, d["cnps_measured"] = cnps_measured;
  return d;
}

py::dict pauses_columns(const run_records& r) {
  const auto& p = r.pauses;
  py::dict d;
  d["device"] = column<std::uint32_t>(p, [](const pause_interval& x) { return x.device; });
  d["port"] = column<std::uint32_t>(p, [](const pause_interval& x) { return x.port; });
  d["priority"] = column<std::uint8_t>(p, [](const pause_interval& x) { return x.priority; });
  d["start_ns"] = column<std::int64_t>(p, [](const pause_interval& x) { return x.start_ns; });
  d["end_ns"] = column<std::int64_t>(p, [](const pause_interval& x) { return x.end_ns; });
  d["duration_ns"] = column<std::int64_t>(p, [](const pause_interval& x) { return x.end_ns - x.start_ns; });
  d["source"] = column<std::uint8_t>(p, [](const pause_interval& x) { return static_cast<std::uint8_t>(x.source); });
  return d;
}

py::dict events_columns(const run_records& r) {
  const auto& e = r.events;
  py::dict d;
  d["kind"] = column<std::uint8_t>(e, [](const congestion_event& x) { return static_cast<std::uint8_t>(x.kind); });
  d["device"] = column<std::uint32_t>(e, [](const congestion_event& x) { return x.device; });
  d["port"] = column<std::uint32_t>(e, [](const congestion_event& x) { return x.port; });
  d["priority"] = column<std::uint8_t>(e, [](const congestion_event& x) { return x.priority; });
  d["t_ns"] = column<std::int64_t>(e, [](const congestion_event& x) { return x.t_ns; });
  d["src"] = column<std::uint32_t>(e, [](const congestion_event& x) { return x.src; });
  d["dst"] = column<std::uint32_t>(e, [](const congestion_event& x) { return x.dst; });
  d["qp"] = column<std::uint32_t>(e, [](const congestion_event& x) { return x.qp; });
  d["source"] = column<std::uint8_t>(e, [](const congestion_event& x) { return static_cast<std::uint8_t>(x.source); });
  return d;
}

py::dict queues_columns(const run_records& r) {
  const auto& q = r.queues;
  py::dict d;
  d["device"] = column<std::uint32_t>(q, [](const queue_sample& x) { return x.device; });
  d["port"] = column<std::uint32_t>(q, [](const queue_sample& x) { return x.port; });
  d["queue"] = column<std::uint8_t>(q, [](const queue_sample& x) { return x.queue; });
  d["t_ns"] = column<std::int64_t>(q, [](const queue_sample& x) { return x.t_ns; });
  d["bytes"] = column<std::uint64_t>(q, [](const queue_sample& x) { return x.bytes; });
  return d;
}

// Counter names repeat (a handful of names over many samples): codes into a name table.
py::dict counters_columns(const run_records& r) {
  const auto& c = r.counters;
  std::vector<std::string> names;
  std::unordered_map<std::string, std::uint32_t> index;
  py::array_t<std::uint32_t> codes(static_cast<py::ssize_t>(c.size()));
  std::uint32_t* p = codes.mutable_data();
  for (const auto& s : c) {
    auto [it, added] = index.try_emplace(s.name, static_cast<std::uint32_t>(names.size()));
    if (added) names.push_back(s.name);
    *p++ = it->second;
  }
  py::dict d;
  d["device"] = column<std::uint32_t>(c, [](const counter_sample& x) { return x.device; });
  d["port"] = column<std::uint32_t>(c, [](const counter_sample& x) { return x.port; });
  d["name"] = codes;
  d["t_ns"] = column<std::int64_t>(c, [](const counter_sample& x) { return x.t_ns; });
  d["value"] = column<std::uint64_t>(c, [](const counter_sample& x) { return x.value; });
  d["_names"] = names;
  return d;
}

py::dict allreduce_columns(const run_records& r) {
  const auto& a = r.allreduce;
  py::dict d;
  d["algorithm"] = [&] {
    py::list l;
    for (const auto& x : a) l.append(x.algorithm);
    return l;
  }();
  d["ranks"] = column<std::uint32_t>(a, [](const allreduce_result& x) { return x.ranks; });
  d["bytes"] = column<std::uint64_t>(a, [](const allreduce_result& x) { return x.bytes; });
  d["time_ns"] = column<std::int64_t>(a, [](const allreduce_result& x) { return x.time_ns; });
  d["algbw_gbps"] = column<double>(a, [](const allreduce_result& x) { return x.algbw_gbps; });
  d["busbw_gbps"] = column<double>(a, [](const allreduce_result& x) { return x.busbw_gbps; });
  return d;
}

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
      .def("flows_columns", &flows_columns)
      .def("pauses_columns", &pauses_columns)
      .def("events_columns", &events_columns)
      .def("queues_columns", &queues_columns)
      .def("counters_columns", &counters_columns)
      .def("allreduce_columns", &allreduce_columns)
      // One Python dict per flow: what the columnar path avoids (bench/python/ compares).
      .def("flows_as_dicts", [](const run_records& r) {
        py::list out;
        for (const flow_record& f : r.flows) {
          py::dict d;
          d["src"] = f.src, d["dst"] = f.dst, d["qp"] = f.qp, d["priority"] = f.priority;
          d["kind"] = static_cast<int>(f.kind), d["bytes"] = f.bytes, d["start_ns"] = f.start_ns;
          d["end_ns"] = f.end_ns, d["fct_ns"] = f.fct_ns, d["ideal_fct_ns"] = f.ideal_fct_ns;
          d["slowdown"] = f.completed() && f.ideal_fct_ns > 0 ? f.slowdown() : std::nan("");
          d["completed"] = f.completed(), d["retransmits"] = f.retransmits, d["ce_marked"] = f.ce_marked;
          d["cnps"] = f.cnps, d["tag"] = f.tag;
          d["retransmits_measured"] = f.retransmits_measured, d["cnps_measured"] = f.cnps_measured;
          out.append(std::move(d));
        }
        return out;
      });

  m.attr("workload_kinds") = py::make_tuple("incast", "allreduce", "background", "other", "victim");
  m.attr("pause_sources") = py::make_tuple("capture", "counter", "model");
  m.attr("event_kinds") = py::make_tuple("ce_mark", "cnp", "retransmit", "drop");
  m.def("synthetic_flows", &synthetic_flows, py::arg("n"), py::arg("seed") = 1,
        "Records of `n` made-up flows (benchmarks and large-run tests only)");
}

}  // namespace rocelab::bindings
