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
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/fabric/switch_model.hpp"

namespace rocelab::fabric::soft_switch {
namespace {

using json = nlohmann::json;
namespace cap = captures;

std::uint64_t mac_key(const mac_address& m) {
  std::uint64_t k = 0;
  for (const auto b : m) k = (k << 8) | b;
  return k;
}

std::string format_mac(const mac_address& m) {
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

struct control_client {
  unique_fd fd;
  std::string in, out;
};

}  // namespace

class soft_switch::impl final : public pfc_frame_sink {
 public:
  explicit impl(soft_switch_options o) : opt_(std::move(o)) {}

  status init();
  status run(const std::atomic<bool>& stop);
  std::string handle(std::string_view line);

 private:
  void on_pfc_frame_out(const pfc_frame_out& f) override;
  void send_pfc(std::uint16_t port, std::uint8_t prio_mask, std::uint16_t quanta);
  void on_frame(std::uint16_t in, std::span<const std::uint8_t> frame, std::int64_t now);
  void admit_copy(std::uint16_t in, std::uint16_t out, std::span<const std::uint8_t> frame, const frame_info& info,
                  std::uint8_t tc, bool mark, std::int64_t now);
  std::size_t service_ports(std::int64_t now);
  void depart(std::uint16_t port, const departure& d, std::int64_t now);
  std::size_t service_faults(std::int64_t now);
  void mirror(std::span<const std::uint8_t> frame, std::uint16_t port, bool egress, std::uint8_t tc, std::int64_t now);
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
  void serve_client(control_client& c);
  void poll_control(int timeout_ms);

  soft_switch_options opt_;
  realtime_clock clock_;  // before model_: the model's timers live here
  std::unique_ptr<switch_model> model_;
  std::vector<packet_port> ports_;
  std::unique_ptr<packet_port> mirror_port_;
  std::vector<std::uint8_t> pool_;
  std::vector<slot_meta> meta_;
  std::vector<std::uint32_t> free_;
  std::uint32_t slot_bytes_ = 0, slots_ = 0;
  std::unordered_map<std::uint64_t, std::uint16_t> fdb_;
  std::unordered_map<std::uint64_t, bool> static_fdb_;
  model_counters carried_;
  std::vector<soft_port_counters> soft_;
  std::vector<std::vector<delayed>> delay_ring_;  // per port, a ring of slots_ entries
  std::vector<std::size_t> delay_head_, delay_count_;
  std::vector<std::int64_t> delay_ns_;
  std::vector<fault_entry> faults_;
  std::uint64_t next_fault_id_ = 1;
  bool suppress_pfc_ = false;
  std::uint64_t mirror_frames_ = 0, mirror_bytes_ = 0, mirror_errors_ = 0, mirror_truncated_ = 0;
  std::uint64_t mirror_pfc_frames_ = 0;  // of mirror_frames_: the switch's own PFC frames
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
  std::vector<control_client> clients_;
};

status soft_switch::impl::init() {
  const std::size_t n = opt_.ports.size();
  if (n == 0 || n > 256) return {error_code::invalid_argument, "ports: expected 1..256"};
  if (opt_.settings.model.ports.size() != n)
    return {error_code::invalid_argument, "settings: the model has " + std::to_string(opt_.settings.model.ports.size()) +
                                              " ports, the switch " + std::to_string(n)};
  auto model = switch_model::create(opt_.settings.model, clock_, this);
  if (!model) return model.error().with_context("switch model");
  model_ = std::move(*model);
  carried_ = model_counters(n);
  soft_.resize(n);

  slot_bytes_ = (opt_.max_frame_bytes + 63) & ~63u;
  const auto buffer = static_cast<std::uint64_t>(opt_.settings.model.buffer_bytes);
  // A resident packet takes at least one cell of the model's buffer, so the model never
  // holds more packets than cells (a cell below 64 bytes is counted as 64).
  const auto cell = static_cast<std::uint64_t>(std::max<std::int64_t>(64, opt_.settings.model.cell_bytes));
  slots_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(buffer / cell + 1024, 1u << 20));
  pool_.assign(std::size_t{slots_} * slot_bytes_, 0);
  meta_.assign(slots_, {});
  free_.reserve(slots_);
  for (std::uint32_t s = slots_; s-- > 0;) free_.push_back(s);
  mirror_scratch_.assign(slot_bytes_ + 256, 0);
  delay_ring_.assign(n, {});
  delay_head_.assign(n, 0);
  delay_count_.assign(n, 0);
  delay_ns_.assign(n, 0);
  fdb_.reserve(4096);

  for (std::size_t p = 0; p < n; ++p) {
    packet_port_options o = opt_.ring;
    o.ifname = opt_.ports[p].ifname;
    auto port = packet_port::open(o);
    if (!port) return port.error();
    port->set_wait_budget(opt_.response_budget_ns);
    ports_.push_back(std::move(*port));
    for (const auto& m : opt_.ports[p].peer_macs) {
      fdb_[mac_key(m)] = static_cast<std::uint16_t>(p);
      static_fdb_[mac_key(m)] = true;
    }
  }
  if (!opt_.mirror_ifname.empty()) {
    packet_port_options o;
    o.ifname = opt_.mirror_ifname;
    o.receive = false;
    auto port = packet_port::open(o);
    if (!port) return port.error().with_context("mirror port");
    mirror_port_ = std::make_unique<packet_port>(std::move(*port));
  }

