#pragma once
// A record's CSV header and rows, field by field from its table
// (rocelab/common/record_fields.hpp), for the run directory's files: every field without
// no_csv under its name, plus the columns a file derives from the record (a flow's
// slowdown, a pause's duration) where it places them. Cells: integers in decimal,
// enumerations by name (to_string), doubles with six decimals, text as it is, booleans
// true or false, a device index as the device's name (quoted), and a count whose
// measured_by flag is false as an empty cell (not measured, never 0).

#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rocelab/common/record_fields.hpp"

namespace rocelab::experiments::record_csv {

// A column computed from the record, not one of its fields: written after the field named
// `after` (before the first field when empty). write gets the record and its position
// among its repeat's records.
template <class Record>
struct derived_column {
  std::string_view name;
  std::string_view after;
  void (*write)(std::FILE*, const Record&, std::size_t position);
};

// Device names come from our own topology ("sw0", "leaf1"); quoted anyway so a name with a
// comma cannot shift columns. An index beyond the names is written as the number.
inline void put_name(std::FILE* f, const std::vector<std::string>& names, std::uint32_t index) {
  if (index >= names.size()) {
    std::fprintf(f, "%" PRIu32, index);
    return;
  }
  std::fputc('"', f);
  for (char c : names[index]) {
    if (c == '"') std::fputc('"', f);
    std::fputc(c, f);
  }
  std::fputc('"', f);
}

namespace detail {

// Visits the columns in file order: the derived columns placed before the first field,
// then each CSV field (on_field) followed by the derived ones placed after it (on_derived).
template <class Record, class OnDerived, class OnField>
void for_each_column(std::span<const derived_column<Record>> derived, OnDerived&& on_derived, OnField&& on_field) {
  const auto derived_after = [&](std::string_view after) {
    for (const auto& d : derived)
      if (d.after == after) on_derived(d);
  };
  derived_after({});
  for_each_field<Record>([&](const auto& f) {
    if (!f.has(no_csv)) on_field(f);
    derived_after(f.name);
  });
}

template <class Record, class Field>
void put_field(std::FILE* out, const Field& f, const Record& record, const std::vector<std::string>& devices) {
  using member = typename Field::member_type;
  const member& value = f.of(record);
  if (f.measured_by != nullptr && !(record.*f.measured_by)) return;
  if constexpr (std::is_same_v<member, bool>) {
    std::fputs(value ? "true" : "false", out);
  } else if constexpr (std::is_enum_v<member>) {
    std::fputs(to_string(value), out);
  } else if constexpr (std::is_integral_v<member>) {
    if constexpr (std::is_same_v<member, std::uint32_t>)
      if (f.role == field_role::device_index) return put_name(out, devices, value);
    if constexpr (std::is_signed_v<member>)
      std::fprintf(out, "%lld", static_cast<long long>(value));
    else
      std::fprintf(out, "%llu", static_cast<unsigned long long>(value));
  } else if constexpr (std::is_same_v<member, double>) {
    std::fprintf(out, "%.6f", value);
  } else {
    std::fputs(value.c_str(), out);
  }
}

}  // namespace detail

// The column names, comma-separated, without a line end (the file puts its leading
// columns before them).
template <class Record>
[[nodiscard]] std::string header(std::span<const derived_column<Record>> derived = {}) {
  std::string line;
  const auto add = [&](std::string_view name) {
    if (!line.empty()) line += ',';
    line += name;
  };
  detail::for_each_column<Record>(
      derived, [&](const derived_column<Record>& d) { add(d.name); }, [&](const auto& f) { add(f.name); });
  return line;
}

// One record's cells, comma-separated, without a line end. devices: the names its device
// indexes refer to.
template <class Record>
void put_row(std::FILE* out, const Record& record, std::size_t position, const std::vector<std::string>& devices,
             std::span<const derived_column<Record>> derived = {}) {
  bool first = true;
  const auto separate = [&] {
    if (!first) std::fputc(',', out);
    first = false;
  };
  detail::for_each_column<Record>(
      derived,
      [&](const derived_column<Record>& d) {
        separate();
        d.write(out, record, position);
      },
      [&](const auto& f) {
        separate();
        detail::put_field(out, f, record, devices);
      });
}

}  // namespace rocelab::experiments::record_csv
