#include "rocelab/traffic/flow_list.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/record_fields.hpp"

namespace rocelab::traffic {
namespace {

using fabric::twin::message;

status bad(const std::string& what) { return {error_code::malformed_input, what}; }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (true) {
    i = line.find_first_not_of(" \t\r", i);
    if (i == std::string_view::npos) return words;
    const std::size_t end = std::min(line.find_first_of(" \t\r", i), line.size());
    words.push_back(line.substr(i, end - i));
    i = end;
  }
}

// Unsigned whole numbers only: no sign, no blanks, no fraction.
template <typename T>
bool parse_whole(std::string_view text, T& out) {
  if (text.empty() || text.front() == '-' || text.front() == '+') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// The lines of a text one by one, with their 1-based numbers; blank and '#' lines are
// passed over, and so is a UTF-8 byte order mark (spreadsheets write one before a CSV).
class line_reader {
 public:
  explicit line_reader(std::string_view text) : rest_(text) {
    if (rest_.starts_with("\xEF\xBB\xBF")) rest_.remove_prefix(3);
  }
  // The next line with content (trimmed), or nullopt at the end.
  std::optional<std::string_view> next() {
    while (!rest_.empty()) {
      const auto nl = rest_.find('\n');
      const std::string_view raw = rest_.substr(0, nl);
      rest_ = nl == std::string_view::npos ? std::string_view{} : rest_.substr(nl + 1);
      ++number_;
      const std::string_view line = trim(raw);
      if (!line.empty() && line.front() != '#') return line;
    }
    return std::nullopt;
  }
  [[nodiscard]] std::uint32_t number() const { return number_; }

 private:
  std::string_view rest_;
  std::uint32_t number_ = 0;
};

// The checks every format shares, then the message appended with its line and tag.
class list_builder {
 public:
  list_builder(const std::string& source, std::uint32_t hosts, flow_list_format format)
      : source_(source), hosts_(hosts) {
    out_.source = source;
    out_.format = format;
  }

  [[nodiscard]] status error(std::uint32_t line, const std::string& what) const {
    return bad(source_ + ":" + std::to_string(line) + ": " + what);
  }

  [[nodiscard]] status add(std::uint32_t line, message m) {
    for (const auto& [name, host] : {std::pair{"src", m.src}, std::pair{"dst", m.dst}})
      if (host >= hosts_)
        return error(line, std::string(name) + " " + std::to_string(host) + " is not a host (the fabric has hosts 0.." +
                               std::to_string(hosts_ - 1) + ")");
    if (m.src == m.dst) return error(line, "src and dst are the same host (" + std::to_string(m.src) + ")");
    if (m.bytes == 0) return error(line, "a flow of 0 bytes");
    m.tag = out_.messages.size();
    out_.messages.push_back(m);
    out_.lines.push_back(line);
    return status::success();
  }

  [[nodiscard]] std::size_t size() const { return out_.messages.size(); }
  flow_list take() { return std::move(out_); }

 private:
  const std::string& source_;
  std::uint32_t hosts_;
  flow_list out_;
};

std::optional<workload_kind> kind_named(std::string_view name) {
  for (std::uint8_t k = 0; k < enum_info<workload_kind>::count; ++k)
    if (name == to_string(static_cast<workload_kind>(k))) return static_cast<workload_kind>(k);
  return std::nullopt;
}

std::string kind_names() {
  std::string out;
  for (std::uint8_t k = 0; k < enum_info<workload_kind>::count; ++k)
    out += std::string(out.empty() ? "" : ", ") + to_string(static_cast<workload_kind>(k));
  return out;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    const auto comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    line = line.substr(comma + 1);
  }
}

// --- csv ---

enum class csv_column : std::uint8_t { src, dst, bytes, start_ns, priority, tag };
constexpr std::array<std::string_view, 6> csv_column_names{"src", "dst", "bytes", "start_ns", "priority", "tag"};
constexpr std::size_t csv_required_columns = 4;

result<flow_list> parse_csv(std::string_view text, const std::string& source, std::uint32_t hosts) {
  list_builder out(source, hosts, flow_list_format::csv);
  line_reader lines(text);
  const auto header = lines.next();
  if (!header) return bad(source + ": no header line (src,dst,bytes,start_ns)");
  // Where each named column is; a column given twice or unknown is an error.
  std::array<std::size_t, csv_column_names.size()> at{};
  at.fill(std::string_view::npos);
  const auto names = split_fields(*header);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto it = std::find(csv_column_names.begin(), csv_column_names.end(), names[i]);
    if (it == csv_column_names.end())
      return out.error(lines.number(), "unknown column " + quoted(names[i]) +
                                           " (columns: src, dst, bytes, start_ns, and optionally priority, tag)");
    const auto c = static_cast<std::size_t>(it - csv_column_names.begin());
    if (at[c] != std::string_view::npos) return out.error(lines.number(), "column " + quoted(names[i]) + " given twice");
    at[c] = i;
  }
  for (std::size_t c = 0; c < csv_required_columns; ++c)
    if (at[c] == std::string_view::npos)
      return out.error(lines.number(), "the header has no " + std::string(csv_column_names[c]) +
                                           " column (required: src, dst, bytes, start_ns)");
  auto column = [&](const std::vector<std::string_view>& row, csv_column c) -> std::optional<std::string_view> {
    const std::size_t i = at[static_cast<std::size_t>(c)];
    if (i == std::string_view::npos) return std::nullopt;
    return row[i];
  };

