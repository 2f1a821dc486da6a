#pragma once
// Each record's fields (records.hpp), declared once: its name (the same in JSON, SQL, the
// run directory's CSVs and Python's columns), the member it reads and writes, what it
// indexes, and where a path leaves it out. The protocol codec, the run store, the run
// directory and the bindings iterate these tables, so a field added to a record and to
// its table reaches every path; one added to a record only fails to compile here (each
// table's static_assert counts the record's members).
//
// A field's value kind follows from its member's type: integer (any integer but bool),
// boolean, enumeration (stored and sent as its number; enum_info gives its range and noun),
// real (double) or text (std::string).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "rocelab/common/records.hpp"

namespace rocelab {

// What a field's number refers to: run_records::hosts or ::devices (the store maps them
// onto the run's name tables; the CSVs write a device's name), or, for text, a name that
// repeats over many records (the store keeps it once in counter_names; Python gets codes
// into a name list).
enum class field_role : std::uint8_t { value, host_index, device_index, interned_name };

// Where a path treats the field differently from its plain value; combine with |.
//   json_if_not_default: on the wire only when it differs from the record's default, so
//     messages about records that leave it at its default stay as they were.
//   no_csv: not a column of the run directory's CSVs.
//   no_columns: not one of Python's numpy columns.
enum field_flags : unsigned { plain = 0, json_if_not_default = 1U << 0, no_csv = 1U << 1, no_columns = 1U << 2 };

[[nodiscard]] constexpr field_flags operator|(field_flags a, field_flags b) noexcept {
  return static_cast<field_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

// One field of Record. measured_by: a bool member of the same record that says whether
// this count was measured; when it is false the count means "not measured" and the CSV
// cell is empty (never 0).
template <class Record, class Member>
struct field {
  using record_type = Record;
  using member_type = Member;

  std::string_view name;
  Member Record::*member;
  field_role role = field_role::value;
  field_flags flags = plain;
  bool Record::*measured_by = nullptr;

  [[nodiscard]] constexpr const Member& of(const Record& r) const noexcept { return r.*member; }
  [[nodiscard]] constexpr Member& of(Record& r) const noexcept { return r.*member; }
  [[nodiscard]] constexpr bool has(field_flags f) const noexcept { return (flags & f) != 0; }
};

template <class Record, class Member, class... Rest>
field(std::string_view, Member Record::*, Rest...) -> field<Record, Member>;

enum class value_kind : std::uint8_t { integer, boolean, enumeration, real, text };

template <class T>
[[nodiscard]] consteval value_kind value_kind_of() {
  if constexpr (std::is_same_v<T, bool>) return value_kind::boolean;
  else if constexpr (std::is_enum_v<T>) return value_kind::enumeration;
  else if constexpr (std::is_integral_v<T>) return value_kind::integer;
  else if constexpr (std::is_same_v<T, double>) return value_kind::real;
  else {
    static_assert(std::is_same_v<T, std::string>, "a record field is an integer, bool, enum, double or std::string");
    return value_kind::text;
  }
}

// An enumeration's values run from 0 to count - 1; noun names it in errors ("unknown
// workload kind").
template <class E>
struct enum_info;
template <>
struct enum_info<workload_kind> {
  static constexpr std::uint8_t count = 6;
  static constexpr std::string_view noun = "workload kind";
};
template <>
struct enum_info<pause_source> {
  static constexpr std::uint8_t count = 3;
  static constexpr std::string_view noun = "pause source";
};
template <>
struct enum_info<event_kind> {
  static constexpr std::uint8_t count = 4;
  static constexpr std::string_view noun = "event kind";
};

// record_fields<R>::fields: a tuple of field<R, ...>, in the record's member order.
template <class Record>
struct record_fields;

template <class Record, class F>
constexpr void for_each_field(F&& each) {
  std::apply([&](const auto&... f) { (each(f), ...); }, record_fields<Record>::fields);
}

template <class Record>
inline constexpr std::size_t field_count = std::tuple_size_v<std::remove_cvref_t<decltype(record_fields<Record>::fields)>>;

namespace detail {

// Converts to any member type, so R{any_member x N} compiles exactly while N is at most
// the number of R's members (records are aggregates of scalars and strings).
struct any_member {
  template <class T>
  constexpr operator T&() const noexcept;
  template <class T>
  constexpr operator T&&() const noexcept;
};

template <class R, std::size_t... I>
consteval bool brace_init_with(std::index_sequence<I...>) {
  return requires { R{(void(I), any_member{})...}; };
}

template <class R, std::size_t N = 0>
consteval std::size_t member_count() {
  if constexpr (brace_init_with<R>(std::make_index_sequence<N + 1>{})) return member_count<R, N + 1>();
  else return N;
}

}  // namespace detail

// True when Record's table names as many fields as Record has members. Each table below
// asserts it; a test record's table can too.
template <class Record>
inline constexpr bool table_covers_record = field_count<Record> == detail::member_count<Record>();

template <>
struct record_fields<flow_record> {
  using r = flow_record;
  static constexpr auto fields = std::tuple{
      field{"src", &r::src, field_role::host_index},
      field{"dst", &r::dst, field_role::host_index},
      field{"qp", &r::qp},
      field{"priority", &r::priority},
      field{"kind", &r::kind},
      field{"bytes", &r::bytes},
      field{"start_ns", &r::start_ns},
      field{"end_ns", &r::end_ns},
      field{"fct_ns", &r::fct_ns},
      field{"ideal_fct_ns", &r::ideal_fct_ns},
      field{"retransmits", &r::retransmits, field_role::value, plain, &r::retransmits_measured},
      field{"ce_marked", &r::ce_marked},
      field{"cnps", &r::cnps, field_role::value, plain, &r::cnps_measured},
      field{"tag", &r::tag},
      // In the CSVs as the empty cell of the count they qualify.
      field{"retransmits_measured", &r::retransmits_measured, field_role::value, json_if_not_default | no_csv},
      field{"cnps_measured", &r::cnps_measured, field_role::value, json_if_not_default | no_csv},
      // The run directory's CSVs lead every row with the repeat (and its seed) they were
      // given the records of, so a single-repeat run's files keep the shape they had
      // before records carried it. Python's frames lead with it too: the record's own
      // where one run_records holds a stored run's repeats, else the list position.
      field{"repeat", &r::repeat, field_role::value, json_if_not_default | no_csv},
  };
};
static_assert(table_covers_record<flow_record>, "every flow_record member has a field in the table");

template <>
struct record_fields<pause_interval> {
  using r = pause_interval;
  static constexpr auto fields = std::tuple{
      field{"device", &r::device, field_role::device_index},
      field{"port", &r::port},
      field{"priority", &r::priority},
      field{"start_ns", &r::start_ns},
      field{"end_ns", &r::end_ns},
      field{"source", &r::source},
      field{"repeat", &r::repeat, field_role::value, json_if_not_default | no_csv},
  };
};
static_assert(table_covers_record<pause_interval>, "every pause_interval member has a field in the table");

template <>
struct record_fields<counter_sample> {
  using r = counter_sample;
  static constexpr auto fields = std::tuple{
      field{"device", &r::device, field_role::device_index},
      field{"port", &r::port},
      field{"name", &r::name, field_role::interned_name},
      field{"t_ns", &r::t_ns},
      field{"value", &r::value},
      field{"repeat", &r::repeat, field_role::value, json_if_not_default | no_csv},
  };
};
static_assert(table_covers_record<counter_sample>, "every counter_sample member has a field in the table");

template <>
struct record_fields<queue_sample> {
  using r = queue_sample;
  static constexpr auto fields = std::tuple{
      field{"device", &r::device, field_role::device_index},
      field{"port", &r::port},
      field{"queue", &r::queue},
      field{"t_ns", &r::t_ns},
      field{"bytes", &r::bytes},
      field{"repeat", &r::repeat, field_role::value, json_if_not_default | no_csv},
  };
};
static_assert(table_covers_record<queue_sample>, "every queue_sample member has a field in the table");

template <>
struct record_fields<congestion_event> {
  using r = congestion_event;
  static constexpr auto fields = std::tuple{
      field{"kind", &r::kind},
      field{"device", &r::device, field_role::device_index},
      field{"port", &r::port},
      field{"priority", &r::priority},
      field{"t_ns", &r::t_ns},
      field{"src", &r::src, field_role::host_index},
      field{"dst", &r::dst, field_role::host_index},
      field{"qp", &r::qp},
      field{"source", &r::source},
      field{"repeat", &r::repeat, field_role::value, json_if_not_default | no_csv},
  };
};
static_assert(table_covers_record<congestion_event>, "every congestion_event member has a field in the table");

template <>
struct record_fields<allreduce_result> {
  using r = allreduce_result;
  static constexpr auto fields = std::tuple{
      field{"algorithm", &r::algorithm},
      field{"ranks", &r::ranks},
      field{"bytes", &r::bytes},
      field{"time_ns", &r::time_ns},
      field{"algbw_gbps", &r::algbw_gbps},
      field{"busbw_gbps", &r::busbw_gbps},
      field{"repeat", &r::repeat, field_role::value, json_if_not_default | no_csv},
  };
};
static_assert(table_covers_record<allreduce_result>, "every allreduce_result member has a field in the table");

}  // namespace rocelab
