#include "rocelab/captures/congestion_analyzer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "analyzer_tables.hpp"

namespace rocelab::captures {
namespace {

using detail::flow_hot;
using detail::flow_key;
using detail::flow_state;
using detail::flow_table;
using detail::hash_key;
using detail::ipv4_mapped;
using detail::ipv4_flow_table;
using detail::no_record;
using detail::port_table;

constexpr std::uint8_t bth_opcode_acknowledge = 0x11;
constexpr std::uint8_t bth_opcode_cnp = 0x81;
constexpr std::uint16_t mac_control_pause = 0x0001;
constexpr std::uint16_t mac_control_pfc = 0x0101;
constexpr std::uint32_t psn_mask = 0xffffff;

// AETH syndrome, IBTA vol. 1 9.7.5.1: bits 7..5 select ACK (000), RNR NAK (001), NAK (011).
constexpr std::uint8_t aeth_class(std::uint8_t syndrome) { return syndrome >> 5; }
constexpr std::uint8_t aeth_class_rnr_nak = 1;
constexpr std::uint8_t aeth_class_nak = 3;

// True when 24-bit PSN a is strictly ahead of b (serial arithmetic, IBTA 9.7.1: a window
// of half the PSN space ahead).
constexpr bool psn_ahead(std::uint32_t a, std::uint32_t b) {
  const std::uint32_t d = (a - b) & psn_mask;
  return d != 0 && d < (1u << 23);
}

// One port's pause state and the totals of its closed intervals, an array per field and
// a slot per priority: a PFC frame's update of one priority touches each array at one
// index, with no pair of fields for the compiler to pack into vector stores and reloads.
struct port_pause {
  std::string name;
  std::array<bool, 8> open{};
  std::array<std::int64_t, 8> start_ns{};
  std::array<std::int64_t, 8> expiry_ns{};
  std::array<std::uint32_t, 8> frames{};  // XOFF frames merged into the open interval
  std::array<std::uint64_t, 8> intervals{};
  std::array<std::uint64_t, 8> merged_frames{};
  std::array<std::int64_t, 8> paused_ns{};
  std::array<std::int64_t, 8> longest_ns{};
};

// The six bytes as one integer (a table key: byte order does not matter, only that
// different MACs give different keys).
std::uint64_t mac_key(const std::array<std::uint8_t, 6>& mac) {
  std::uint32_t high;
  std::uint16_t low;
  std::memcpy(&high, mac.data(), 4);
  std::memcpy(&low, mac.data() + 4, 2);
  return (std::uint64_t{high} << 16) | low;
}

// llround() for 0 <= x < 2^52 without the libm call: below 2^52 the fraction x - trunc(x)
// is exact, so comparing it with one half rounds half away from zero as llround does.
inline std::int64_t round_nonnegative(double x) {
  const auto whole = static_cast<std::int64_t>(x);
  return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

// Pause quanta as nanoseconds beyond which round_nonnegative() no longer applies; link
// speeds the CLI accepts (>= 0.001 Gb/s) stay far below it (65535 quanta: 3.4e10 ns).
constexpr double max_exact_pause_ns = 4503599627370496.0;  // 2^52

}  // namespace

struct congestion_analyzer::state {
  analyzer_options options;
  double quantum_ns;
  capture_analysis out;
  std::vector<interface_info> interfaces;
  // Every flow's record, in order of first sight; packets, bytes and last_ns are filled
  // from the flow's hot counters by finish().
  std::vector<roce_flow> records;
  ipv4_flow_table ipv4_flows;
  std::vector<flow_state> flows;  // flows with an address that is not IPv4
  flow_table table;
  // Ports keyed by interface id (bit 63 set) or source MAC.
  port_table port_index;
  // RoCE packets by ECN codepoint (0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE): an index
  // instead of a branch per packet; finish() names them in out.roce.ecn.
  std::array<std::uint64_t, 4> ecn_by_codepoint{};
  std::vector<port_pause> ports;
  std::uint64_t intervals_closed = 0;
  // The longest intervals so far, longest first (ports by analyzer index until finish()).
  std::vector<pause_interval> longest;
  // The length of the shortest in `longest` once that holds longest_pauses_kept, the
  // least length an interval needs to enter (ties compete on start, port, priority).
  std::int64_t longest_floor_ns = std::numeric_limits<std::int64_t>::min();
  dissected_frame scratch;