  epoll_ = unique_fd(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) return status::from_errno("epoll_create1");
  timer_ = unique_fd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
  if (!timer_.valid()) return status::from_errno("timerfd_create");
  auto add = [&](int fd, std::uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    return ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) == 0 ? status::success() : status::from_errno("epoll_ctl");
  };
  for (std::size_t p = 0; p < n; ++p) ROCELAB_RETURN_IF_ERROR(add(ports_[p].fd(), 1000 + p));
  ROCELAB_RETURN_IF_ERROR(add(timer_.get(), 1));
  if (!opt_.control_socket.empty()) {
    ROCELAB_RETURN_IF_ERROR(open_control());
    ROCELAB_RETURN_IF_ERROR(add(listen_.get(), 2));
  }
  started_ns_ = clock_.now_ns();
  return status::success();
}

// ---- data path -------------------------------------------------------------------

void soft_switch::impl::send_pfc(std::uint16_t port, std::uint8_t prio_mask, std::uint16_t quanta) {
  cap::pfc_frame_spec spec;
  spec.src_mac = opt_.ports[port].mac;
  spec.class_enable = prio_mask;
  for (std::size_t p = 0; p < num_priorities; ++p)
    if ((prio_mask >> p) & 1u) spec.quanta[p] = quanta;
  std::array<std::uint8_t, 64> frame{};
  const std::size_t len = cap::build_pfc_frame(spec, frame);
  if (len == 0) return;
  const std::span<const std::uint8_t> bytes(frame.data(), len);
  if (!ports_[port].send(bytes)) return;
  if (opt_.mirror.enabled && opt_.mirror.pfc_tx) {
    const std::uint64_t before = mirror_frames_;
    // ERSPAN's COS: the lowest priority the frame pauses.
    mirror(bytes, port, true, static_cast<std::uint8_t>(std::countr_zero(prio_mask | 0x100u) & 7), clock_.now_ns());
    mirror_pfc_frames_ += mirror_frames_ - before;
  }
}

void soft_switch::impl::on_pfc_frame_out(const pfc_frame_out& f) {
  // 802.1Qbb clause 36.1.3: a PFC frame out of the port whose ingress PG crossed its
  // threshold, i.e. toward the upstream sender; one class enabled, quanta 0 is XON.
  if (suppress_pfc_) return;
  send_pfc(f.port, static_cast<std::uint8_t>(1u << f.priority), f.quanta);
}

int soft_switch::impl::resolve(const port_ref& r) const {
  if (r.index >= 0) return r.index < static_cast<int>(ports_.size()) ? r.index : -2;
  if (r.name.empty()) return -1;
  for (std::size_t p = 0; p < ports_.size(); ++p)
    if (ports_[p].name() == r.name) return static_cast<int>(p);
  return -2;
}

void soft_switch::impl::on_frame(std::uint16_t in, std::span<const std::uint8_t> frame, std::int64_t now) {
  frame_info info;
  parse_frame(frame, info);
  if (!info.valid) return;
  if (info.ethertype == cap::wire::ethertype::mac_control) {
    // MAC control frames end at the MAC (802.3 annex 31B): honoured, never forwarded.
    if (info.is_pfc) {
      model_->on_pfc_frame(in, info.pfc_class_enable, info.pfc_quanta, now);
    } else if (info.is_pause) {
      // 802.3x PAUSE stops the whole link: every priority for the same quanta.
      std::array<std::uint16_t, num_priorities> q{};
      q.fill(info.pause_quanta);
      model_->on_pfc_frame(in, 0xFF, q, now);
      ++soft_[in].pause_rx_frames;
    }
    return;
  }
  const std::uint8_t tc = opt_.settings.classes.classify(info);
  if (opt_.mirror.enabled && opt_.mirror.direction != mirror_direction::egress) mirror(frame, in, false, tc, now);
  if (frame.size() > slot_bytes_) {
    ++soft_[in].oversize_drops;
    return;
  }
  // Faults: the k-th packet of a queue pair (RoCEv2 dest QP), optionally on one port.
  // Every fault counts every matching arrival, whatever another fault does with it.
  bool mark = false, drop = false;
  if (info.is_roce && !faults_.empty()) {
    for (auto& f : faults_) {
      if (f.done || (f.spec.kind != fault_kind::drop && f.spec.kind != fault_kind::mark)) continue;
      if (f.spec.dest_qp != info.dest_qp || (f.port >= 0 && f.port != in)) continue;
      ++f.matched;
      const bool hit = f.spec.every ? f.matched % f.spec.nth == 0 : f.matched == f.spec.nth;
      if (!hit) continue;
      ++f.hits;
      if (!f.spec.every) f.done = true;
      (f.spec.kind == fault_kind::drop ? drop : mark) = true;
    }
  }
  if (drop) {
    ++soft_[in].fault_drops;
    return;
  }
  if (opt_.learn && !cap::wire::is_multicast(info.src)) {
    const auto key = mac_key(info.src);
    if (!static_fdb_.contains(key)) fdb_[key] = in;
  }
  if (!cap::wire::is_multicast(info.dst)) {
    if (const auto it = fdb_.find(mac_key(info.dst)); it != fdb_.end()) {
      if (it->second == in) {
        ++soft_[in].filtered;
        return;
      }
      admit_copy(in, it->second, frame, info, tc, mark, now);
      return;
    }
  }
  for (std::uint16_t out = 0; out < ports_.size(); ++out) {
    if (out == in) continue;
    ++soft_[in].flooded;
    admit_copy(in, out, frame, info, tc, mark, now);
  }
}

