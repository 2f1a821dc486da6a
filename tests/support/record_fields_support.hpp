#pragma once
// For the field-table tests of every path (protocol JSON, store SQL, run directory CSV):
// a record type that exists only in tests, with its own table, and records of every real
// type with each field set away from its default, checked field by field from the tables,
// so a field added to a record and its table is covered without touching these tests.

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "rocelab/common/record_fields.hpp"

namespace rocelab::testing {

enum class probe_colour : std::uint8_t { red = 0, green = 1, blue = 2 };

[[nodiscard]] constexpr const char* to_string(probe_colour c) noexcept {
  switch (c) {
    case probe_colour::red: return "red";
    case probe_colour::green: return "green";
    case probe_colour::blue: return "blue";
  }
  return "red";
}

// A record of one field of every value kind and role. `added` stands for a field a
// change adds: a record's paths reach it only through its table.
struct probe_record {
  std::uint32_t device = 0;
  std::int64_t t_ns = -1;
  std::uint64_t big = 0;
  std::uint8_t small = 0;
  probe_colour colour = probe_colour::red;
  double ratio = 0;
  std::string label;
  bool counted = true;
  std::uint64_t count = 0;
  std::uint32_t added = 0;
};

}  // namespace rocelab::testing

namespace rocelab {

template <>
struct enum_info<testing::probe_colour> {
  static constexpr std::uint8_t count = 3;
  static constexpr std::string_view noun = "probe colour";
};

template <>
struct record_fields<testing::probe_record> {
  using r = testing::probe_record;
  static constexpr auto fields = std::tuple{
      field{"device", &r::device, field_role::device_index},
      field{"t_ns", &r::t_ns},
      field{"big", &r::big},
      field{"small", &r::small},
      field{"colour", &r::colour},
      field{"ratio", &r::ratio},
      field{"label", &r::label},
      field{"counted", &r::counted, field_role::value, json_if_not_default},
      field{"count", &r::count, field_role::value, plain, &r::counted},
      field{"added", &r::added},
  };
};
static_assert(table_covers_record<testing::probe_record>);

}  // namespace rocelab

namespace rocelab::testing {

// A value of `Member` unlike its default `d`, distinct per `salt` (so swapped columns
// show). Integers reach into the top bit where the type has one (a uint64 stored as
// SQLite's signed integer must come back).
template <class Member>
Member other_than(const Member& d, unsigned salt) {
  if constexpr (std::is_same_v<Member, bool>) {
    return !d;
  } else if constexpr (std::is_enum_v<Member>) {
    const auto count = enum_info<Member>::count;
    return static_cast<Member>((static_cast<unsigned>(d) + 1 + salt % (count - 1U)) % count);
  } else if constexpr (std::is_same_v<Member, std::uint64_t>) {
    return (std::uint64_t{1} << 63) + salt;
  } else if constexpr (std::is_integral_v<Member>) {
    return static_cast<Member>(d + static_cast<Member>(1 + salt % 100));
  } else if constexpr (std::is_same_v<Member, double>) {
    return d + 0.25 + salt;
  } else {
    return d + "value-" + std::to_string(salt);
  }
}

// Every field of a Record other than its default, except host and device indexes, which
// stay 0 (the record's one host or device) so they survive the store's name mapping.
template <class Record>
Record filled(unsigned salt = 1) {
  Record r{};
  const Record defaults{};
  unsigned i = salt;
  for_each_field<Record>([&](const auto& f) {
    ++i;
    if (f.role == field_role::host_index || f.role == field_role::device_index) return;
    f.of(r) = other_than(f.of(defaults), i);
  });
  return r;
}

// Names of the fields where a and b differ, comma-separated; empty when none does.
template <class Record>
std::string differing_fields(const Record& a, const Record& b) {
  std::string out;
  for_each_field<Record>([&](const auto& f) {
    if (!(f.of(a) == f.of(b))) out += (out.empty() ? "" : ", ") + std::string(f.name);
  });
  return out;
}

// Names of the fields still at their default (host and device indexes aside).
template <class Record>
std::string default_fields(const Record& r) {
  std::string out;
  const Record defaults{};
  for_each_field<Record>([&](const auto& f) {
    if (f.role == field_role::host_index || f.role == field_role::device_index) return;
    if (f.of(r) == f.of(defaults)) out += (out.empty() ? "" : ", ") + std::string(f.name);
  });
  return out;
}

// One record of each kind with every field set (filled), for round trips of whole runs.
inline run_records filled_records(unsigned salt = 1) {
  run_records r;
  r.backend = "twin";
  r.hosts = {"h1"};
  r.devices = {"sw0"};
  r.flows.push_back(filled<flow_record>(salt));
  r.pauses.push_back(filled<pause_interval>(salt));
  r.counters.push_back(filled<counter_sample>(salt));
  r.queues.push_back(filled<queue_sample>(salt));
  r.events.push_back(filled<congestion_event>(salt));
  r.allreduce.push_back(filled<allreduce_result>(salt));
  return r;
}

// Calls each(records-of-one-type, name) for the six record vectors of `r`.
template <class F>
void for_each_record_vector(run_records& r, F&& each) {
  each(r.flows, "flows");
  each(r.pauses, "pauses");
  each(r.counters, "counters");
  each(r.queues, "queues");
  each(r.events, "events");
  each(r.allreduce, "allreduce");
}

}  // namespace rocelab::testing