  while (const auto line = lines.next()) {
    const std::uint32_t n = lines.number();
    const auto row = split_fields(*line);
    if (row.size() != names.size())
      return out.error(n, "expected " + std::to_string(names.size()) + " fields as the header names, found " +
                              std::to_string(row.size()));
    message m;
    m.kind = workload_kind::flow_list;
    const std::string_view src = *column(row, csv_column::src), dst = *column(row, csv_column::dst);
    if (!parse_whole(src, m.src)) return out.error(n, "src " + quoted(src) + " is not a host index");
    if (!parse_whole(dst, m.dst)) return out.error(n, "dst " + quoted(dst) + " is not a host index");
    const std::string_view bytes = *column(row, csv_column::bytes);
    if (bytes.starts_with('-')) return out.error(n, "bytes " + quoted(bytes) + ": a negative size");
    if (!parse_whole(bytes, m.bytes)) return out.error(n, "bytes " + quoted(bytes) + " is not a whole number of bytes");
    const std::string_view start = *column(row, csv_column::start_ns);
    if (start.starts_with('-')) return out.error(n, "start_ns " + quoted(start) + ": a negative start time");
    if (!parse_whole(start, m.start_ns)) return out.error(n, "start_ns " + quoted(start) + " is not a whole number of ns");
    if (const auto p = column(row, csv_column::priority); p && !p->empty() && *p != "-1") {
      std::uint32_t priority = 0;
      if (!parse_whole(*p, priority) || priority > 7)
        return out.error(n, "priority " + quoted(*p) + " is not 0..7 (empty or -1: the NIC's)");
      m.priority = static_cast<std::int16_t>(priority);
    }
    if (const auto t = column(row, csv_column::tag); t && !t->empty()) {
      const auto kind = kind_named(*t);
      if (!kind) return out.error(n, "tag " + quoted(*t) + " is not a traffic class (" + kind_names() + ")");
      m.kind = *kind;
    }
    ROCELAB_RETURN_IF_ERROR(out.add(n, m));
  }
  return out.take();
}

// --- htsim connection matrix ---

bool is_matrix_header(std::string_view word) {
  return word == "Nodes" || word == "Connections" || word == "Triggers" || word == "Failures";
}

