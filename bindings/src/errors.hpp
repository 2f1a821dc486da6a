#pragma once
// rocelab errors at the Python boundary. C++ code of the bindings throws status_error
// for a failed status; the translator registered by bind_errors() raises the matching
// class of rocelab/errors.py (SpecError for a bad spec field, with .field set to the
// dotted path at fault; UnavailableError, UnsupportedError, StoreError, RocelabError).

#include <stdexcept>
#include <string>

#include <pybind11/pybind11.h>

#include "rocelab/common/result.hpp"

namespace rocelab::bindings {

class status_error : public std::runtime_error {
 public:
  status_error(status st, std::string field, std::string kind)
      : std::runtime_error(st.message()), status_(std::move(st)), field_(std::move(field)), kind_(std::move(kind)) {}
  [[nodiscard]] const status& error() const noexcept { return status_; }
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  // "spec", "store" or "" (by code).
  [[nodiscard]] const std::string& kind() const noexcept { return kind_; }

 private:
  status status_;
  std::string field_;
  std::string kind_;
};

// The spec field a spec error message names: the key of "unknown key K", else the first
// word that is a field path or section ("spec.yaml:12: switch.ecn.kmin_bytes: ..."); ""
// when none.
[[nodiscard]] std::string offending_field(const std::string& message);

// Throws status_error for a spec problem: `field` when the caller knows it, else the one
// the message names.
[[noreturn]] void throw_spec_error(const status& st, std::string field = {});
[[noreturn]] void throw_error(const status& st, std::string kind = {});

template <typename T>
T value_or_throw(result<T>&& r, const char* kind = "") {
  if (!r.ok()) throw_error(r.error(), kind);
  return std::move(r).value();
}
inline void ok_or_throw(const status& st, const char* kind = "") {
  if (!st.ok()) throw_error(st, kind);
}

void bind_errors(pybind11::module_& m);

}  // namespace rocelab::bindings
