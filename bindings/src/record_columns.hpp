#pragma once
// A record vector to numpy columns, field by field from its table
// (rocelab/common/record_fields.hpp): a dict of equally long 1-D arrays, name -> array, in
// table order, every field without no_columns. Integers and booleans keep their type,
// enumerations become their underlying integer, doubles float64; text is a list of str, or
// for an interned_name field uint32 codes into the list under "_names" (a handful of names
// over many records). Columns derived from the record (a flow's slowdown) go where the
// caller places them.
//
// One pass over the records fills every numeric column, each record read once while it is
// in cache, with the GIL released: only the array allocations need Python.

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "rocelab/common/record_fields.hpp"

namespace rocelab::bindings {

// A column computed from the records, not one of their fields, placed after the field
// named `after`: column(records) builds the array, one(record) the value of one record
// (the dict-per-record path).
template <class Record>
struct derived_column {
  std::string_view name;
  std::string_view after;
  pybind11::object (*column)(const std::vector<Record>&);
  pybind11::object (*one)(const Record&);
};

template <class Member>
using column_value =
    typename std::conditional_t<std::is_enum_v<Member>, std::underlying_type<Member>, std::type_identity<Member>>::type;

namespace detail {

template <class Record, std::size_t I>
using field_at = std::remove_cvref_t<decltype(std::get<I>(record_fields<Record>::fields))>;

// The numeric column of field I (allocated into `out`), or a null pointer for text and for
// fields Python does not get.
template <class Record, std::size_t I>
auto numeric_column(pybind11::ssize_t n, pybind11::object& out) {
  using member = typename field_at<Record, I>::member_type;
  if constexpr (std::is_same_v<member, std::string>) {
    return static_cast<char*>(nullptr);
  } else {
    if (std::get<I>(record_fields<Record>::fields).has(no_columns)) return static_cast<column_value<member>*>(nullptr);
    pybind11::array_t<column_value<member>> a(n);
    auto* data = a.mutable_data();
    out = std::move(a);
    return data;
  }
}

template <class Record, std::size_t I, class Pointer>
void fill(const Record& r, std::size_t row, Pointer column) {
  if constexpr (!std::is_same_v<Pointer, char*>) {
    if (column != nullptr) column[row] = static_cast<std::remove_pointer_t<Pointer>>(std::get<I>(record_fields<Record>::fields).of(r));
  }
}

// Text field I: a list of str, or codes into `names` for an interned name.
template <class Record, std::size_t I>
pybind11::object text_column(const std::vector<Record>& rows, std::vector<std::string>& names) {
  const auto& f = std::get<I>(record_fields<Record>::fields);
  if (f.role != field_role::interned_name) {
    pybind11::list l;
    for (const auto& r : rows) l.append(f.of(r));
    return l;
  }
  std::unordered_map<std::string, std::uint32_t> index;
  pybind11::array_t<std::uint32_t> codes(static_cast<pybind11::ssize_t>(rows.size()));
  std::uint32_t* p = codes.mutable_data();
  for (const auto& r : rows) {
    auto [it, added] = index.try_emplace(f.of(r), static_cast<std::uint32_t>(names.size()));
    if (added) names.push_back(f.of(r));
    *p++ = it->second;
  }
  return codes;
}

}  // namespace detail

template <class Record>
pybind11::dict record_columns(const std::vector<Record>& rows, std::span<const derived_column<Record>> derived = {}) {
  namespace py = pybind11;
  constexpr std::size_t count = field_count<Record>;
  const auto n = static_cast<py::ssize_t>(rows.size());
  std::array<py::object, count> columns;
  std::vector<std::string> names;
  bool interned = false;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto pointers = std::tuple{detail::numeric_column<Record, I>(n, columns[I])...};
    {
      py::gil_scoped_release release;
      for (std::size_t row = 0; row < rows.size(); ++row)
        (detail::fill<Record, I>(rows[row], row, std::get<I>(pointers)), ...);
    }
    const auto text = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
      if constexpr (std::is_same_v<typename detail::field_at<Record, J>::member_type, std::string>) {
        const auto& f = std::get<J>(record_fields<Record>::fields);
        if (f.has(no_columns)) return;
        columns[J] = detail::text_column<Record, J>(rows, names);
        interned = interned || f.role == field_role::interned_name;
      }
    };
    (text(std::integral_constant<std::size_t, I>{}), ...);
  }(std::make_index_sequence<count>{});

  py::dict d;
  std::size_t i = 0;
  for_each_field<Record>([&](const auto& f) {
    if (!f.has(no_columns)) d[py::str(std::string(f.name))] = columns[i];
    ++i;
    for (const auto& c : derived)
      if (c.after == f.name) d[py::str(std::string(c.name))] = c.column(rows);
  });
  if (interned) d["_names"] = names;
  return d;
}

// One dict per record, with the same names and values as record_columns (text as str).
template <class Record>
pybind11::dict record_dict(const Record& r, std::span<const derived_column<Record>> derived = {}) {
  namespace py = pybind11;
  py::dict d;
  for_each_field<Record>([&](const auto& f) {
    using member = typename std::remove_cvref_t<decltype(f)>::member_type;
    if (!f.has(no_columns)) d[py::str(std::string(f.name))] = static_cast<column_value<member>>(f.of(r));
    for (const auto& c : derived)
      if (c.after == f.name) d[py::str(std::string(c.name))] = c.one(r);
  });
  return d;
}

}  // namespace rocelab::bindings