  std::vector<link_type> links;  // parallel to `interfaces`

  explicit state(analyzer_options o)
      : options(o), quantum_ns(512.0 / o.link_gbps) {
    out.link_gbps = o.link_gbps;
  }

  link_type link_of(std::uint32_t interface_id) const {
    return interface_id < links.size() ? links[interface_id] : link_type::ethernet;
  }

  // The port's index in `ports`, created on first sight. Inlined into on_pfc (a storm
  // looks a port up for every PFC frame); the rare new port is add_port()'s.
  [[gnu::always_inline]] std::uint32_t port_for(const packet_view& packet,
                                                const std::array<std::uint8_t, 6>& src_mac) {
    const bool by_interface = interfaces.size() > 1;
    const std::uint64_t key = by_interface ? (1ull << 63) | packet.interface_id : mac_key(src_mac);
    const auto next = static_cast<std::uint32_t>(ports.size());
    const std::uint32_t index = port_index.find_or_insert(key, next);
    if (index == next) [[unlikely]] add_port(packet, src_mac, by_interface);
    return index;
  }

  [[gnu::noinline]] void add_port(const packet_view& packet, const std::array<std::uint8_t, 6>& src_mac,
                                  bool by_interface) {
    port_pause p;
    if (by_interface) {
      const auto& name = interfaces[packet.interface_id].name;
      p.name = name.empty() ? "if" + std::to_string(packet.interface_id) : name;
    } else {
      p.name = format_mac(src_mac);
    }
    ports.push_back(std::move(p));
  }

  // Ports in the order finish() numbers them: by name, then first seen.
  bool port_before(std::uint32_t a, std::uint32_t b) const {
    if (a == b) return false;
    const int c = ports[a].name.compare(ports[b].name);
    return c != 0 ? c < 0 : a < b;
  }

  // The order of longest_pauses() over the sorted list: longer first, then by start,
  // port, priority.
  bool longer(const pause_interval& a, const pause_interval& b) const {
    const std::int64_t la = a.end_ns - a.start_ns, lb = b.end_ns - b.start_ns;
    if (la != lb) return la > lb;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.port != b.port) return port_before(a.port, b.port);
    return a.priority < b.priority;
  }

  void offer_longest(const pause_interval& iv) {
    const std::size_t n = options.longest_pauses_kept;
    if (n == 0) return;
    if (longest.size() == n && !longer(iv, longest.back())) return;
    auto at = longest.begin();
    while (at != longest.end() && !longer(iv, *at)) ++at;
    longest.insert(at, iv);
    if (longest.size() > n) longest.pop_back();
    if (longest.size() == n) longest_floor_ns = longest.back().end_ns - longest.back().start_ns;
  }

  // The interval a PFC frame or the end of the capture closes: to the list of every
  // interval when kept, and to the longest when it may be one of them (shorter than the
  // shortest of a full list, offer_longest() would turn it away).
  void record_closed(const pause_interval& iv) {
    if (options.keep_pause_intervals) out.pauses.push_back(iv);
    if (iv.end_ns - iv.start_ns >= longest_floor_ns) offer_longest(iv);
  }

  struct pause_step_constants {
    bool keep_pause_intervals;
    double quantum_ns;
  };

