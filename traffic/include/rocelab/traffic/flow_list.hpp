#pragma once
// Traffic from a file: a fixed list of flows, each a message from one host to another of
// so many bytes at its own start time, in one of three formats told apart by content (a
// file's name says nothing):
//
//   csv       a header line naming the columns, in any order, then one flow a line:
//               src,dst,bytes,start_ns            required
//               priority                          optional: 0..7; empty or -1: the NIC's
//               tag                               optional: the flow's traffic class
//                                                 (incast, allreduce, background, other,
//                                                 victim, flow_list); empty: flow_list
//             Hosts are 0-based; bytes and start_ns whole numbers. No quoting.
//   htsim     htsim's connection matrix (ConnectionMatrix::load): header lines `Nodes N`,
//             `Connections N` (and `Triggers 0`, `Failures 0`), then one connection a
//             line, `a->b start T size S [id I]`, T in microseconds. htsim_uec starts a
//             connection at timeFromUs((uint32_t)T), so a fraction of a microsecond is
//             dropped here too. Triggered connections, failures and `prio` are refused:
//             nothing here models them.
//   hpcc_ns3  HPCC ns-3's flow.txt: the flow count alone on the first line, then
//             `src dst priority dport size start_seconds` a flow. Node ids there number
//             the hosts first, so a host's node id is its index. The dport goes into
//             message::udp_dport; source ports are the simulator's to assign
//             (experiments/spec/hpcc_ns3.hpp does).
//
// In every format, blank lines and lines whose first non-blank character is '#' are
// skipped (a spec that carries a flow list inline starts it with a '#' line naming the
// file), and lines may end in CRLF. Each flow becomes one message, in file order, with tag
// = its position in the file (0-based; the flow_record's tag) and kind
// workload_kind::flow_list unless the CSV's tag column names another class; the report
// groups flows by kind. A flow from a host to itself, a host outside 0..hosts-1, or
// 0 bytes is an error.
//
// Parsing is pure; load_flow_list reads the file (bounded, regular files only). Errors
// are malformed_input and start with `source:line: ` (the line in the file, counting
// skipped lines) and say what is wrong with what value.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic {

enum class flow_list_format : std::uint8_t { csv, htsim, hpcc_ns3 };

// "csv", "htsim connection matrix", "HPCC ns-3 flow.txt".
[[nodiscard]] const char* to_string(flow_list_format format) noexcept;

struct flow_list {
  std::string source;  // as given to the parser: the file's name in errors about its flows
  flow_list_format format = flow_list_format::csv;
  std::vector<fabric::twin::message> messages;  // file order
  std::vector<std::uint32_t> lines;             // messages[i] is on line lines[i] of the file
};

// The format of `text` from its first line that is neither blank nor a comment: `Nodes`,
// `Connections`, `Triggers`, `Failures` or an `a->b` connection start a connection matrix;
// a line with a comma is a CSV header; one whole number alone is flow.txt's count.
// Anything else is an error that quotes the line (shortened), so the author sees which
// file they gave.
[[nodiscard]] result<flow_list_format> detect_flow_list_format(std::string_view text, const std::string& source);

// The flows of `text` in the format its content shows, or in `format`. `hosts`: the
// fabric's host count, which every src and dst must be below.
[[nodiscard]] result<flow_list> parse_flow_list(std::string_view text, const std::string& source,
                                                std::uint32_t hosts);
[[nodiscard]] result<flow_list> parse_flow_list(std::string_view text, const std::string& source,
                                                std::uint32_t hosts, flow_list_format format);
[[nodiscard]] result<flow_list> load_flow_list(const std::string& path, std::uint32_t hosts);

// A start time in seconds with up to nine decimals ("2.000001287") as nanoseconds, digit
// by digit: no binary floating point, so times match a simulator's to the nanosecond.
// False for anything else, a negative time, or one whose nanoseconds overflow int64.
[[nodiscard]] bool parse_seconds_ns(std::string_view text, std::int64_t& ns);

}  // namespace rocelab::traffic
