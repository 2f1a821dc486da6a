// The soft switch's implementation object (soft_switch::impl) and the small records
// its parts share: frame slots, delay lines, faults, control clients, the model's
// counters summed over model generations. Internal to the soft switch target; the
// contract is soft_switch.hpp's. One thread owns an impl: nothing here is thread-safe.
//
// The implementation, one concern a file:
//   soft_switch.cpp      construction (ports, pools, epoll, timerfd) and the public class
//   data_path.cpp        receive, forward, admit, dequeue, send, PFC, faults, mirror, the loop
//   control_server.cpp   the Unix control socket, its requests and settings changes
//   counters_export.cpp  counters, watermarks, status and the Prometheus text export

#pragma once

#include "rocelab/fabric/soft_switch/soft_switch.hpp"

#include <sched.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/captures/wire/mac_control.hpp"
#include "rocelab/fabric/soft_switch/drop_causes.hpp"
#include "rocelab/fabric/soft_switch/latency_histogram_json.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/fabric/switch_model.hpp"
namespace rocelab::fabric::soft_switch {
namespace detail {

using json = nlohmann::json;
namespace cap = captures;

inline std::uint64_t mac_key(const mac_address& m) {
  std::uint64_t k = 0;
  for (const auto b : m) k = (k << 8) | b;
  return k;
}

inline std::string format_mac(const mac_address& m) {
  char s[18];
  std::snprintf(s, sizeof s, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return s;
}

// The model's counters, summed over model generations (a `set` rebuilds the model).
// Signed, so reset_counters can subtract what the live model already counted.
struct model_counters {
  struct port_c {
    std::int64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0, pfc_tx_frames = 0, pfc_rx_frames = 0;
    std::array<std::int64_t, num_drop_reasons> dropped{};
  };
  struct queue_c {
    std::int64_t enqueued_packets = 0, enqueued_bytes = 0, dequeued_packets = 0, dequeued_bytes = 0;
    std::int64_t dropped_packets = 0, ecn_marked = 0;
    std::int64_t watermark_bytes = 0;  // watermark: max, not sum
  };
  struct pg_c {
    std::int64_t rx_packets = 0, rx_bytes = 0, dropped_packets = 0, xoff_sent = 0, xon_sent = 0, refresh_sent = 0;
    std::int64_t shared_watermark_cells = 0, headroom_watermark_cells = 0;  // max
  };
  std::vector<port_c> ports;
  std::vector<queue_c> queues;  // port x 8 + priority
  std::vector<pg_c> pgs;
  std::int64_t buffer_watermark_cells = 0;

  explicit model_counters(std::size_t n = 0) : ports(n), queues(n * num_priorities), pgs(n * num_priorities) {}

  static model_counters of(const switch_model& m) {
    model_counters c(m.num_ports());
    for (std::uint16_t p = 0; p < m.num_ports(); ++p) {
      const port_stats& s = m.port(p);
      auto& o = c.ports[p];
      o.rx_packets = static_cast<std::int64_t>(s.rx_packets);
      o.rx_bytes = static_cast<std::int64_t>(s.rx_bytes);
      o.tx_packets = static_cast<std::int64_t>(s.tx_packets);
      o.tx_bytes = static_cast<std::int64_t>(s.tx_bytes);
      o.pfc_tx_frames = static_cast<std::int64_t>(s.pfc_tx_frames);
      o.pfc_rx_frames = static_cast<std::int64_t>(s.pfc_rx_frames);
      for (int r = 0; r < num_drop_reasons; ++r) o.dropped[r] = static_cast<std::int64_t>(s.dropped_packets[r]);
      for (std::uint8_t q = 0; q < num_priorities; ++q) {
        const queue_stats qs = m.queue(p, q);
        auto& qo = c.queues[p * num_priorities + q];
        qo.enqueued_packets = static_cast<std::int64_t>(qs.enqueued_packets);
        qo.enqueued_bytes = static_cast<std::int64_t>(qs.enqueued_bytes);
        qo.dequeued_packets = static_cast<std::int64_t>(qs.dequeued_packets);
        qo.dequeued_bytes = static_cast<std::int64_t>(qs.dequeued_bytes);
        for (auto d : qs.dropped_packets) qo.dropped_packets += static_cast<std::int64_t>(d);
        qo.ecn_marked = static_cast<std::int64_t>(qs.ecn_marked);
        qo.watermark_bytes = static_cast<std::int64_t>(qs.watermark_bytes);
        const pg_stats ps = m.priority_group(p, q);
        auto& po = c.pgs[p * num_priorities + q];
        po.rx_packets = static_cast<std::int64_t>(ps.rx_packets);
        po.rx_bytes = static_cast<std::int64_t>(ps.rx_bytes);
        for (auto d : ps.dropped_packets) po.dropped_packets += static_cast<std::int64_t>(d);
        po.xoff_sent = static_cast<std::int64_t>(ps.xoff_sent);
        po.xon_sent = static_cast<std::int64_t>(ps.xon_sent);
        po.refresh_sent = static_cast<std::int64_t>(ps.refresh_sent);
        po.shared_watermark_cells = ps.shared_watermark_cells;
        po.headroom_watermark_cells = ps.headroom_watermark_cells;
      }
    }
    c.buffer_watermark_cells = m.buffer().watermark_cells;
    return c;
  }

  // Counters add (sign -1 subtracts); watermarks take the max (or stay when subtracting).
  void add(const model_counters& o, int sign = 1) {
    for (std::size_t p = 0; p < ports.size(); ++p) {
      auto& a = ports[p];
      const auto& b = o.ports[p];
      a.rx_packets += sign * b.rx_packets;
      a.rx_bytes += sign * b.rx_bytes;
      a.tx_packets += sign * b.tx_packets;
      a.tx_bytes += sign * b.tx_bytes;
      a.pfc_tx_frames += sign * b.pfc_tx_frames;
      a.pfc_rx_frames += sign * b.pfc_rx_frames;
      for (int r = 0; r < num_drop_reasons; ++r) a.dropped[r] += sign * b.dropped[r];
    }
    for (std::size_t i = 0; i < queues.size(); ++i) {
      auto& a = queues[i];
      const auto& b = o.queues[i];
      a.enqueued_packets += sign * b.enqueued_packets;
      a.enqueued_bytes += sign * b.enqueued_bytes;
      a.dequeued_packets += sign * b.dequeued_packets;
      a.dequeued_bytes += sign * b.dequeued_bytes;
      a.dropped_packets += sign * b.dropped_packets;
      a.ecn_marked += sign * b.ecn_marked;
      if (sign > 0) a.watermark_bytes = std::max(a.watermark_bytes, b.watermark_bytes);
      auto& g = pgs[i];
      const auto& h = o.pgs[i];
      g.rx_packets += sign * h.rx_packets;
      g.rx_bytes += sign * h.rx_bytes;
      g.dropped_packets += sign * h.dropped_packets;
      g.xoff_sent += sign * h.xoff_sent;
      g.xon_sent += sign * h.xon_sent;
      g.refresh_sent += sign * h.refresh_sent;
      if (sign > 0) {
        g.shared_watermark_cells = std::max(g.shared_watermark_cells, h.shared_watermark_cells);
        g.headroom_watermark_cells = std::max(g.headroom_watermark_cells, h.headroom_watermark_cells);
      }
    }
    if (sign > 0) buffer_watermark_cells = std::max(buffer_watermark_cells, o.buffer_watermark_cells);
  }
  // Counts to zero, watermarks kept (reset_counters; reset_watermarks clears those).
  void zero_counts() {
    model_counters z(ports.size());
    for (std::size_t i = 0; i < queues.size(); ++i) {
      z.queues[i].watermark_bytes = queues[i].watermark_bytes;
      z.pgs[i].shared_watermark_cells = pgs[i].shared_watermark_cells;
      z.pgs[i].headroom_watermark_cells = pgs[i].headroom_watermark_cells;
    }
    z.buffer_watermark_cells = buffer_watermark_cells;
    *this = std::move(z);
  }
  void clear_watermarks() {
    for (auto& q : queues) q.watermark_bytes = 0;
    for (auto& g : pgs) g.shared_watermark_cells = g.headroom_watermark_cells = 0;
    buffer_watermark_cells = 0;
  }
};

// What the adapter itself counts, per port.
struct soft_port_counters {
  std::uint64_t pool_drops = 0;       // no free frame buffer
  std::uint64_t oversize_drops = 0;   // longer than max_frame_bytes
  std::uint64_t filtered = 0;         // destination behind the ingress port
  std::uint64_t flooded = 0;          // copies made for group/unknown destinations
  std::uint64_t pause_rx_frames = 0;  // 802.3x PAUSE honoured as all-priority PFC
  std::uint64_t ce_rewrites = 0;      // frames whose IP ECN field was set to CE here
  std::uint64_t fault_drops = 0, fault_marks = 0, delayed_frames = 0, storm_frames = 0;
  std::uint64_t reconfig_drops = 0;
};

struct slot_meta {
  std::uint32_t len = 0;
  std::uint16_t ip_offset = 0;
  std::uint8_t ip_version = 0;
  ecn_codepoint ecn = ecn_codepoint::not_ect;  // as received (after a fault mark)
  // When the frame's last bit had arrived (the kernel's receive stamp on CLOCK_MONOTONIC
  // plus the ingress serialization): what its forwarding latency is counted from. -1: not
  // counted (an egress copy that met a busy port or a queue: that wait is queueing).
  std::int64_t arrived_ns = -1;
};

struct delayed {
  std::uint32_t slot;
  std::int64_t due_ns;
};

struct fault_entry {
  std::uint64_t id = 0;
  fault_spec spec;
  int port = -1;  // resolved
  std::uint64_t matched = 0, hits = 0;
  std::int64_t next_ns = 0;  // storm
  bool done = false;
};

// One client of the control socket: its fd and its partial request and response lines.
struct control_connection {
  unique_fd fd;
  std::string in, out;
};

}  // namespace detail

using json = nlohmann::json;
using namespace detail;

class soft_switch::impl final : public pfc_frame_sink {
 public:
  explicit impl(soft_switch_options o) : opt_(std::move(o)) {}