  // One (port, priority) for one PFC frame that enables it, with the choices made by
  // selects, not branches: in a storm XON, refresh and expiry follow each other in no
  // order a branch predictor learns. Only the rare step branches: an interval that is
  // kept or may be among the longest. floor_ns: longest_floor_ns, read again here when
  // an interval has been offered to the longest.
  [[gnu::always_inline]] void pause_step(std::uint32_t port, port_pause& pp, unsigned prio, std::int64_t t,
                                         std::uint16_t quanta, const pause_step_constants& k,
                                         std::int64_t& floor_ns) {
    const bool xoff = quanta != 0;
    const bool open = pp.open[prio];
    const std::int64_t start = pp.start_ns[prio];
    const std::int64_t expiry_before = pp.expiry_ns[prio];
    const std::uint32_t frames = pp.frames[prio];
    // An XON (802.1Qbb 36.1.3.3: zero quanta resumes at once) closes an open interval at
    // its arrival or at the expiry if that came first; an XOFF after the expiry closes it
    // at the expiry and opens another. Either way the end is min(t, expiry).
    const bool closes = open & (!xoff | (t > expiry_before));
    // All ones or zero (GCC makes a branch of a ?: between two values here).
    const std::int64_t close_mask = -static_cast<std::int64_t>(closes);
    const std::int64_t end_ns = std::max(std::min(t, expiry_before), start);
    const std::int64_t length = (end_ns - start) & close_mask;
    pp.intervals[prio] += closes;
    pp.merged_frames[prio] += frames & static_cast<std::uint32_t>(close_mask);
    pp.paused_ns[prio] += length;
    pp.longest_ns[prio] = std::max(pp.longest_ns[prio], length);
    if (closes & (k.keep_pause_intervals | (length >= floor_ns))) [[unlikely]] {
      record_closed({port, static_cast<std::uint8_t>(prio), start, end_ns, frames});
      floor_ns = longest_floor_ns;
    }
    // Saturating: a hostile or clamped timestamp near the end of int64 must not wrap.
    const double pause_ns = quanta * k.quantum_ns;
    const std::int64_t rounded_ns =
        pause_ns < max_exact_pause_ns ? round_nonnegative(pause_ns) : std::llround(pause_ns);
    std::int64_t expiry;
    if (__builtin_add_overflow(t, rounded_ns, &expiry)) [[unlikely]]
      expiry = std::numeric_limits<std::int64_t>::max();
    // An XOFF opens an interval when none is open (or the open one just closed), else
    // refreshes it: the timer restarts with the new quanta (it may shorten it). An XON
    // leaves the priority closed.
    const bool fresh = !open | closes;
    const std::int64_t xoff_mask = -static_cast<std::int64_t>(xoff);
    const std::int64_t opens_mask = -static_cast<std::int64_t>(xoff & fresh);
    pp.open[prio] = xoff;
    pp.start_ns[prio] = (t & opens_mask) | (start & ~opens_mask);
    pp.expiry_ns[prio] = (expiry & xoff_mask) | (expiry_before & ~xoff_mask);
    const std::uint32_t kept_frames = frames & (static_cast<std::uint32_t>(fresh) - 1u);  // 0 when fresh
    pp.frames[prio] = (kept_frames + 1u) & static_cast<std::uint32_t>(xoff_mask);
  }

  void on_pfc(const packet_view& packet, const std::array<std::uint8_t, 6>& src_mac, std::uint16_t class_enable,
              const std::array<std::uint16_t, 8>& pfc_quanta) {
    ++out.pfc.frames;
    // The enabled priorities only, lowest first (bits 8..15 of the vector are reserved); a
    // frame that enables none names no port.
    unsigned enabled = class_enable & 0xffu;
    if (enabled == 0) return;
    const std::int64_t t = packet.timestamp_ns;
    const std::uint32_t port = port_for(packet, src_mac);
    port_pause& pp = ports[port];
    // In locals: the stores through pp may alias any member, which would otherwise be
    // loaded again for every priority.
    const pause_step_constants k{options.keep_pause_intervals, quantum_ns};
    std::int64_t floor_ns = longest_floor_ns;
    for (; enabled != 0; enabled &= enabled - 1) {
      const auto prio = static_cast<unsigned>(__builtin_ctz(enabled));
      const std::uint16_t quanta = pfc_quanta[prio];
      auto& counts = out.pfc.by_priority[prio];
      ++counts.frames;  // xon is frames - xoff, filled by finish()
      counts.quanta += quanta;
      counts.xoff += quanta != 0;
      pause_step(port, pp, prio, t, quanta, k, floor_ns);
    }
  }

  // Counts one packet dissect() took apart.
  void count(const packet_view& packet, const dissected_frame& f);

