#pragma once
// Reads one line of the NIC channel (nic_channel.hpp) against its message's schema: each
// field asked for is required (or optional, where the schema says so) and type- and
// range-checked, a field not asked for is an error, and the first problem wins, named
// with the line and the field ("NIC event line {...}: field ref: expected an integer").
// Never throws: a malformed line is a normal input. Allocates nothing of its own but the
// error text and rest()'s copy (a NIC reads one line per command).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::traffic::soft_nic {

class nic_line_fields {
 public:
  // Fields one message may have.
  static constexpr std::size_t max_fields = 16;

  // `object` (parsed from `line`) and `line` outlive the reader; errors start with
  // "NIC <direction> line <line>" (the line cut at max_quoted characters).
  nic_line_fields(const nlohmann::json& object, std::string_view direction, std::string_view line)
      : object_(object), direction_(direction), line_(line) {}

  static constexpr std::size_t max_quoted = 200;
  // "NIC <direction> line <line>", the line cut at max_quoted characters.
  [[nodiscard]] static std::string context(std::string_view direction, std::string_view line) {
    std::string c = "NIC " + std::string(direction) + " line " + std::string(line.substr(0, max_quoted));
    if (line.size() > max_quoted) c += "...";
    return c;
  }

  [[nodiscard]] bool ok() const noexcept { return error_.empty(); }

  // The first problem, or an unknown field when every field asked for was right.
  [[nodiscard]] status finish() {
    if (ok() && !open_)
      for (const auto& [key, _] : object_.items())
        if (!seen(key)) {
          fail(key, "unknown field");
          break;
        }
    if (ok()) return status::success();
    return {error_code::malformed_input, error_};
  }

  template <typename T>
  void get(const char* name, T& out) {
    if (const nlohmann::json* v = find(name)) read(name, *v, out);
  }

  // Absent (or null): nullopt.
  template <typename T>
  void get_optional(const char* name, std::optional<T>& out) {
    mark(name);
    const auto it = object_.find(name);
    if (!ok() || it == object_.end() || it->is_null()) return;
    T v{};
    read(name, *it, v);
    if (ok()) out = v;
  }

  // Every field not asked for so far, as an object (an open schema's remainder); from
  // here on no field is unknown.
  [[nodiscard]] nlohmann::json rest() {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : object_.items())
      if (!seen(key)) out[key] = value;
    open_ = true;
    return out;
  }

  void fail(std::string_view field, std::string_view what) {
    if (!error_.empty()) return;
    error_ = context(direction_, line_);
    if (!field.empty()) error_ += ": field " + std::string(field);
    error_ += ": " + std::string(what);
  }

 private:
  const nlohmann::json* find(const char* name) {
    if (!ok()) return nullptr;
    mark(name);
    const auto it = object_.find(name);
    if (it == object_.end()) {
      fail(name, "missing");
      return nullptr;
    }
    return &*it;
  }

  template <typename T>
  void read(const char* name, const nlohmann::json& v, T& out) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return fail(name, "expected a string");
      out = v.get<std::string>();
    } else {
      static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "unsupported field type");
      if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return fail(name, "out of range");
        out = static_cast<T>(u);
      } else if (v.is_number_integer()) {
        const auto s = v.get<std::int64_t>();
        if constexpr (std::is_unsigned_v<T>) {
          if (s < 0) return fail(name, "must not be negative");
          if (static_cast<std::uint64_t>(s) > std::numeric_limits<T>::max()) return fail(name, "out of range");
        } else {
          if (s < std::numeric_limits<T>::min() || s > std::numeric_limits<T>::max()) return fail(name, "out of range");
        }
        out = static_cast<T>(s);
      } else {
        return fail(name, "expected an integer");
      }
    }
  }

  void mark(const char* name) {
    if (seen(name)) return;
    if (seen_count_ == max_fields) return fail(name, "more fields asked for than a message may have");
    seen_[seen_count_++] = name;
  }
  [[nodiscard]] bool seen(std::string_view name) const {
    return std::find(seen_.begin(), seen_.begin() + static_cast<std::ptrdiff_t>(seen_count_), name) !=
           seen_.begin() + static_cast<std::ptrdiff_t>(seen_count_);
  }

  const nlohmann::json& object_;
  std::string_view direction_;
  std::string_view line_;
  std::string error_;
  std::array<std::string_view, max_fields> seen_{};
  std::size_t seen_count_ = 0;
  bool open_ = false;  // rest() took the fields not asked for
};

}  // namespace rocelab::traffic::soft_nic