  status init();
  status run(const std::atomic<bool>& stop);
  std::string handle(std::string_view line);

 private:
  void on_pfc_frame_out(const pfc_frame_out& f) override;
  void send_pfc(std::uint16_t port, std::uint8_t prio_mask, std::uint16_t quanta);
  // A frame port `in`'s ring hands over: MAC control and the mirror copies at once, the
  // rest held until its last bit has arrived (store and forward), then forward_frame.
  void on_frame(std::uint16_t in, std::span<const std::uint8_t> frame, std::int64_t now);
  // arrived_ns: slot_meta::arrived_ns of the frame (-1: not counted).
  void forward_frame(std::uint16_t in, std::span<const std::uint8_t> frame, std::int64_t now,
                     std::int64_t arrived_ns);
  // Forwards the held frames whose last bit has arrived by `now`.
  std::size_t service_arrivals(std::int64_t now);
  void admit_copy(std::uint16_t in, std::uint16_t out, std::span<const std::uint8_t> frame, const frame_info& info,
                  std::uint8_t tc, bool mark, std::int64_t now, std::int64_t arrived_ns);
  // Whether port `out` would start a frame admitted now at once: its link idle and every
  // queue of it empty.
  bool egress_idle(std::uint16_t out, std::int64_t now) const;
  // CLOCK_REALTIME - CLOCK_MONOTONIC, read at most once per loop pass (when a frame came).
  std::int64_t stamp_offset_ns();
  std::size_t service_ports(std::int64_t now);
  void flush_tx(std::uint16_t port);
  port_drop_causes drop_causes_of(std::uint16_t port, const model_counters& t);
  void depart(std::uint16_t port, const departure& d, std::int64_t now);
  std::size_t service_faults(std::int64_t now);
  void mirror(std::span<const std::uint8_t> frame, std::uint16_t port, bool egress, std::uint8_t tc, std::int64_t now);
  // The arrival copy (mirror_settings::arrivals) of `frame`, which port `port`'s receive()
  // is handing over.
  void mirror_arrival(std::span<const std::uint8_t> frame, std::uint16_t port, std::uint8_t tc);
  // Sends the first `len` bytes of mirror_scratch_ to the mirror port, counting it.
  bool send_mirror_copy(std::size_t len);
  std::int64_t next_deadline(std::int64_t now);
  void sample_queues(std::int64_t now);
  std::span<std::uint8_t> slot_bytes(std::uint32_t slot) {
    return {pool_.data() + std::size_t{slot} * slot_bytes_, slot_bytes_};
  }
  std::uint32_t alloc_slot() {
    if (free_.empty()) return UINT32_MAX;
    const std::uint32_t s = free_.back();
    free_.pop_back();
    return s;
  }
  void free_slot(std::uint32_t s) { free_.push_back(s); }
  int resolve(const port_ref& r) const;
  status apply(const switch_settings& next, bool reset_watermarks);
  model_counters totals() const {
    model_counters t = carried_;
    t.add(model_counters::of(*model_));
    return t;
  }
  json counters_json(bool watermarks_only);
  std::string prometheus();
  json status_json();
  json mirror_json() const;
  json faults_json() const;
  // control socket
  status open_control();
  void accept_clients();
  void serve_client(control_connection& c);
  void poll_control(int timeout_ms);