void soft_switch::impl::admit_copy(std::uint16_t in, std::uint16_t out, std::span<const std::uint8_t> frame,
                                   const frame_info& info, std::uint8_t tc, bool mark, std::int64_t now) {
  const std::uint32_t slot = alloc_slot();
  if (slot == UINT32_MAX) {
    ++soft_[in].pool_drops;
    return;
  }
  std::memcpy(slot_bytes(slot).data(), frame.data(), frame.size());
  slot_meta& m = meta_[slot];
  m.len = static_cast<std::uint32_t>(frame.size());
  m.ip_offset = info.ip_offset;
  m.ip_version = info.ip_version;
  m.ecn = info.ecn;
  if (mark && set_ce(slot_bytes(slot).first(m.len), info)) {
    m.ecn = ecn_codepoint::ce;
    ++soft_[in].fault_marks;
  }
  packet pkt;
  pkt.cookie = slot;
  pkt.flow_id = info.dest_qp;
  // The model counts the frame as on the wire: with its 4-byte FCS (the ring has none).
  pkt.size_bytes = std::max<std::uint32_t>(m.len, 60) + 4;
  pkt.ingress_port = in;
  pkt.egress_port = out;
  pkt.priority = tc;
  pkt.ecn = m.ecn;
  if (!model_->admit(pkt, now).accepted) free_slot(slot);
}

std::size_t soft_switch::impl::service_ports(std::int64_t now) {
  std::size_t work = 0;
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    for (int k = 0; k < 64; ++k) {
      if (model_->next_dequeue_time_ns(p, now) > now) break;
      // Back to back from the previous frame's exact end when we are late by a little;
      // from now after an idle gap (see the header).
      const std::int64_t link_free = model_->next_transmit_time_ns(p);
      const std::int64_t t = (link_free <= now && now - link_free <= opt_.max_catchup_ns) ? link_free : now;
      auto d = model_->dequeue(p, t);
      if (!d && t != now) d = model_->dequeue(p, now);
      if (!d) break;
      depart(p, *d, now);
      ++work;
    }
  }
  return work;
}

void soft_switch::impl::depart(std::uint16_t port, const departure& d, std::int64_t now) {
  const auto slot = static_cast<std::uint32_t>(d.pkt.cookie);
  if (d.discarded) {  // the PFC watchdog dropped it (counted by the model)
    free_slot(slot);
    return;
  }
  slot_meta& m = meta_[slot];
  const std::span<std::uint8_t> bytes = slot_bytes(slot).first(m.len);
  if (d.pkt.ecn == ecn_codepoint::ce && m.ecn != ecn_codepoint::ce) {
    frame_info ip;
    ip.ip_version = m.ip_version;
    ip.ip_offset = m.ip_offset;
    if (set_ce(bytes, ip)) ++soft_[port].ce_rewrites;
  }
  if (opt_.mirror.enabled && opt_.mirror.direction != mirror_direction::ingress)
    mirror(bytes, port, true, d.pkt.priority, now);
  if (delay_ns_[port] > 0) {
    auto& ring = delay_ring_[port];
    if (ring.size() != slots_) ring.resize(slots_);  // once, when the fault is first used
    ring[(delay_head_[port] + delay_count_[port]) % slots_] = {slot, now + delay_ns_[port]};
    ++delay_count_[port];
    ++soft_[port].delayed_frames;
    return;
  }
  (void)ports_[port].send(bytes);
  free_slot(slot);
}

std::size_t soft_switch::impl::service_faults(std::int64_t now) {
  std::size_t work = 0;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    while (delay_count_[p] > 0) {
      const delayed& e = delay_ring_[p][delay_head_[p]];
      if (e.due_ns > now) break;
      (void)ports_[p].send(slot_bytes(e.slot).first(meta_[e.slot].len));
      free_slot(e.slot);
      delay_head_[p] = (delay_head_[p] + 1) % slots_;
      --delay_count_[p];
      ++work;
    }
  }
  for (auto& f : faults_) {
    if (f.done || f.spec.kind != fault_kind::pfc_storm || f.next_ns > now) continue;
    send_pfc(static_cast<std::uint16_t>(f.port), static_cast<std::uint8_t>(1u << f.spec.priority), f.spec.quanta);
    ++soft_[f.port].storm_frames;
    ++f.hits;
    f.next_ns += f.spec.interval_ns;
    if (f.next_ns < now) f.next_ns = now + f.spec.interval_ns;  // no catch-up burst after a stall
    if (f.spec.count != 0 && f.hits >= f.spec.count) f.done = true;
    ++work;
  }
  return work;
}

void soft_switch::impl::mirror(std::span<const std::uint8_t> frame, std::uint16_t port, bool egress, std::uint8_t tc,
                               std::int64_t now) {
  if (!mirror_port_) return;
  bool truncated = false;
  const mirror_context ctx{port, egress, tc, now, erspan_sequence_};
  const std::size_t len = build_mirror_copy(opt_.mirror, ctx, frame, mirror_scratch_, truncated);
  if (len == 0) {
    ++mirror_errors_;
    return;
  }
  if (opt_.mirror.erspan_type != 0) ++erspan_sequence_;
  if (truncated) ++mirror_truncated_;
  const std::span<const std::uint8_t> out(mirror_scratch_.data(), len);
  if (mirror_port_->send(out)) {
    ++mirror_frames_;
    mirror_bytes_ += out.size();
  } else {
    ++mirror_errors_;
  }
}

