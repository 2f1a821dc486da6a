#include "rocelab/experiments/run/flow_timeline.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/wire/roce.hpp"

namespace rocelab::experiments {

namespace {

namespace op = captures::wire::roce_opcode;

constexpr std::uint32_t psn_mask = 0xffffff;

// RC SEND and RDMA WRITE requests (IBTA 9.2.1 table 39, 0x00-0x0B): the packets that
// carry a message's payload from requester to responder.
constexpr bool is_request(std::uint8_t opcode) { return opcode <= op::rc_rdma_write_only_with_immediate; }
constexpr bool begins_message(std::uint8_t opcode) {
  return opcode == op::rc_send_first || opcode == op::rc_send_only || opcode == op::rc_send_only_with_immediate ||
         opcode == op::rc_rdma_write_first || opcode == op::rc_rdma_write_only ||
         opcode == op::rc_rdma_write_only_with_immediate;
}

// "198.18.0.2" as the dissector keys addresses: IPv4-mapped IPv6.
std::optional<std::array<std::uint8_t, 16>> mapped_ipv4(const std::string& text) {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) return std::nullopt;
  std::array<std::uint8_t, 16> out{};
  out[10] = out[11] = 0xff;
  std::copy_n(reinterpret_cast<const std::uint8_t*>(&a.s_addr), 4, out.begin() + 12);
  return out;
}

// One RC QP's messages as its packets reveal them: PSNs are counted from the first seen
// (24-bit serial arithmetic, so a run of fewer than 2^23 packets per pair never wraps),
// and each message begins at the offset where a FIRST or ONLY opcode was first seen.
struct pair_messages {
  bool seen = false;
  std::uint32_t first_psn = 0;
  std::vector<std::uint32_t> begins;  // offsets, ascending
  std::vector<std::uint32_t> flows;   // this pair's flows in start order

  [[nodiscard]] std::uint32_t offset(std::uint32_t psn) const { return (psn - first_psn) & psn_mask; }
  // The index into `flows` of the message the packet at `off` belongs to, if any.
  [[nodiscard]] std::optional<std::size_t> message_at(std::uint32_t off) const {
    const auto it = std::upper_bound(begins.begin(), begins.end(), off);
    if (it == begins.begin()) return std::nullopt;
    const auto n = static_cast<std::size_t>(it - begins.begin()) - 1;
    if (n >= flows.size()) return std::nullopt;
    return n;
  }
};

}  // namespace

std::vector<counter_sample> flow_timeline_samples(const std::vector<flow_record>& flows,
                                                  std::span<const flow_packet> packets, std::int64_t bin_ns,
                                                  std::uint32_t first_host_device) {
  std::vector<counter_sample> out;
  if (bin_ns <= 0) return out;
  // Per flow: bytes per bin, from its first bin to its last.
  std::map<std::uint32_t, std::map<std::int64_t, std::uint64_t>> bins;
  for (const flow_packet& p : packets) {
    if (p.flow >= flows.size()) continue;
    bins[p.flow][std::max<std::int64_t>(p.t_ns, 0) / bin_ns] += p.payload_bytes;
  }
  for (const auto& [flow, per_bin] : bins) {
    const std::uint32_t device = first_host_device + flows[flow].src;
    const std::string name(flow_tx_bytes_counter);
    const std::int64_t first = per_bin.begin()->first, last = per_bin.rbegin()->first;
    out.push_back({device, flow, name, first * bin_ns, 0});
    std::uint64_t total = 0;
    auto it = per_bin.begin();
    for (std::int64_t k = first; k <= last; ++k) {
      if (it != per_bin.end() && it->first == k) total += (it++)->second;
      out.push_back({device, flow, name, (k + 1) * bin_ns, total});
    }
  }
  return out;
}

