#pragma once
// The run store as Python holds it (rocelab._rocelab.Store): open from construction until
// close(), which closes the SQLite connection at once instead of when Python collects the
// object. Every use after close() raises StoreError naming the store; close() again does
// nothing. Like run_store, one thread at a time (the Python Store is not shared between
// threads).

#include <optional>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include "rocelab/store/run_store.hpp"

namespace rocelab::bindings {

class store_handle {
 public:
  explicit store_handle(store::run_store opened) : path_(opened.path()), store_(std::move(opened)) {}

  // The open store. Throws status_error (StoreError) once closed.
  [[nodiscard]] store::run_store& get();
  void close() noexcept { store_.reset(); }
  [[nodiscard]] bool closed() const noexcept { return !store_.has_value(); }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  std::optional<store::run_store> store_;
};

// The run store behind a `store=` argument of the module's functions: nullptr for None,
// else the open store of a rocelab._rocelab.Store (StoreError when it is closed).
[[nodiscard]] store::run_store* store_argument(const pybind11::object& store_object);

}  // namespace rocelab::bindings