std::int64_t soft_switch::impl::next_deadline(std::int64_t now) {
  std::int64_t t = clock_.next_due_ns();
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    t = std::min(t, model_->next_dequeue_time_ns(p, now));
    if (delay_count_[p] > 0) t = std::min(t, delay_ring_[p][delay_head_[p]].due_ns);
  }
  for (const auto& f : faults_)
    if (!f.done && f.spec.kind == fault_kind::pfc_storm) t = std::min(t, f.next_ns);
  if (sample_interval_ns_ > 0) t = std::min(t, next_sample_ns_);
  return t;
}

void soft_switch::impl::sample_queues(std::int64_t now) {
  // As the twin samples: a queue empty now and at its previous sample is left out
  // (absent means 0 bytes). Bounded: past max_samples they are counted, not kept.
  constexpr std::size_t max_samples = 1u << 20;
  for (std::uint16_t p = 0; p < ports_.size(); ++p)
    for (std::uint8_t q = 0; q < num_priorities; ++q) {
      const auto bytes = static_cast<std::int64_t>(model_->queue(p, q).depth_bytes);
      auto& was = sampled_nonzero_[std::size_t{p} * num_priorities + q];
      if (bytes == 0 && was == 0) continue;
      was = bytes > 0 ? 1 : 0;
      if (samples_.size() >= max_samples) {
        ++samples_dropped_;
        continue;
      }
      samples_.push_back({now, p, q, bytes});
    }
  next_sample_ns_ = std::max(next_sample_ns_ + sample_interval_ns_, now + 1);
}

status soft_switch::impl::run(const std::atomic<bool>& stop) {
  // Timer wake-ups as precise as the kernel allows (the default slack is 50 us).
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (opt_.rt_priority > 0) {
    // See soft_switch_options::rt_priority. Children (it has none) would not inherit it.
    sched_param sp{};
    sp.sched_priority = opt_.rt_priority;
    if (::sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0) {
      scheduling_ = "SCHED_FIFO " + std::to_string(opt_.rt_priority);
      // A page fault in the loop would be a reaction delay too.
      if (::mlockall(MCL_CURRENT | MCL_FUTURE) != 0) scheduling_ += " (memory not locked)";
    } else {
      std::cerr << "soft switch: SCHED_FIFO " << opt_.rt_priority << " refused (" << std::strerror(errno)
                << "); running under SCHED_OTHER, reaction times are not bounded\n";
    }
  }
  std::int64_t last_control = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    std::int64_t now = clock_.now_ns();
    std::size_t work = 0;
    for (std::uint16_t p = 0; p < ports_.size(); ++p)
      work += ports_[p].receive(64, [&](std::span<const std::uint8_t> f) { on_frame(p, f, now); });
    now = clock_.now_ns();
    clock_.run_due(now);
    work += service_ports(now);
    work += service_faults(now);
    if (sample_interval_ns_ > 0 && now >= next_sample_ns_) sample_queues(now);
    if (work > 0) {
      // Busy: still answer the control socket every millisecond.
      if (now - last_control > 1'000'000) {
        poll_control(0);
        last_control = now;
      }
      continue;
    }
    const std::int64_t deadline = next_deadline(now);
    if (deadline - now <= opt_.spin_ns) {
      if (now - last_control > 1'000'000) {
        poll_control(0);
        last_control = now;
      }
      continue;
    }
    itimerspec its{};
    if (deadline != never_ns) {
      its.it_value.tv_sec = deadline / 1'000'000'000;
      its.it_value.tv_nsec = deadline % 1'000'000'000;
    }
    if (::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &its, nullptr) != 0)
      return status::from_errno("timerfd_settime");
    poll_control(50);
    last_control = clock_.now_ns();
  }
  return status::success();
}

// ---- control ---------------------------------------------------------------------

status soft_switch::impl::open_control() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (opt_.control_socket.size() >= sizeof addr.sun_path)
    return {error_code::invalid_argument, "control socket path too long: " + opt_.control_socket};
  std::memcpy(addr.sun_path, opt_.control_socket.c_str(), opt_.control_socket.size() + 1);
  listen_ = unique_fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_.valid()) return status::from_errno("socket(AF_UNIX)");
  ::unlink(opt_.control_socket.c_str());  // a stale socket of a crashed switch
  if (::bind(listen_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return status::from_errno("bind " + opt_.control_socket);
  ::chmod(opt_.control_socket.c_str(), 0660);
  if (::listen(listen_.get(), 16) != 0) return status::from_errno("listen " + opt_.control_socket);
  return status::success();
}

void soft_switch::impl::poll_control(int timeout_ms) {
  std::array<epoll_event, 32> ev{};
  const int n = ::epoll_wait(epoll_.get(), ev.data(), static_cast<int>(ev.size()), timeout_ms);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t tag = ev[i].data.u64;
    if (tag == 1) {
      std::uint64_t expirations = 0;
      (void)!::read(timer_.get(), &expirations, sizeof expirations);
    } else if (tag == 2) {
      accept_clients();
    } else if (tag >= 1 << 20) {
      const int fd = static_cast<int>(tag - (1 << 20));
      for (auto& c : clients_)
        if (c.fd.get() == fd) serve_client(c);
    }
  }
  std::erase_if(clients_, [](const control_client& c) { return !c.fd.valid(); });
}

void soft_switch::impl::accept_clients() {
  for (;;) {
    unique_fd fd(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd.valid()) return;
    if (clients_.size() >= 64) continue;  // closed by unique_fd
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = (std::uint64_t{1} << 20) + static_cast<std::uint64_t>(fd.get());
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd.get(), &ev) != 0) continue;
    clients_.push_back({std::move(fd), {}, {}});
  }
}