  soft_switch_options opt_;
  realtime_clock clock_;  // before model_: the model's timers live here
  std::unique_ptr<switch_model> model_;
  std::vector<packet_port> ports_;
  std::unique_ptr<packet_port> mirror_port_;
  std::vector<std::uint8_t> pool_;
  std::vector<slot_meta> meta_;
  std::vector<std::uint32_t> free_;
  std::vector<packet_pacer> pacers_;                 // per port (rate_pps)
  std::vector<std::int64_t> stall_catchup_ns_;       // per port: catch-up window after a loop stall
  // per port: when it last received a PFC or PAUSE frame. A catch-up never starts before
  // it: while paused the link was not sending, so it owes no frames for that time.
  std::vector<std::int64_t> pause_changed_ns_;
  std::vector<std::vector<std::uint32_t>> tx_slots_;  // per port: departed, not yet sent
  std::uint32_t slot_bytes_ = 0, slots_ = 0;
  std::unordered_map<std::uint64_t, std::uint16_t> fdb_;
  std::unordered_map<std::uint64_t, bool> static_fdb_;
  model_counters carried_;
  std::vector<soft_port_counters> soft_;
  std::vector<std::vector<delayed>> delay_ring_;  // per port, a ring of slots_ entries
  std::vector<std::size_t> delay_head_, delay_count_;
  std::vector<std::int64_t> delay_ns_;
  // Per port: frames received and not yet fully arrived (their due_ns is when their last
  // bit would have at the port's rate), a ring of slots_ entries, and the latest due_ns
  // given (the line keeps its order).
  std::vector<std::vector<delayed>> arrive_ring_;
  std::vector<std::size_t> arrive_head_, arrive_count_;
  std::vector<std::int64_t> ingress_due_ns_;
  // Per egress port: each frame's forwarding latency beyond store and forward, (first bit
  // out) - (last bit in), of the frames that found the port idle and empty (queueing is
  // the model's, not latency). First bit out: the send to the next hop minus the egress
  // serialization (a frame leaves the switch at its last bit). Cleared by reset_counters.
  std::vector<latency_histogram> forwarding_;
  std::int64_t stamp_offset_ns_ = 0;
  bool stamp_offset_fresh_ = false;  // stamp_offset_ns_ read in this loop pass
  std::vector<fault_entry> faults_;
  std::uint64_t next_fault_id_ = 1;
  bool suppress_pfc_ = false;
  std::uint64_t mirror_frames_ = 0, mirror_bytes_ = 0, mirror_errors_ = 0, mirror_truncated_ = 0;
  std::uint64_t mirror_pfc_frames_ = 0;  // of mirror_frames_: the switch's own PFC frames
  std::uint64_t mirror_arrival_frames_ = 0;  // of mirror_frames_: arrival copies
  std::string scheduling_ = "SCHED_OTHER";
  std::uint32_t erspan_sequence_ = 0;
  std::vector<std::uint8_t> mirror_scratch_;
  std::int64_t started_ns_ = 0;
  // Egress queue depth samples (control ops queue_sampling / queue_samples).
  std::int64_t sample_interval_ns_ = 0, next_sample_ns_ = 0;
  std::vector<std::array<std::int64_t, 4>> samples_;  // t_ns, port, queue, bytes
  std::vector<std::uint8_t> sampled_nonzero_;         // port x 8 + queue
  std::size_t samples_read_ = 0;                      // of samples_, returned already
  std::uint64_t samples_dropped_ = 0;
  unique_fd epoll_, timer_, listen_;
  std::vector<control_connection> clients_;
};

}  // namespace rocelab::fabric::soft_switch