// htsim_uec: start_ts = timeFromUs((uint32_t)crt->start), so only whole microseconds count.
std::optional<std::int64_t> htsim_start_ns(std::string_view text) {
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  if (dot != std::string_view::npos) {
    const std::string_view frac = text.substr(dot + 1);
    if (!std::all_of(frac.begin(), frac.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    if (whole.empty()) return frac.empty() ? std::nullopt : std::optional<std::int64_t>(0);
  }
  std::uint32_t us = 0;
  if (!parse_whole(whole, us)) return std::nullopt;
  return static_cast<std::int64_t>(us) * 1000;
}

result<flow_list> parse_htsim(std::string_view text, const std::string& source, std::uint32_t hosts) {
  list_builder out(source, hosts, flow_list_format::htsim);
  line_reader lines(text);
  std::optional<std::uint32_t> nodes, connections;
  std::uint32_t connections_line = 0;
  while (const auto line = lines.next()) {
    const std::uint32_t n = lines.number();
    const auto words = split_words(*line);
    if (is_matrix_header(words[0])) {
      std::uint32_t value = 0;
      if (words.size() != 2 || !parse_whole(words[1], value))
        return out.error(n, "expected '" + std::string(words[0]) + " N' with N a whole number");
      if (out.size() > 0) return out.error(n, std::string(words[0]) + " after the first connection (htsim reads it as a header)");
      if ((words[0] == "Triggers" || words[0] == "Failures") && value != 0)
        return out.error(n, std::string(words[0]) + " " + std::to_string(value) +
                                ": triggered connections and link failures are not modelled here (only 0)");
      if (words[0] == "Nodes") nodes = value;
      if (words[0] == "Connections") connections = value, connections_line = n;
      continue;
    }
    if (words[0] == "trigger" || words[0] == "failure")
      return out.error(n, "a " + std::string(words[0]) + " line: triggered connections and link failures are not "
                          "modelled here; give every connection a start time");
    const auto arrow = words[0].find("->");
    if (arrow == std::string_view::npos)
      return out.error(n, "expected 'src->dst start T size S' or a header line (Nodes, Connections), found " +
                              quoted(words[0]));
    message m;
    m.kind = workload_kind::flow_list;
    const std::string_view src = words[0].substr(0, arrow), dst = words[0].substr(arrow + 2);
    if (!parse_whole(src, m.src)) return out.error(n, "src " + quoted(src) + " is not a node number");
    if (!parse_whole(dst, m.dst)) return out.error(n, "dst " + quoted(dst) + " is not a node number");
    bool has_start = false, has_size = false;
    for (std::size_t i = 1; i < words.size(); i += 2) {
      const std::string_view key = words[i];
      if (i + 1 >= words.size()) return out.error(n, quoted(key) + " has no value");
      const std::string_view value = words[i + 1];
      if (key == "start") {
        const auto ns = htsim_start_ns(value);
        if (!ns) return out.error(n, "start " + quoted(value) + " is not a time in microseconds (0 .. 2^32-1)");
        m.start_ns = *ns;
        has_start = true;
      } else if (key == "size") {
        if (value.starts_with('-')) return out.error(n, "size " + quoted(value) + ": a negative size");
        if (!parse_whole(value, m.bytes)) return out.error(n, "size " + quoted(value) + " is not a whole number of bytes");
        has_size = true;
      } else if (key == "id") {
        std::uint32_t id = 0;
        if (!parse_whole(value, id)) return out.error(n, "id " + quoted(value) + " is not a whole number");
      } else if (key == "trigger" || key == "send_done_trigger" || key == "recv_done_trigger") {
        return out.error(n, std::string(key) + ": triggered connections are not modelled here; give every "
                                               "connection a start time");
      } else if (key == "prio") {
        return out.error(n, "prio: htsim's connection priority has no counterpart here (priorities are 802.1p "
                            "classes; use a CSV flow list's priority column)");
      } else {
        return out.error(n, "unknown key " + quoted(key) + " (start, size, id)");
      }
    }
    if (!has_start) return out.error(n, "the connection has no start (htsim needs 'start T')");
    if (!has_size) return out.error(n, "the connection has no size");
    if (nodes)
      for (const auto& [name, node] : {std::pair{"src", m.src}, std::pair{"dst", m.dst}})
        if (node >= *nodes)
          return out.error(n, std::string(name) + " " + std::to_string(node) + " is not one of the matrix's " +
                                  std::to_string(*nodes) + " nodes (Nodes " + std::to_string(*nodes) + ")");
    ROCELAB_RETURN_IF_ERROR(out.add(n, m));
  }
  if (connections && *connections != out.size())
    return out.error(connections_line, "Connections " + std::to_string(*connections) + ", but the matrix has " +
                                           std::to_string(out.size()));
  return out.take();
}

// --- HPCC ns-3 flow.txt ---

result<flow_list> parse_hpcc_ns3(std::string_view text, const std::string& source, std::uint32_t hosts) {
  list_builder out(source, hosts, flow_list_format::hpcc_ns3);
  line_reader lines(text);
  const auto first = lines.next();
  if (!first) return bad(source + ": empty (expected the flow count, then one flow a line)");
  const auto head = split_words(*first);
  std::uint32_t count = 0;
  if (head.size() != 1 || !parse_whole(head[0], count)) return out.error(lines.number(), "expected the flow count");
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto line = lines.next();
    if (!line)
      return out.error(lines.number(), "expected " + std::to_string(count) + " flows, found " + std::to_string(i));
    const std::uint32_t n = lines.number();
    const auto w = split_words(*line);
    message m;
    m.kind = workload_kind::flow_list;
    std::uint32_t priority = 0;
    if (w.size() != 6 || !parse_whole(w[0], m.src) || !parse_whole(w[1], m.dst) || !parse_whole(w[2], priority) ||
        !parse_whole(w[3], m.udp_dport))
      return out.error(n, "expected 'src dst priority dport bytes start_seconds'");
    if (w[4].starts_with('-')) return out.error(n, "bytes " + quoted(w[4]) + ": a negative size");
    if (!parse_whole(w[4], m.bytes)) return out.error(n, "bytes " + quoted(w[4]) + " is not a whole number of bytes");
    if (!parse_seconds_ns(w[5], m.start_ns))
      return out.error(n, "start " + quoted(w[5]) + " is not a time in seconds (at most 9 decimals)");
    if (priority > 7) return out.error(n, "priority " + std::to_string(priority) + " is not 0..7");
    m.priority = static_cast<std::int16_t>(priority);
    ROCELAB_RETURN_IF_ERROR(out.add(n, m));
  }
  if (lines.next())
    return out.error(lines.number(), "a flow beyond the " + std::to_string(count) + " the first line counts");
  return out.take();
}

}  // namespace