void soft_switch::impl::serve_client(control_client& c) {
  std::array<char, 8192> buf{};
  for (;;) {
    const ssize_t n = ::read(c.fd.get(), buf.data(), buf.size());
    if (n > 0) {
      c.in.append(buf.data(), static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      c.fd.reset();  // closing removes it from the epoll set
      return;
    }
    if (errno == EAGAIN) break;
  }
  if (c.in.size() > (1u << 20)) {
    c.fd.reset();
    return;
  }
  std::size_t nl;
  while ((nl = c.in.find('\n')) != std::string::npos) {
    const std::string line = c.in.substr(0, nl);
    c.in.erase(0, nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    c.out += handle(line);
    c.out += '\n';
  }
  // Responses are small; write them with a short blocking-free loop. A client that does
  // not read its responses is dropped rather than stalling the data path.
  for (int tries = 0; !c.out.empty() && tries < 1000; ++tries) {
    const ssize_t w = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      c.out.erase(0, static_cast<std::size_t>(w));
    } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
      c.fd.reset();
      return;
    }
  }
  if (!c.out.empty()) c.fd.reset();
}

status soft_switch::impl::apply(const switch_settings& next, bool reset_watermarks) {
  if (next.model.ports.size() != ports_.size())
    return {error_code::invalid_argument, "ports: the port count cannot change"};
  ROCELAB_RETURN_IF_ERROR(validate(next.model));
  auto fresh = switch_model::create(next.model, clock_, this);
  if (!fresh) return fresh.error();
  const std::int64_t now = clock_.now_ns();
  carried_.add(model_counters::of(*model_));
  if (reset_watermarks) carried_.clear_watermarks();
  const std::size_t n = ports_.size();
  std::vector<std::uint8_t> was_xoff(n * num_priorities);
  for (std::uint16_t p = 0; p < n; ++p)
    for (std::uint8_t q = 0; q < num_priorities; ++q) was_xoff[p * num_priorities + q] = model_->priority_group(p, q).xoff;
  // Take every resident packet out of the old model in departure order, ignoring pauses
  // and the shaper (the old model is discarded; its counters are already carried).
  std::vector<packet> resident;
  resident.reserve(model_->buffer().resident_packets);
  suppress_pfc_ = true;
  const std::array<std::uint16_t, num_priorities> xon{};
  for (std::uint16_t p = 0; p < n; ++p) {
    model_->on_pfc_frame(p, 0xFF, xon, now);
    std::int64_t t = now;
    for (std::uint64_t k = 0; k <= model_->buffer().resident_packets + 1; ++k) {
      if (model_->next_dequeue_time_ns(p, t) == never_ns) break;
      t = std::max(t, model_->next_transmit_time_ns(p));
      auto d = model_->dequeue(p, t);
      if (!d) break;
      if (d->discarded) {  // a stormed queue under the watchdog's drop action
        free_slot(static_cast<std::uint32_t>(d->pkt.cookie));
        continue;
      }
      resident.push_back(d->pkt);
    }
  }
  suppress_pfc_ = false;
  model_ = std::move(*fresh);
  opt_.settings = next;
  for (const packet& pkt : resident) {
    // The new model counts these again as received; the carried counters already did.
    auto& pc = carried_.ports[pkt.ingress_port];
    pc.rx_packets -= 1;
    pc.rx_bytes -= pkt.size_bytes;
    auto& pg = carried_.pgs[pkt.ingress_port * num_priorities + pkt.priority];
    pg.rx_packets -= 1;
    pg.rx_bytes -= pkt.size_bytes;
    if (model_->admit(pkt, now).accepted) {
      auto& qc = carried_.queues[pkt.egress_port * num_priorities + pkt.priority];
      qc.enqueued_packets -= 1;
      qc.enqueued_bytes -= pkt.size_bytes;
    } else {
      free_slot(static_cast<std::uint32_t>(pkt.cookie));
      ++soft_[pkt.ingress_port].reconfig_drops;
    }
  }
  for (std::uint16_t p = 0; p < n; ++p)
    for (std::uint8_t q = 0; q < num_priorities; ++q)
      if (was_xoff[p * num_priorities + q] && !model_->priority_group(p, q).xoff)
        send_pfc(p, static_cast<std::uint8_t>(1u << q), 0);
  return status::success();
}

