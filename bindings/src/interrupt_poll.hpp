#pragma once
// The cancel hook long C++ calls poll (the twin's cancel_requested, the comparison's,
// buffer validation's), answered from Python's signal handlers: Ctrl-C becomes
// KeyboardInterrupt, and an exception a handler raises stops the call too.
//
// Python runs signal handlers on the main thread only, and the C++ call may poll from
// worker threads (tuning trials): the thread that made the call polls Python (taking the
// GIL at most every `interval`, since the twin asks every few thousand events), every
// other thread reads what it found.
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <pybind11/pybind11.h>

#include "errors.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::bindings {

class interrupt_poll {
 public:
  explicit interrupt_poll(std::chrono::milliseconds interval)
      : interval_(interval), caller_(std::this_thread::get_id()) {}

  bool operator()() {
    if (stopped_.load(std::memory_order_relaxed) || std::this_thread::get_id() != caller_) return stopped_;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return false;
    next_ = now + interval_;
    pybind11::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) take_error();
    return stopped_;
  }

  // With the GIL held, after a Python call raised (or a signal handler did): keep the
  // exception and stop.
  void take_error() {
    PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    if (value != nullptr && trace != nullptr) PyException_SetTraceback(value, trace);
    caught_ = value != nullptr ? pybind11::reinterpret_steal<pybind11::object>(value)
                               : pybind11::reinterpret_steal<pybind11::object>(type);
    if (value != nullptr) Py_XDECREF(type);
    Py_XDECREF(trace);
    stopped_ = true;
  }

  [[nodiscard]] bool stopped() const noexcept { return stopped_; }
  // The exception that stopped the call (KeyboardInterrupt, or what a handler raised).
  [[nodiscard]] pybind11::object caught() const { return caught_ ? caught_ : pybind11::none(); }

 private:
  std::chrono::milliseconds interval_;
  std::thread::id caller_;
  std::chrono::steady_clock::time_point next_{};
  std::atomic<bool> stopped_{false};
  pybind11::object caught_;
};

// A progress-line callback into Python (`on_progress(line)`, None for none): it takes the
// GIL, and an exception it raises stops the call like Ctrl-C does.
inline std::function<void(const std::string&)> python_progress(const pybind11::object& on_progress,
                                                               interrupt_poll& poll) {
  if (on_progress.is_none()) return {};
  return [&on_progress, &poll](const std::string& line) {
    pybind11::gil_scoped_acquire gil;
    try {
      on_progress(line);
    } catch (pybind11::error_already_set& e) {
      e.restore();
      poll.take_error();
    }
  };
}

// What a long call (compare, buffers, qualify) hands back to Python, after it ran with
// the GIL released: {"interrupted": the exception that stopped it, or None} and what
// `fill(dict, value)` adds from its result. A failed call raises (a bad spec as
// SpecError), unless it was stopped: then "json" and "html" are None and the Python side
// raises what stopped it.
template <typename T, typename Fill>
pybind11::dict reported_result(const interrupt_poll& poll, const result<T>& ran, Fill&& fill) {
  pybind11::dict d;
  d["interrupted"] = poll.caught();
  if (!ran.ok()) {
    if (poll.stopped()) {
      d["json"] = pybind11::none();
      d["html"] = pybind11::none();
      return d;
    }
    throw_error(ran.error(), ran.error().code() == error_code::invalid_argument ? "spec" : "");
  }
  fill(d, *ran);
  return d;
}

}  // namespace rocelab::bindings