const char* to_string(flow_list_format format) noexcept {
  switch (format) {
    case flow_list_format::csv: return "csv";
    case flow_list_format::htsim: return "htsim connection matrix";
    case flow_list_format::hpcc_ns3: return "HPCC ns-3 flow.txt";
  }
  return "csv";
}

result<flow_list_format> detect_flow_list_format(std::string_view text, const std::string& source) {
  line_reader lines(text);
  const auto first = lines.next();
  if (!first) return bad(source + ": no flows (the file is empty or only comments)");
  // htsim's marks first: a connection's `split` option holds commas.
  const auto words = split_words(*first);
  if (is_matrix_header(words[0]) || words[0].find("->") != std::string_view::npos) return flow_list_format::htsim;
  if (first->find(',') != std::string_view::npos) return flow_list_format::csv;
  std::uint64_t count = 0;
  if (words.size() == 1 && parse_whole(words[0], count)) return flow_list_format::hpcc_ns3;
  // The line is the spec author's own file (a controller only parses flow lists the client
  // inlined), so quoting it helps and exposes nothing; shortened, control bytes shown as '?'.
  constexpr std::size_t shown = 60;
  std::string line(first->substr(0, shown));
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) c = '?';
  if (first->size() > shown) line += "...";
  return bad(source + ":" + std::to_string(lines.number()) + ": not a flow list this reads: '" + line +
             "' (expected a CSV header 'src,dst,bytes,start_ns', htsim's 'Nodes N' / 'a->b start T size S', or "
             "HPCC ns-3 flow.txt's flow count)");
}

result<flow_list> parse_flow_list(std::string_view text, const std::string& source, std::uint32_t hosts) {
  auto format = detect_flow_list_format(text, source);
  if (!format) return format.error();
  return parse_flow_list(text, source, hosts, *format);
}

result<flow_list> parse_flow_list(std::string_view text, const std::string& source, std::uint32_t hosts,
                                  flow_list_format format) {
  switch (format) {
    case flow_list_format::csv: return parse_csv(text, source, hosts);
    case flow_list_format::htsim: return parse_htsim(text, source, hosts);
    case flow_list_format::hpcc_ns3: return parse_hpcc_ns3(text, source, hosts);
  }
  return bad(source + ": unknown flow list format");
}

result<flow_list> load_flow_list(const std::string& path, std::uint32_t hosts) {
  auto text = read_bounded_file(path, max_scenario_file_bytes, "flow list file");
  if (!text) return text.error();
  return parse_flow_list(*text, path, hosts);
}

bool parse_seconds_ns(std::string_view text, std::int64_t& ns) {
  const auto dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  std::string frac(dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1));
  std::int64_t s = 0;
  if (whole.empty() ? frac.empty() : !parse_whole(whole, s)) return false;
  if (frac.size() > 9 || !std::all_of(frac.begin(), frac.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  frac.resize(9, '0');
  std::int64_t f = 0;
  if (!parse_whole(std::string_view(frac), f)) return false;
  // Nanoseconds in int64 reach 292 years: a time beyond that is not a simulator's.
  constexpr std::int64_t max_seconds = std::numeric_limits<std::int64_t>::max() / 1'000'000'000 - 1;
  if (s > max_seconds) return false;
  ns = s * 1'000'000'000 + f;
  return true;
}

}  // namespace rocelab::traffic