json soft_switch::impl::counters_json(bool watermarks_only) {
  const model_counters t = totals();
  const std::int64_t cell = opt_.settings.model.cell_bytes;
  json ports = json::array();
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    json port = {{"index", p}, {"name", ports_[p].name()}};
    const auto& c = t.ports[p];
    if (!watermarks_only) {
      const auto& s = soft_[p];
      const auto& io = ports_[p].stats();
      port.update({{"rx_packets", c.rx_packets}, {"rx_bytes", c.rx_bytes}, {"tx_packets", c.tx_packets},
                   {"tx_bytes", c.tx_bytes}, {"pfc_tx_frames", c.pfc_tx_frames}, {"pfc_rx_frames", c.pfc_rx_frames},
                   {"ingress_limit_drops", c.dropped[static_cast<int>(drop_reason::ingress_limit)]},
                   {"egress_limit_drops", c.dropped[static_cast<int>(drop_reason::egress_limit)]},
                   {"headroom_drops", c.dropped[static_cast<int>(drop_reason::headroom_exhausted)]},
                   {"pfc_watchdog_drops", c.dropped[static_cast<int>(drop_reason::pfc_watchdog)]},
                   {"pool_drops", s.pool_drops}, {"oversize_drops", s.oversize_drops}, {"filtered", s.filtered},
                   {"flooded", s.flooded}, {"pause_rx_frames", s.pause_rx_frames}, {"ce_rewrites", s.ce_rewrites},
                   {"fault_drops", s.fault_drops}, {"fault_marks", s.fault_marks},
                   {"delayed_frames", s.delayed_frames}, {"storm_frames", s.storm_frames},
                   {"reconfig_drops", s.reconfig_drops}, {"wire_rx_frames", io.rx_frames},
                   {"wire_tx_frames", io.tx_frames}, {"wire_tx_errors", io.tx_errors},
                   {"ring_drops", io.kernel_drops}, {"ring_wait_max_ns", io.ring_wait_max_ns},
                   {"ring_wait_log2_us", io.ring_wait_log2_us},
                   {"ring_wait_over_budget", io.ring_wait_over_budget}});
    }
    json queues = json::array(), pgs = json::array();
    for (std::uint8_t q = 0; q < num_priorities; ++q) {
      const auto& qc = t.queues[p * num_priorities + q];
      const queue_stats live = model_->queue(p, q);
      const pg_stats pl = model_->priority_group(p, q);
      const auto& gc = t.pgs[p * num_priorities + q];
      json jq = {{"queue", q}, {"watermark_bytes", qc.watermark_bytes}, {"depth_bytes", live.depth_bytes}};
      json jg = {{"pg", q},
                 {"shared_watermark_bytes", gc.shared_watermark_cells * cell},
                 {"headroom_watermark_bytes", gc.headroom_watermark_cells * cell},
                 {"reserve_bytes", pl.reserve_cells * cell},
                 {"shared_bytes", pl.shared_cells * cell},
                 {"headroom_bytes", pl.headroom_cells * cell}};
      if (!watermarks_only) {
        jq.update({{"enqueued_packets", qc.enqueued_packets}, {"enqueued_bytes", qc.enqueued_bytes},
                   {"dequeued_packets", qc.dequeued_packets}, {"dequeued_bytes", qc.dequeued_bytes},
                   {"dropped_packets", qc.dropped_packets}, {"ecn_marked", qc.ecn_marked},
                   {"depth_packets", live.depth_packets}});
        if (const watchdog_stats wd = model_->watchdog(p, q); wd.storms_detected != 0 || wd.stormed)
          // The live model's watchdog (a `set` rebuilds the model and starts it afresh).
          jq["pfc_watchdog"] = {{"stormed", wd.stormed},           {"storms_detected", wd.storms_detected},
                                {"storms_restored", wd.storms_restored}, {"tx_dropped", wd.tx_dropped},
                                {"rx_dropped", wd.rx_dropped},       {"last_detected_ns", wd.last_detected_ns},
                                {"last_restored_ns", wd.last_restored_ns}, {"last_xoff_rx_ns", wd.last_xoff_rx_ns}};
        jg.update({{"rx_packets", gc.rx_packets}, {"rx_bytes", gc.rx_bytes}, {"dropped_packets", gc.dropped_packets},
                   {"xoff_sent", gc.xoff_sent}, {"xon_sent", gc.xon_sent}, {"refresh_sent", gc.refresh_sent},
                   {"xoff", pl.xoff}});
      }
      queues.push_back(std::move(jq));
      pgs.push_back(std::move(jg));
    }
    port["queues"] = std::move(queues);
    port["pgs"] = std::move(pgs);
    ports.push_back(std::move(port));
  }
  const buffer_stats b = model_->buffer();
  json out = {{"ok", true},
              {"ports", std::move(ports)},
              {"buffer",
               {{"total_bytes", b.total_cells * cell},
                {"used_bytes", b.used_cells * cell},
                {"watermark_bytes", t.buffer_watermark_cells * cell},
                {"resident_packets", b.resident_packets}}}};
  if (!watermarks_only) {
    out["mirror"] = {{"frames", mirror_frames_}, {"bytes", mirror_bytes_}, {"errors", mirror_errors_},
                     {"truncated", mirror_truncated_}, {"pfc_frames", mirror_pfc_frames_}};
    out["pool"] = {{"slots", slots_}, {"free", free_.size()}, {"slot_bytes", slot_bytes_}};
  }
  return out;
}

std::string soft_switch::impl::prometheus() {
  // Prometheus text exposition format 0.0.4: one HELP/TYPE header per metric family,
  // then its samples. Counters get _total; levels and watermarks are gauges.
  const json c = counters_json(false);
  std::map<std::string, std::pair<bool, std::vector<std::string>>> families;  // name -> (gauge, samples)
  auto is_gauge = [](const std::string& k) {
    return k.find("watermark") != std::string::npos || k.find("depth") != std::string::npos ||
           k == "shared_bytes" || k == "headroom_bytes" || k == "xoff" || k == "used_bytes" ||
           k == "total_bytes" || k == "resident_packets" || k == "free" || k == "slots" || k == "slot_bytes";
  };
  auto emit = [&](const std::string& prefix, const json& obj, const std::string& labels) {
    for (const auto& [k, v] : obj.items()) {
      if (!(v.is_number() || v.is_boolean()) || k == "index" || k == "queue" || k == "pg") continue;
      const bool gauge = is_gauge(k);
      const std::string name = "rocelab_switch_" + prefix + "_" + k + (gauge ? "" : "_total");
      const std::string value = v.is_boolean() ? (v.get<bool>() ? "1" : "0") : v.dump();
      auto& fam = families[name];
      fam.first = gauge;
      fam.second.push_back(name + (labels.empty() ? "" : "{" + labels + "}") + " " + value);
    }
  };
  for (const auto& port : c["ports"]) {
    const std::string pl = "port=\"" + port["name"].get<std::string>() + "\"";
    emit("port", port, pl);
    for (const auto& q : port["queues"]) emit("queue", q, pl + ",queue=\"" + q["queue"].dump() + "\"");
    for (const auto& g : port["pgs"]) emit("pg", g, pl + ",pg=\"" + g["pg"].dump() + "\"");
  }
  emit("buffer", c["buffer"], "");
  emit("mirror", c["mirror"], "");
  emit("pool", c["pool"], "");
  std::ostringstream out;
  for (const auto& [name, fam] : families) {
    out << "# TYPE " << name << (fam.first ? " gauge" : " counter") << "\n";
    for (const auto& s : fam.second) out << s << "\n";
  }
  return out.str();
}

