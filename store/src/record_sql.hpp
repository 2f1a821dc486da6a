#pragma once
// A record's rows, column by column from its table (rocelab/common/record_fields.hpp):
// each record table holds `run` and then one column per field, named as the field.
// Integers, booleans and enumerations (as their number) are INTEGER, uint64 values as
// their int64 bit pattern (SQLite integers are signed 64-bit); doubles are REAL, text is
// TEXT. An interned_name field is an INTEGER id into counter_names, read back through a
// join. Host and device indexes are the run's (hosts and devices tables); the caller's
// resolve maps a record's own onto them on insert. Private to the store.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rocelab/common/record_fields.hpp"
#include "rocelab/store/run_store.hpp"
#include "sqlite.hpp"

namespace rocelab::store::record_sql {

template <class Member>
[[nodiscard]] constexpr std::string_view column_type(field_role role) {
  if (role == field_role::interned_name) return "INTEGER";
  constexpr value_kind kind = value_kind_of<Member>();
  if constexpr (kind == value_kind::real) return "REAL";
  else if constexpr (kind == value_kind::text) return "TEXT";
  else return "INTEGER";
}

template <class Record>
[[nodiscard]] constexpr std::size_t interned_fields() {
  std::size_t n = 0;
  for_each_field<Record>([&](const auto& f) { n += f.role == field_role::interned_name ? 1 : 0; });
  return n;
}

// "INSERT INTO <table> (run, <fields>) VALUES (?1, ...)".
template <class Record>
[[nodiscard]] std::string insert(std::string_view table) {
  std::string columns = "run", values = "?1";
  int index = 1;
  for_each_field<Record>([&](const auto& f) {
    columns += ", " + std::string(f.name);
    values += ", ?" + std::to_string(++index);
  });
  return "INSERT INTO " + std::string(table) + " (" + columns + ") VALUES (" + values + ")";
}

// The run's rows in the order they were appended, one column per field in table order.
template <class Record>
[[nodiscard]] std::string select(std::string_view table) {
  static_assert(interned_fields<Record>() <= 1, "a record table joins counter_names for at most one field");
  std::string columns, join;
  for_each_field<Record>([&](const auto& f) {
    if (!columns.empty()) columns += ", ";
    if (f.role == field_role::interned_name) {
      columns += "n.name";
      join = " JOIN counter_names n ON n.id = t." + std::string(f.name);
    } else {
      columns += "t." + std::string(f.name);
    }
  });
  return "SELECT " + columns + " FROM " + std::string(table) + " t" + join + " WHERE t.run = ?1 ORDER BY t.rowid";
}

// Binds ?1 = run and each field after it. resolve(field, value) -> result<std::int64_t>
// gives the stored number of a host_index, device_index or interned_name field; its first
// error is returned.
template <class Record, class Resolve>
[[nodiscard]] status bind(sql::statement& s, std::int64_t run, const Record& record, Resolve&& resolve) {
  s.bind(1, run);
  int index = 1;
  status failed = status::success();
  for_each_field<Record>([&](const auto& f) {
    ++index;
    if (!failed.ok()) return;
    using member = typename std::remove_cvref_t<decltype(f)>::member_type;
    const member& value = f.of(record);
    if (f.role != field_role::value) {
      auto stored = resolve(f, value);
      if (!stored.ok()) {
        failed = stored.error();
        return;
      }
      s.bind(index, *stored);
    } else if constexpr (std::is_enum_v<member>) {
      s.bind(index, static_cast<std::int64_t>(value));
    } else if constexpr (std::is_integral_v<member>) {
      s.bind(index, static_cast<std::int64_t>(value));  // uint64: its bit pattern
    } else if constexpr (std::is_same_v<member, double>) {
      s.bind(index, value);
    } else {
      s.bind(index, std::string_view(value));
    }
  });
  return failed;
}

// Reads one row of select<Record>() into `record`.
template <class Record>
void read(const sql::statement& s, Record& record) {
  int column = 0;
  for_each_field<Record>([&](const auto& f) {
    using member = typename std::remove_cvref_t<decltype(f)>::member_type;
    if constexpr (std::is_same_v<member, bool>) f.of(record) = s.column_int64(column) != 0;
    else if constexpr (std::is_enum_v<member> || std::is_integral_v<member>)
      f.of(record) = static_cast<member>(s.column_int64(column));
    else if constexpr (std::is_same_v<member, double>) f.of(record) = s.column_double(column);
    else f.of(record) = s.column_text(column);
    ++column;
  });
}

// The columns `table` has against those Record's table declares (name and type, `run`
// beside them): what differs, or empty. A field added to a record without a schema
// migration that adds its column shows here.
template <class Record>
[[nodiscard]] result<std::string> column_mismatch(sqlite3* db, std::string_view table) {
  auto info = sql::statement::prepare(db, "SELECT name, type FROM pragma_table_info('" + std::string(table) + "')");
  if (!info.ok()) return info.error();
  std::vector<std::pair<std::string, std::string>> have;
  for (;;) {
    auto row = info->step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    have.emplace_back(info->column_text(0), info->column_text(1));
  }
  std::vector<std::pair<std::string, std::string>> want{{"run", "INTEGER"}};
  for_each_field<Record>([&](const auto& f) {
    using member = typename std::remove_cvref_t<decltype(f)>::member_type;
    want.emplace_back(std::string(f.name), std::string(column_type<member>(f.role)));
  });
  std::string differs;
  for (const auto& w : want)
    if (std::find(have.begin(), have.end(), w) == have.end())
      differs += (differs.empty() ? "" : ", ") + ("no column " + w.first + " " + w.second);
  for (const auto& h : have)
    if (std::find(want.begin(), want.end(), h) == want.end())
      differs += (differs.empty() ? "" : ", ") + ("column " + h.first + " " + h.second + " is no field");
  return differs;
}

// One record table of the store: the run_records vector it keeps and the load_parts
// switch that reads it back.
template <class Record>
struct table {
  using record_type = Record;
  std::string_view name;
  std::vector<Record> run_records::*rows;
  bool load_parts::*part;
};

// Every record table, in the order append() inserts them (run_store.hpp, append_options).
inline constexpr auto tables = std::tuple{
    table<flow_record>{"flows", &run_records::flows, &load_parts::flows},
    table<pause_interval>{"pauses", &run_records::pauses, &load_parts::pauses},
    table<congestion_event>{"events", &run_records::events, &load_parts::events},
    table<counter_sample>{"counters", &run_records::counters, &load_parts::counters},
    table<queue_sample>{"queue_samples", &run_records::queues, &load_parts::queues},
    table<allreduce_result>{"allreduce", &run_records::allreduce, &load_parts::allreduce},
};
inline constexpr std::size_t table_count = std::tuple_size_v<decltype(tables)>;

// Calls each(table, position) for every record table.
template <class F>
void for_each_table(F&& each) {
  [&]<std::size_t... I>(std::index_sequence<I...>) { (each(std::get<I>(tables), I), ...); }(
      std::make_index_sequence<table_count>{});
}

}  // namespace rocelab::store::record_sql
