#pragma once
// A record's JSON object, field by field from its table (rocelab/common/record_fields.hpp):
// every field under its table name, enumerations as their number, a json_if_not_default
// field only when it differs from the record's default (and read when present). Reading
// checks each field's type and range through field_reader, and an enumeration's number
// against its enum_info.
#include <string>
#include <type_traits>

#include "field_reader.hpp"
#include "rocelab/common/record_fields.hpp"

namespace rocelab::protocol {

template <class Record>
[[nodiscard]] json record_json(const Record& record) {
  json j = json::object();
  for_each_field<Record>([&](const auto& f) {
    const auto& value = f.of(record);
    if (f.has(json_if_not_default) && value == f.of(Record{})) return;
    using member = typename std::remove_cvref_t<decltype(f)>::member_type;
    if constexpr (std::is_enum_v<member>)
      j[std::string(f.name)] = static_cast<std::underlying_type_t<member>>(value);
    else
      j[std::string(f.name)] = value;
  });
  return j;
}

template <class Record>
void read_record(field_reader& r, Record& record) {
  for_each_field<Record>([&](const auto& f) {
    using member = typename std::remove_cvref_t<decltype(f)>::member_type;
    const std::string name(f.name);
    const auto read = [&](auto& out) {
      if (f.has(json_if_not_default))
        r.get_if_present(name.c_str(), out);
      else
        r.get(name.c_str(), out);
    };
    if constexpr (std::is_enum_v<member>) {
      auto number = static_cast<std::underlying_type_t<member>>(f.of(record));
      read(number);
      if (!r.ok()) return;
      if (number >= enum_info<member>::count) return r.fail(name, "unknown " + std::string(enum_info<member>::noun));
      f.of(record) = static_cast<member>(number);
    } else {
      read(f.of(record));
    }
  });
}

}  // namespace rocelab::protocol
