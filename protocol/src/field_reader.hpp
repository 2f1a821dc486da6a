#pragma once
// Reads a message body (a JSON object) against its schema for the codecs in this folder:
// every field asked for is required and type- and range-checked, a field not asked for is
// an error, and the first problem wins, named with its context and field ("message
// clock_reply: field t2_ns: expected an integer"). Never throws: a malformed body is a
// normal input.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::protocol {

using json = nlohmann::json;

// Reads one JSON object against a schema; the first problem wins and names the field.
class field_reader {
 public:
  field_reader(const json& object, std::string context) : object_(object), context_(std::move(context)) {
    if (!object_.is_object()) fail("", "expected a JSON object");
  }

  [[nodiscard]] bool ok() const noexcept { return error_.empty(); }
  [[nodiscard]] status finish() {
    if (ok())
      for (const auto& [key, _] : object_.items())
        if (!seen_.contains(key)) {
          fail(key, "unknown field");
          break;
        }
    if (ok()) return status::success();
    return {error_code::malformed_input, error_};
  }

  template <typename T>
  void get(const char* name, T& out) {
    const json* v = find(name);
    if (!v) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (!v->is_boolean()) return fail(name, "expected true or false");
      out = v->get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v->is_string()) return fail(name, "expected a string");
      out = v->get<std::string>();
    } else if constexpr (std::is_same_v<T, double>) {
      if (!v->is_number()) return fail(name, "expected a number");
      out = v->get<double>();
    } else if constexpr (std::is_integral_v<T>) {
      if (v->is_number_unsigned()) {
        const auto u = v->get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return fail(name, "out of range");
        out = static_cast<T>(u);
      } else if (v->is_number_integer()) {
        const auto s = v->get<std::int64_t>();
        if (s < 0 && std::is_unsigned_v<T>) return fail(name, "must not be negative");
        if constexpr (std::is_signed_v<T>)
          if (s < std::numeric_limits<T>::min() || s > std::numeric_limits<T>::max()) return fail(name, "out of range");
        out = static_cast<T>(s);
      } else {
        return fail(name, "expected an integer");
      }
    } else {
      static_assert(sizeof(T) == 0, "unsupported field type");
    }
  }

  void get_strings(const char* name, std::vector<std::string>& out) {
    const json* v = array(name);
    if (!v) return;
    for (const json& e : *v) {
      if (!e.is_string()) return fail(name, "expected an array of strings");
      out.push_back(e.get<std::string>());
    }
  }

  // An array of objects, each read by `read_one(field_reader&, T&)`.
  template <typename T, typename F>
  void get_objects(const char* name, std::vector<T>& out, F read_one) {
    const json* v = array(name);
    if (!v) return;
    out.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) {
      field_reader inner((*v)[i], context_ + ": field " + name + "[" + std::to_string(i) + "]");
      T item{};
      if (inner.ok()) read_one(inner, item);
      if (auto st = inner.finish(); !st.ok()) {
        error_ = st.message();
        return;
      }
      out.push_back(std::move(item));
    }
  }

  // A field older peers do not send: read when there, else `out` keeps its default.
  template <typename T>
  void get_if_present(const char* name, T& out) {
    if (ok() && object_.contains(name)) get(name, out);
  }

  // A nested object older peers do not send: read when there, else left alone.
  template <typename F>
  void get_object_if_present(const char* name, F read_one) {
    if (ok() && object_.contains(name)) get_object(name, read_one);
  }

  // One nested object, read by `read_one(field_reader&)`.
  template <typename F>
  void get_object(const char* name, F read_one) {
    const json* v = find(name);
    if (!v) return;
    field_reader inner(*v, context_ + ": field " + name);
    if (inner.ok()) read_one(inner);
    if (auto st = inner.finish(); !st.ok()) error_ = st.message();
  }

  template <typename E>
  void get_enum(const char* name, E& out, std::initializer_list<std::pair<const char*, E>> names) {
    std::string text;
    get(name, text);
    if (!ok() || !object_.contains(name)) return;
    for (const auto& [n, e] : names)
      if (text == n) {
        out = e;
        return;
      }
    fail(name, "unknown value '" + text + "'");
  }

  void fail(std::string_view field, std::string_view what) {
    if (!error_.empty()) return;
    error_ = context_;
    if (!field.empty()) error_ += ": field " + std::string(field);
    error_ += ": " + std::string(what);
  }

 private:
  const json* find(const char* name) {
    if (!ok()) return nullptr;
    seen_.insert(name);
    auto it = object_.find(name);
    if (it == object_.end()) {
      fail(name, "missing");
      return nullptr;
    }
    return &*it;
  }
  const json* array(const char* name) {
    const json* v = find(name);
    if (v && !v->is_array()) {
      fail(name, "expected an array");
      return nullptr;
    }
    return v;
  }

  const json& object_;
  std::string context_;
  std::string error_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace rocelab::protocol