  // A copy of the arrivals session: the earliest arrival per flow.
  std::map<std::tuple<std::array<std::uint8_t, 16>, std::array<std::uint8_t, 16>, std::uint32_t>, message_arrival>
      arrivals;
  void on_arrival(const packet_view& packet, const dissected_frame& f) {
    ++out.arrival_copies;
    if (!f.is_roce) return;
    std::int64_t at = packet.timestamp_ns;
    if (f.erspan_granularity == 1) {
      // 100 ns units modulo 2^32 (~429 s): the latest such instant not after the capture's
      // own timestamp, which comes after the switch's.
      constexpr std::int64_t unit = 100, wrap = std::int64_t{1} << 32;
      const std::int64_t behind = ((at / unit - std::int64_t{f.erspan_timestamp}) % wrap + wrap) % wrap;
      at = (at / unit - behind) * unit;
    }
    auto [it, fresh] = arrivals.try_emplace({f.ip_src, f.ip_dst, f.dest_qp}, message_arrival{f.ip_src, f.ip_dst,
                                                                                             f.dest_qp, at, 0});
    message_arrival& a = it->second;
    a.first_ns = std::min(a.first_ns, at);
    ++a.copies;
  }

  // A frame dissect_common() took: the same counting as count() with dissect()'s fields.
  void count_common(const packet_view& packet, const common_frame& c) {
    ++out.frames;
    if (c.what == common_frame::kind::pfc) {
      on_pfc(packet, c.src_mac, c.pfc_class_enable, c.pfc_quanta);
      return;
    }
    // Snapped captures (a mirror keeping the headers) truncate most data packets.
    if (c.truncated) {
      if (packet.bytes.size() >= packet.original_length) {
        ++out.malformed;
      } else {
        ++out.truncated;
      }
    }
    auto& e = ipv4_flows.find_or_insert(ipv4_flow_table::addresses_of(c.ip_src.data(), c.ip_dst.data()),
                                        c.dest_qp, records);
    on_roce(packet, {0, c.ecn, c.bth_opcode, c.has_aeth, c.aeth_syndrome, c.psn}, e.hot, e.record);
  }

  // A flow's per-packet counters and the index of its record. IPv4-mapped addresses
  // (IPv4 packets) go to the IPv4 table whichever path dissected them.
  std::pair<flow_hot*, std::uint32_t> flow_of(const dissected_frame& f) {
    if (ipv4_mapped(f.ip_src) && ipv4_mapped(f.ip_dst)) {
      auto& e = ipv4_flows.find_or_insert(ipv4_flow_table::addresses_of(f.ip_src.data() + 12, f.ip_dst.data() + 12),
                                          f.dest_qp, records);
      return {&e.hot, e.record};
    }
    const flow_key key = flow_key::of(f.ip_src, f.ip_dst, f.dest_qp);
    flow_state& s = table.find_or_insert(key, hash_key(key), flows, records);
    return {&s.hot, s.record};
  }

  // What on_roce() reads of a dissected RoCE packet.
  struct roce_fields {
    std::uint16_t inner_offset;
    std::uint8_t ecn;
    std::uint8_t bth_opcode;
    bool has_aeth;
    std::uint8_t aeth_syndrome;
    std::uint32_t psn;
  };

