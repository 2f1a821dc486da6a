#include "errors.hpp"

#include <cctype>
#include <string_view>

#include "rocelab/experiments/spec/spec.hpp"

namespace py = pybind11;

namespace rocelab::bindings {

std::string offending_field(const std::string& message) {
  constexpr std::string_view unknown = "unknown key ";
  if (auto at = message.find(unknown); at != std::string::npos) {
    const auto start = at + unknown.size();
    auto end = start;
    while (end < message.size() && !std::isspace(static_cast<unsigned char>(message[end])) && message[end] != ':') ++end;
    return message.substr(start, end - start);
  }
  // Words made of [a-z0-9_.] (a path), with "=value" of an override dropped.
  std::size_t i = 0;
  while (i < message.size()) {
    while (i < message.size() && !(std::islower(static_cast<unsigned char>(message[i])) || message[i] == '_')) ++i;
    auto end = i;
    while (end < message.size() &&
           (std::islower(static_cast<unsigned char>(message[end])) || std::isdigit(static_cast<unsigned char>(message[end])) ||
            message[end] == '_' || message[end] == '.'))
      ++end;
    std::string word = message.substr(i, end - i);
    while (!word.empty() && word.back() == '.') word.pop_back();
    if (!word.empty() && (experiments::find_field(word) != nullptr || experiments::is_section(word))) return word;
    i = end == i ? i + 1 : end;
  }
  return {};
}

void throw_spec_error(const status& st, std::string field) {
  if (field.empty()) field = offending_field(st.message());
  throw status_error(st, std::move(field), "spec");
}

void throw_error(const status& st, std::string kind) {
  if (kind == "spec") throw_spec_error(st);
  throw status_error(st, {}, std::move(kind));
}

namespace {

const char* class_for(const status_error& e) {
  if (e.kind() == "spec") return "SpecError";
  switch (e.error().code()) {
    case error_code::unavailable: return "UnavailableError";
    case error_code::unsupported: return "UnsupportedError";
    case error_code::invalid_argument: return "SpecError";
    default: break;
  }
  if (e.kind() == "store") return "StoreError";
  return "RocelabError";
}

}  // namespace

void bind_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const status_error& e) {
      // The classes live in the pure-Python package so they can have several bases
      // (SpecError is also a ValueError).
      const py::module_ errors = py::module_::import("rocelab.errors");
      const py::object cls = errors.attr(class_for(e));
      const py::object field = e.field().empty() ? py::object(py::none()) : py::object(py::str(e.field()));
      const py::object instance =
          cls(py::str(e.error().message()), py::arg("field") = field,
              py::arg("code") = py::str(std::string(to_string(e.error().code()))));
      PyErr_SetObject(cls.ptr(), instance.ptr());
    }
  });
}

}  // namespace rocelab::bindings