json soft_switch::impl::mirror_json() const {
  const auto& m = opt_.mirror;
  return {{"enabled", m.enabled},
          {"direction", m.direction == mirror_direction::ingress  ? "ingress"
                        : m.direction == mirror_direction::egress ? "egress"
                                                                  : "both"},
          {"truncate_bytes", m.truncate_bytes},
          {"erspan", m.erspan_type},
          {"session_id", m.session_id},
          {"pfc_tx", m.pfc_tx},
          {"port", opt_.mirror_ifname}};
}

json soft_switch::impl::faults_json() const {
  json a = json::array();
  static constexpr const char* kinds[] = {"drop", "mark", "delay", "pfc_storm"};
  for (const auto& f : faults_) {
    json j = {{"id", f.id}, {"kind", kinds[static_cast<int>(f.spec.kind)]}, {"port", f.port},
              {"hits", f.hits}, {"done", f.done}};
    if (f.spec.kind == fault_kind::drop || f.spec.kind == fault_kind::mark)
      j.update({{"dest_qp", f.spec.dest_qp}, {"nth", f.spec.nth}, {"every", f.spec.every}, {"matched", f.matched}});
    if (f.spec.kind == fault_kind::delay) j["delay_ns"] = f.spec.delay_ns;
    if (f.spec.kind == fault_kind::pfc_storm)
      j.update({{"priority", f.spec.priority}, {"quanta", f.spec.quanta}, {"interval_ns", f.spec.interval_ns},
                {"count", f.spec.count}});
    a.push_back(std::move(j));
  }
  return a;
}

json soft_switch::impl::status_json() {
  json ports = json::array();
  for (std::size_t p = 0; p < ports_.size(); ++p)
    ports.push_back({{"index", p},
                     {"name", ports_[p].name()},
                     {"mac", format_mac(opt_.ports[p].mac)},
                     {"rate_bps", opt_.settings.model.ports[p].rate_bps}});
  const std::int64_t now = clock_.now_ns();
  return {{"ok", true},
          {"ports", std::move(ports)},
          {"mirror", mirror_json()},
          {"clock", "CLOCK_MONOTONIC"},
          {"now_ns", now},
          {"realtime_offset_ns", realtime_offset_ns()},
          {"uptime_ns", now - started_ns_},
          {"ring", opt_.ring.version == ring_version::v2 ? "tpacket_v2" : "tpacket_v3"},
          {"ring_frames", opt_.ring.frames},
          {"scheduling", scheduling_},
          {"response_budget_ns", opt_.response_budget_ns},
          {"pool", {{"slots", slots_}, {"free", free_.size()}}}};
}