result<std::vector<flow_packet>> capture_flow_packets(const std::string& capture_file,
                                                      const std::vector<flow_record>& flows,
                                                      const std::vector<std::string>& host_ipv4,
                                                      std::int64_t t0_realtime_ns, double port_rate_bps) {
  std::vector<std::array<std::uint8_t, 16>> address;
  for (const auto& text : host_ipv4) {
    auto a = mapped_ipv4(text);
    if (!a) return status(error_code::invalid_argument, "flow timelines: host address '" + text + "' is not IPv4");
    address.push_back(*a);
  }
  auto host_of = [&](const std::array<std::uint8_t, 16>& a) -> std::optional<std::uint32_t> {
    const auto it = std::find(address.begin(), address.end(), a);
    if (it == address.end()) return std::nullopt;
    return static_cast<std::uint32_t>(it - address.begin());
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, pair_messages> pairs;
  std::vector<std::uint32_t> order(flows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return flows[a].start_ns < flows[b].start_ns; });
  for (std::uint32_t i : order) pairs[{flows[i].src, flows[i].dst}].flows.push_back(i);

  auto reader = captures::capture_file_reader::open_sequential(capture_file);
  if (!reader) return reader.error().with_context("flow timelines: reading the capture");
  std::vector<flow_packet> out;
  captures::packet_view packet;
  captures::dissected_frame d;
  while (reader->next(packet)) {
    const auto link =
        packet.interface_id < reader->interfaces().size() ? reader->interfaces()[packet.interface_id].link
                                                          : captures::link_type::ethernet;
    captures::dissect(link, packet.bytes, d);
    if (d.malformed || !d.is_roce || d.erspan_type != 0 || !is_request(d.bth_opcode)) continue;
    const auto src = host_of(d.ip_src), dst = host_of(d.ip_dst);
    if (!src || !dst) continue;
    const auto p = pairs.find({*src, *dst});
    if (p == pairs.end()) continue;
    pair_messages& m = p->second;
    if (!m.seen) {
      m.seen = true;
      m.first_psn = d.psn;
    }
    const std::uint32_t off = m.offset(d.psn);
    if (begins_message(d.bth_opcode) && (m.begins.empty() || off > m.begins.back())) m.begins.push_back(off);
    const auto n = m.message_at(off);
    if (!n) continue;
    // On the wire: the frame without FCS as captured, padded to 60, plus FCS, preamble and
    // gap (traffic/soft_nic/rc_nic.hpp wire_bytes).
    const std::uint64_t frame = std::max<std::uint64_t>(packet.original_length - d.inner_offset, 60);
    out.push_back({m.flows[*n], packet.timestamp_ns - t0_realtime_ns, d.roce_payload_length, *dst, frame + 24});
  }
  if (!reader->error().ok()) return reader->error().with_context("flow timelines: reading " + capture_file);
  if (port_rate_bps > 0) fit_to_port_rate(out, port_rate_bps);
  return out;
}

void fit_to_port_rate(std::vector<flow_packet>& packets, double port_rate_bps) {
  if (!(port_rate_bps > 0)) return;
  // Port -> the latest time the packet before the one last fitted may take: that one's
  // time less its own wire time (a copy is made as its frame has left).
  std::map<std::uint32_t, std::int64_t> next_start;
  for (auto it = packets.rbegin(); it != packets.rend(); ++it) {
    const auto found = next_start.find(it->port);
    std::int64_t t = it->t_ns;
    if (found != next_start.end()) t = std::min(t, found->second);
    it->t_ns = t;
    next_start[it->port] = t - static_cast<std::int64_t>(static_cast<double>(it->wire_bytes) * 8e9 / port_rate_bps);
  }
}

std::vector<flow_timeline> flow_timelines_of(const std::vector<counter_sample>& counters) {
  // (repeat, flow) -> samples in record order.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const counter_sample*>> series;
  std::map<std::uint32_t, std::pair<std::uint32_t, std::int64_t>> at;  // flow -> (repeat, last t_ns)
  for (const counter_sample& c : counters) {
    if (c.name != flow_tx_bytes_counter) continue;
    auto [it, fresh] = at.try_emplace(c.port, 0, c.t_ns);
    if (!fresh && c.t_ns < it->second.second) ++it->second.first;
    it->second.second = c.t_ns;
    series[{it->second.first, c.port}].push_back(&c);
  }
  std::vector<flow_timeline> out;
  for (const auto& [key, samples] : series) {
    flow_timeline t;
    t.repeat = key.first;
    t.flow = key.second;
    t.device = samples.front()->device;
    t.bytes = samples.back()->value;
    for (std::size_t i = 1; i < samples.size(); ++i) {
      const std::int64_t dt = samples[i]->t_ns - samples[i - 1]->t_ns;
      if (dt <= 0) continue;
      const double bytes = static_cast<double>(samples[i]->value) - static_cast<double>(samples[i - 1]->value);
      t.points.push_back({samples[i - 1]->t_ns, samples[i]->t_ns, bytes * 8e9 / static_cast<double>(dt)});
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string flow_timeline_json(const std::vector<counter_sample>& counters) {
  nlohmann::json out = nlohmann::json::array();
  for (const counter_sample& c : counters)
    if (c.name == flow_tx_bytes_counter) out.push_back({c.device, c.port, c.t_ns, c.value});
  return out.dump();
}

result<std::vector<counter_sample>> parse_flow_timeline_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    return status(error_code::malformed_input, "flow timeline: not a JSON array");
  std::vector<counter_sample> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    if (!e.is_array() || e.size() != 4 || !e[0].is_number_unsigned() || !e[1].is_number_unsigned() ||
        !e[2].is_number_integer() || !e[3].is_number_unsigned() || e[0].get<std::uint64_t>() > 0xffffffffu ||
        e[1].get<std::uint64_t>() > 0xffffffffu)
      return status(error_code::malformed_input,
                    "flow timeline: entry " + std::to_string(i) + " is not [device, flow, t_ns, bytes]");
    out.push_back({e[0].get<std::uint32_t>(), e[1].get<std::uint32_t>(), std::string(flow_tx_bytes_counter),
                   e[2].get<std::int64_t>(), e[3].get<std::uint64_t>()});
  }
  return out;
}

}  // namespace rocelab::experiments