  [[gnu::always_inline]] void on_roce(const packet_view& packet, const roce_fields& f, flow_hot& flow,
                                      std::uint32_t record) {
    auto& roce = out.roce;
    const std::uint64_t bytes = packet.original_length > f.inner_offset
                                    ? packet.original_length - f.inner_offset
                                    : 0;
    ++roce.packets;
    roce.bytes += bytes;
    ++ecn_by_codepoint[f.ecn & 3];

    roce_flow& r = records[record];  // an address only: touched by few packets
    if (flow.packets == 0) [[unlikely]] r.first_ns = packet.timestamp_ns;
    ++flow.packets;
    flow.bytes += bytes;
    flow.last_ns = std::max(flow.last_ns, packet.timestamp_ns);
    if (f.ecn == 3) ++r.ce;

    if (f.bth_opcode == bth_opcode_cnp) {
      ++roce.cnp;
      ++r.cnp;
      return;
    }
    if (f.bth_opcode == bth_opcode_acknowledge) {
      const std::uint8_t cls = f.has_aeth ? aeth_class(f.aeth_syndrome) : 0;
      if (cls == aeth_class_nak) {
        ++roce.nak;
      } else if (cls == aeth_class_rnr_nak) {
        ++roce.nak;
        ++roce.rnr_nak;
      } else {
        ++roce.ack;
      }
      return;
    }
    ++roce.data;
    const std::uint32_t psn = f.psn & psn_mask;
    if (!flow.has_psn) {
      flow.has_psn = true;
      flow.highest_psn = psn;
    } else if (psn_ahead(psn, flow.highest_psn)) {
      flow.highest_psn = psn;
    } else {
      ++r.retransmits;
      if (!psn_ahead(psn, flow.previous_psn)) ++r.psn_rewinds;
    }
    flow.previous_psn = psn;
  }
};

congestion_analyzer::congestion_analyzer(analyzer_options options)
    : state_(std::make_unique<state>(options)) {}
congestion_analyzer::congestion_analyzer(congestion_analyzer&&) noexcept = default;
congestion_analyzer& congestion_analyzer::operator=(congestion_analyzer&&) noexcept = default;
congestion_analyzer::~congestion_analyzer() = default;

void congestion_analyzer::set_interfaces(const std::vector<interface_info>& interfaces) {
  state_->interfaces = interfaces;
  state_->links.clear();
  for (const auto& i : interfaces) state_->links.push_back(i.link);
}

void congestion_analyzer::add(const packet_view& packet) {
  state& s = *state_;
  const link_type link = s.link_of(packet.interface_id);
  // A local, so its fields can stay in registers from the dissector to the counters.
  common_frame c;
  if (link == link_type::ethernet && dissect_common(packet.bytes, c)) [[likely]] {
    s.count_common(packet, c);
    return;
  }
  dissect(link, packet.bytes, s.scratch);
  s.count(packet, s.scratch);
}

void congestion_analyzer::add(const packet_view& packet, const dissected_frame& f) {
  state& s = *state_;
  s.count(packet, f);
}

void congestion_analyzer::state::count(const packet_view& packet, const dissected_frame& f) {
  state& s = *this;
  ++s.out.frames;
  if (f.erspan_type) ++s.out.erspan_packets;
  if (f.erspan_type == 3 && !f.erspan_egress && s.options.arrivals_session != 0 &&
      f.erspan_session == s.options.arrivals_session)
    return s.on_arrival(packet, f);
  // A frame cut short inside a header is truncated only when the capture cut it (fewer
  // bytes captured than were on the wire, or a mirror's cut of an ERSPAN payload); a frame
  // captured whole that is shorter than its headers claim is malformed.
  const bool captured_whole = packet.bytes.size() >= packet.original_length;
  if (f.malformed || (f.truncated && captured_whole && f.erspan_type == 0)) {
    ++s.out.malformed;
  } else if (f.truncated) {
    ++s.out.truncated;
  }
  if (f.unsupported_link) ++s.out.unsupported_link;
  if (f.is_roce) {
    const auto [hot, record] = s.flow_of(f);
    s.on_roce(packet, {f.inner_offset, f.ecn, f.bth_opcode, f.has_aeth, f.aeth_syndrome, f.psn}, *hot, record);
  } else if (f.is_mac_control) {
    if (f.mac_control_opcode == mac_control_pfc) {
      s.on_pfc(packet, f.src_mac, f.pfc_class_enable, f.pfc_quanta);
    } else if (f.mac_control_opcode == mac_control_pause) {
      ++s.out.pause.frames;
      s.out.pause.quanta += f.pause_quanta;
    }
  }
}

capture_analysis congestion_analyzer::finish() {
  state& s = *state_;
  // Open intervals end at their expiry (an XON at the expiry closes the same way).
  for (std::uint32_t i = 0; i < s.ports.size(); ++i)
    for (std::uint8_t prio = 0; prio < 8; ++prio)
      if (s.ports[i].open[prio]) {
        std::int64_t floor_ns = s.longest_floor_ns;
        s.pause_step(i, s.ports[i], prio, s.ports[i].expiry_ns[prio], 0,
                     {s.options.keep_pause_intervals, s.quantum_ns}, floor_ns);
      }

  const auto fill = [&](const flow_hot& hot, std::uint32_t record) {
    roce_flow& r = s.records[record];
    r.packets = hot.packets;
    r.bytes = hot.bytes;
    r.last_ns = hot.last_ns;
  };
  for (const auto& e : s.ipv4_flows.entries())
    if (e.record != no_record) fill(e.hot, e.record);
  for (const auto& f : s.flows) fill(f.hot, f.record);
  for (auto& [key, a] : s.arrivals) s.out.arrivals.push_back(a);
  s.arrivals = {};
  std::sort(s.out.arrivals.begin(), s.out.arrivals.end(), [](const message_arrival& a, const message_arrival& b) {
    return std::tie(a.first_ns, a.src, a.dst, a.dest_qp) < std::tie(b.first_ns, b.src, b.dst, b.dest_qp);
  });
  s.out.flows = std::move(s.records);
  s.records = {};
  s.ipv4_flows = {};
  s.flows = {};
  s.table = {};
  std::sort(s.out.flows.begin(), s.out.flows.end(), [](const roce_flow& a, const roce_flow& b) {
    return std::tie(a.first_ns, a.src, a.dst, a.dest_qp) < std::tie(b.first_ns, b.src, b.dst, b.dest_qp);
  });
  // Ports renumbered in name order (first seen among equal names), so intervals sort on
  // integers (a storm has millions).
  std::vector<std::uint32_t> by_name(s.ports.size());
  for (std::uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(), [&](std::uint32_t a, std::uint32_t b) { return s.port_before(a, b); });
  std::vector<std::uint32_t> rank(s.ports.size());
  s.out.ports.clear();
  s.out.pause_summary.clear();
  for (std::uint32_t r = 0; r < by_name.size(); ++r) {
    rank[by_name[r]] = r;
    port_pause& port = s.ports[by_name[r]];
    s.out.ports.push_back(port.name);
    for (std::uint8_t prio = 0; prio < 8; ++prio) {
      if (port.intervals[prio] != 0)
        s.out.pause_summary.push_back(
            {r, prio, port.intervals[prio], port.merged_frames[prio], port.paused_ns[prio], port.longest_ns[prio]});
      s.intervals_closed += port.intervals[prio];
      port.intervals[prio] = port.merged_frames[prio] = 0;
      port.paused_ns[prio] = port.longest_ns[prio] = 0;
    }
  }
  for (pause_interval& p : s.out.pauses) p.port = rank[p.port];
  std::sort(s.out.pauses.begin(), s.out.pauses.end(), [](const pause_interval& a, const pause_interval& b) {
    return std::tie(a.start_ns, a.port, a.priority) < std::tie(b.start_ns, b.port, b.priority);
  });
  s.out.longest_pause_intervals = std::move(s.longest);
  s.longest = {};
  s.longest_floor_ns = std::numeric_limits<std::int64_t>::min();
  for (pause_interval& p : s.out.longest_pause_intervals) p.port = rank[p.port];
  s.out.pause_interval_count = std::exchange(s.intervals_closed, 0);
  for (pfc_priority_counts& c : s.out.pfc.by_priority) c.xon = c.frames - c.xoff;
  s.out.roce.ecn = {s.ecn_by_codepoint[0], s.ecn_by_codepoint[2], s.ecn_by_codepoint[1], s.ecn_by_codepoint[3]};
  s.ecn_by_codepoint = {};
  capture_analysis result = std::move(s.out);
  s.out = {};
  s.out.link_gbps = s.options.link_gbps;
  return result;
}

std::string format_mac(const std::array<std::uint8_t, 6>& mac) {
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
                mac[3], mac[4], mac[5]);
  return text;
}

std::string format_ip(const std::array<std::uint8_t, 16>& a) {
  static constexpr std::uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  char text[64];
  if (std::memcmp(a.data(), v4_prefix, 12) == 0) {
    std::snprintf(text, sizeof text, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
    return text;
  }
  // RFC 5952: lower-case hex, no leading zeros, the longest run (>= 2) of zero groups as ::.
  std::array<unsigned, 8> g{};
  for (int i = 0; i < 8; ++i) g[i] = (a[2 * i] << 8) | a[2 * i + 1];
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) { ++i; continue; }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) { best = i; best_len = j - i; }
    i = j;
  }
  std::string s;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      s += "::";
      i += best_len - 1;
      continue;
    }
    if (!s.empty() && s.back() != ':') s += ':';
    std::snprintf(text, sizeof text, "%x", g[i]);
    s += text;
  }
  return s;
}

}  // namespace rocelab::captures