std::string soft_switch::impl::handle(std::string_view line) {
  auto parsed = parse_request(line);
  if (!parsed) return error_response(parsed.error()).dump();
  const request& r = *parsed;
  using o = request::op;
  json ok = {{"ok", true}};
  switch (r.kind) {
    case o::ping: return ok.dump();
    case o::status: return status_json().dump();
    case o::fields: {
      json a = json::array();
      static constexpr const char* scopes[] = {"global", "port", "pg", "queue"};
      for (const auto& f : settable_fields())
        a.push_back({{"field", f.name}, {"scope", scopes[static_cast<int>(f.scope)]}, {"help", f.help}});
      ok["fields"] = std::move(a);
      return ok.dump();
    }
    case o::get: {
      const int port = resolve(r.port);
      if (port == -2) return error_response({error_code::not_found, "port: no such port"}, "port").dump();
      auto v = get_field(opt_.settings, r.field, port, r.priority);
      if (!v) return error_response(v.error()).dump();
      ok["field"] = r.field;
      ok["value"] = std::move(*v);
      return ok.dump();
    }
    case o::set: {
      switch_settings next = opt_.settings;
      for (const auto& a : r.assignments) {
        const int port = resolve(a.port);
        if (port == -2) return error_response({error_code::not_found, "port: no such port"}, "port").dump();
        if (const status st = set_field(next, a.field, a.value, port, a.priority); !st.ok())
          return error_response(st).dump();
      }
      if (const status st = apply(next, false); !st.ok()) {
        const std::string field = r.assignments.size() == 1 ? r.assignments[0].field : "";
        return error_response(st, field).dump();
      }
      return ok.dump();
    }
    case o::config: {
      ok["config"] = to_json(opt_.settings);
      return ok.dump();
    }
    case o::counters: return counters_json(false).dump();
    case o::watermarks: return counters_json(true).dump();
    case o::reset_counters: {
      // Every counter reads 0 afterwards: the generations a `set` carried over are
      // cleared and the live model's counts are subtracted.
      carried_.zero_counts();
      carried_.add(model_counters::of(*model_), -1);
      soft_.assign(ports_.size(), {});
      for (auto& p : ports_) p.reset_stats();
      mirror_frames_ = mirror_bytes_ = mirror_errors_ = mirror_truncated_ = mirror_pfc_frames_ = 0;
      return ok.dump();
    }
    case o::queue_sampling: {
      // Starting drops what an earlier session left unread; stopping keeps it to be read.
      sample_interval_ns_ = r.interval_ns;
      if (r.interval_ns == 0) return ok.dump();
      next_sample_ns_ = clock_.now_ns();
      sampled_nonzero_.assign(ports_.size() * num_priorities, 0);
      samples_.clear();
      samples_read_ = 0;
      samples_dropped_ = 0;
      return ok.dump();
    }
    case o::queue_samples: {
      // At most 2000 a response (about 60 KB, well inside the socket's buffer: a client
      // that cannot take a response at once is dropped); "more" says to ask again.
      constexpr std::size_t per_response = 2000;
      const std::size_t n = std::min(per_response, samples_.size() - samples_read_);
      json a = json::array();
      for (std::size_t i = samples_read_; i < samples_read_ + n; ++i)
        a.push_back({samples_[i][0], samples_[i][1], samples_[i][2], samples_[i][3]});
      samples_read_ += n;
      ok["samples"] = std::move(a);
      ok["dropped"] = samples_dropped_;
      ok["interval_ns"] = sample_interval_ns_;
      ok["more"] = samples_read_ < samples_.size();
      if (samples_read_ == samples_.size()) {
        samples_.clear();
        samples_read_ = 0;
        samples_dropped_ = 0;
      }
      return ok.dump();
    }
    case o::reset_watermarks: {
      // The model keeps its watermarks since creation; a rebuild starts them again from
      // the current occupancy, which is what clearing a watermark means on a switch.
      if (const status st = apply(opt_.settings, true); !st.ok()) return error_response(st).dump();
      return ok.dump();
    }
    case o::prometheus: {
      ok["text"] = prometheus();
      return ok.dump();
    }
    case o::mirror: {
      auto& m = opt_.mirror;
      if (r.mirror.enabled && *r.mirror.enabled && !mirror_port_)
        return error_response({error_code::unavailable, "enabled: this switch has no mirror port"}).dump();
      if (r.mirror.enabled) m.enabled = *r.mirror.enabled;
      if (r.mirror.direction) m.direction = *r.mirror.direction;
      if (r.mirror.truncate_bytes) m.truncate_bytes = *r.mirror.truncate_bytes;
      if (r.mirror.erspan_type) m.erspan_type = *r.mirror.erspan_type;
      if (r.mirror.session_id) m.session_id = *r.mirror.session_id;
      if (r.mirror.pfc_tx) m.pfc_tx = *r.mirror.pfc_tx;
      ok["mirror"] = mirror_json();
      return ok.dump();
    }
    case o::fault: {
      fault_entry f;
      f.spec = r.fault;
      f.port = resolve(r.fault.port);
      if (f.port == -2) return error_response({error_code::not_found, "port: no such port"}, "port").dump();
      f.id = next_fault_id_++;
      if (f.spec.kind == fault_kind::delay) {
        delay_ns_[f.port] = f.spec.delay_ns;
        // One delay per port: a new one replaces the old.
        std::erase_if(faults_, [&](const fault_entry& e) { return e.spec.kind == fault_kind::delay && e.port == f.port; });
      }
      if (f.spec.kind == fault_kind::pfc_storm) {
        if (f.spec.interval_ns == 0) {
          // Half the pause time, so the peer never resumes between frames (as the
          // model's own refresh does).
          const std::int64_t rate = opt_.settings.model.ports[f.port].rate_bps;
          f.spec.interval_ns = std::max<std::int64_t>(
              1000, static_cast<std::int64_t>(f.spec.quanta) * 512 * 1'000'000'000 / rate / 2);
        }
        f.next_ns = clock_.now_ns();
      }
      faults_.push_back(f);
      ok["id"] = f.id;
      return ok.dump();
    }
    case o::faults: {
      ok["faults"] = faults_json();
      return ok.dump();
    }
    case o::clear_faults: {
      for (const auto& f : faults_)
        if (f.spec.kind == fault_kind::delay && (!r.fault_id || *r.fault_id == f.id)) delay_ns_[f.port] = 0;
      std::erase_if(faults_, [&](const fault_entry& f) { return !r.fault_id || *r.fault_id == f.id; });
      return ok.dump();
    }
  }
  return error_response({error_code::internal, "op: not handled"}).dump();
}

// ---- public ----------------------------------------------------------------------

result<std::unique_ptr<soft_switch>> soft_switch::create(soft_switch_options options) {
  auto p = std::make_unique<impl>(std::move(options));
  ROCELAB_RETURN_IF_ERROR(p->init().with_context("soft switch"));
  return std::unique_ptr<soft_switch>(new soft_switch(std::move(p)));
}

soft_switch::soft_switch(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
soft_switch::~soft_switch() = default;

status soft_switch::run(const std::atomic<bool>& stop) { return impl_->run(stop); }
std::string soft_switch::handle_request(std::string_view line) { return impl_->handle(line); }

}  // namespace rocelab::fabric::soft_switch
