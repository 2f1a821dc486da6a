// The soft switch's data path: frames from the rings through forwarding, classification
// and the model's admission; departures paced by the model, ECN rewrite, delay lines and
// faults, PFC frames out, mirroring, queue sampling, and the event loop that drives them.

#include "soft_switch_impl.hpp"

namespace rocelab::fabric::soft_switch {

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
    if (info.is_pfc || info.is_pause) pause_changed_ns_[in] = now;
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
  if (opt_.mirror.enabled && opt_.mirror.arrivals && info.is_roce && cap::wire::begins_message(info.bth_opcode))
    mirror_arrival(frame, in, tc);
  if (frame.size() > slot_bytes_) {
    ++soft_[in].oversize_drops;
    return;
  }
  // Store and forward: the sender's NIC hands its frame over at the first bit; the switch
  // has it when the last bit would have arrived at the port's rate (as the twin and
  // fabric/ideal_fct.hpp count the sender's hop). Held in a slot of the pool until then:
  // a delay line of one frame time, in order, never a queue (a sender faster than the
  // link, which no NIC is, meets the MMU, not an unaccounted ingress buffer). The first
  // bit is the kernel's stamp (the frame reaching this port's socket, in the sender's
  // transmit path), so a frame the loop reads late is due when it was due on the wire,
  // and the MMU takes the ports' frames in that order (service_arrivals).
  const std::uint32_t slot = alloc_slot();
  if (slot == UINT32_MAX) {
    ++soft_[in].pool_drops;
    return;
  }
  std::memcpy(slot_bytes(slot).data(), frame.data(), frame.size());
  meta_[slot].len = static_cast<std::uint32_t>(frame.size());
  const auto wire = static_cast<std::uint32_t>(std::max<std::size_t>(frame.size(), 60) + 4);  // with FCS
  const std::int64_t serialization_ns = (model_->serialization_ps(in, wire) + 999) / 1000;
  // Without a stamp, from when the loop took it. The forwarding latency counts from the
  // same instant, so the time a frame waited in the ring is the switch's too.
  const std::int64_t stamp = ports_[in].frame_stamp_ns();
  const std::int64_t first_bit = stamp != 0 ? std::min(now, stamp - stamp_offset_ns()) : now;
  const std::int64_t last_bit_ps = first_bit * 1000 + model_->serialization_ps(in, wire);
  ingress_due_ns_[in] = std::max(ingress_due_ns_[in], (last_bit_ps + 999) / 1000);
  meta_[slot].arrived_ns = first_bit + serialization_ns;
  arrive_ring_[in][(arrive_head_[in] + arrive_count_[in]) % slots_] = {slot, ingress_due_ns_[in]};
  ++arrive_count_[in];
}

std::size_t soft_switch::impl::service_arrivals(std::int64_t now) {
  // Due frames go to the MMU earliest first across all ports, as the frames of a switch's
  // ports meet its one buffer. Port by port, each port's backlog after the loop was away
  // went in as one run: an incast's senders reached its receiver 7-11 packets of one
  // sender at a time, an order no wire produced, which changed whose packets were marked.
  std::size_t work = 0;
  for (;;) {
    int first = -1;
    std::int64_t first_due = now + 1;
    for (std::uint16_t p = 0; p < ports_.size(); ++p)
      if (arrive_count_[p] > 0 && arrive_ring_[p][arrive_head_[p]].due_ns < first_due) {
        first = p;
        first_due = arrive_ring_[p][arrive_head_[p]].due_ns;
      }
    if (first < 0) return work;
    const auto p = static_cast<std::uint16_t>(first);
    const delayed e = arrive_ring_[p][arrive_head_[p]];
    arrive_head_[p] = (arrive_head_[p] + 1) % slots_;
    --arrive_count_[p];
    forward_frame(p, slot_bytes(e.slot).first(meta_[e.slot].len), now, meta_[e.slot].arrived_ns);
    free_slot(e.slot);
    ++work;
  }
}

void soft_switch::impl::forward_frame(std::uint16_t in, std::span<const std::uint8_t> frame, std::int64_t now,
                                      std::int64_t arrived_ns) {
  frame_info info;
  parse_frame(frame, info);
  const std::uint8_t tc = opt_.settings.classes.classify(info);
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
      admit_copy(in, it->second, frame, info, tc, mark, now, arrived_ns);
      return;
    }
  }
  for (std::uint16_t out = 0; out < ports_.size(); ++out) {
    if (out == in) continue;
    ++soft_[in].flooded;
    admit_copy(in, out, frame, info, tc, mark, now, arrived_ns);
  }
}

void soft_switch::impl::admit_copy(std::uint16_t in, std::uint16_t out, std::span<const std::uint8_t> frame,
                                   const frame_info& info, std::uint8_t tc, bool mark, std::int64_t now,
                                   std::int64_t arrived_ns) {
  const std::uint32_t slot = alloc_slot();
  if (slot == UINT32_MAX) {
    ++soft_[in].pool_drops;
    return;
  }
  std::memcpy(slot_bytes(slot).data(), frame.data(), frame.size());
  slot_meta& m = meta_[slot];
  m.len = static_cast<std::uint32_t>(frame.size());
  m.arrived_ns = arrived_ns >= 0 && egress_idle(out, now) ? arrived_ns : -1;
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
    packet_pacer& pacer = pacers_[p];
    const std::int64_t stall = stall_catchup_ns_[p];
    const std::int64_t window = std::max(opt_.max_catchup_ns, stall);
    for (std::size_t k = 0; k < packet_port::max_batch; ++k) {
      if (pacer.limited() && !pacer.ready(now)) break;
      if (model_->next_dequeue_time_ns(p, now) > now) break;
      // Back to back from the previous frame's exact end when we are late by a little;
      // from now after an idle gap (see the header).
      const std::int64_t link_free = model_->next_transmit_time_ns(p);
      // After a stall the link would have been sending since the oldest waiting frame came
      // in (now - stall) at the latest.
      std::int64_t t = now;
      if (link_free <= now) t = now - link_free <= window ? link_free : stall > 0 ? now - stall : now;
      t = std::max(t, pause_changed_ns_[p]);
      auto d = model_->dequeue(p, t);
      if (!d && t != now) d = model_->dequeue(p, now);
      if (!d) break;
      if (!d->discarded) pacer.on_departure(now, stall);
      depart(p, *d, now);
      ++work;
    }
    flush_tx(p);
    // Caught up (the link's schedule reaches now), nothing left, or everything left paused:
    // the stall's credit ends (a paused queue owes nothing for the time it waits).
    if (stall_catchup_ns_[p] != 0 &&
        (model_->next_transmit_time_ns(p) >= now || model_->next_dequeue_time_ns(p, now) > now))
      stall_catchup_ns_[p] = 0;
  }
  return work;
}

bool soft_switch::impl::egress_idle(std::uint16_t out, std::int64_t now) const {
  if (model_->next_transmit_time_ns(out) > now) return false;
  for (std::uint8_t q = 0; q < num_priorities; ++q)
    if (model_->queue(out, q).depth_packets != 0) return false;
  return true;
}

std::int64_t soft_switch::impl::stamp_offset_ns() {
  if (!stamp_offset_fresh_) {
    stamp_offset_ns_ = realtime_offset_ns();
    stamp_offset_fresh_ = true;
  }
  return stamp_offset_ns_;
}

void soft_switch::impl::flush_tx(std::uint16_t port) {
  auto& slots = tx_slots_[port];
  if (slots.empty()) return;
  std::array<std::span<const std::uint8_t>, packet_port::max_batch> frames;
  for (std::size_t i = 0; i < slots.size(); ++i) frames[i] = slot_bytes(slots[i]).first(meta_[slots[i]].len);
  (void)ports_[port].send_batch(std::span(frames.data(), slots.size()));
  // The batch reached the next hop now; each counted frame's first bit left its egress
  // serialization earlier.
  const std::int64_t sent = clock_.now_ns();
  for (const std::uint32_t s : slots) {
    const slot_meta& m = meta_[s];
    if (m.arrived_ns >= 0) {
      const auto wire = static_cast<std::uint32_t>(std::max<std::uint32_t>(m.len, 60) + 4);
      forwarding_[port].record(sent - (model_->serialization_ps(port, wire) + 999) / 1000 - m.arrived_ns);
    }
    free_slot(s);
  }
  slots.clear();
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
  // Store and forward: the frame reaches the next hop when its last bit would at the
  // port's rate (the model's link is busy until then), as on hardware and in the twin,
  // whose ideal FCT counts one serialization per hop (fabric/ideal_fct.hpp); a delay
  // fault adds its own. In-order per port: the link's ends only grow.
  const std::int64_t last_bit = std::max(now, d.tx_end_ns);
  const std::int64_t due = last_bit + delay_ns_[port];
  if (due > now || delay_count_[port] > 0) {  // behind a held frame even when due: in order
    auto& ring = delay_ring_[port];
    if (ring.size() != slots_) ring.resize(slots_);  // once, at the port's first held frame
    ring[(delay_head_[port] + delay_count_[port]) % slots_] = {slot, due};
    ++delay_count_[port];
    if (delay_ns_[port] > 0) ++soft_[port].delayed_frames;
    return;
  }
  tx_slots_[port].push_back(slot);  // sent by flush_tx at the end of this pass
}

std::size_t soft_switch::impl::service_faults(std::int64_t now) {
  std::size_t work = 0;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    // Held frames whose last bit has left, in batches as service_ports sends.
    while (delay_count_[p] > 0) {
      const delayed& e = delay_ring_[p][delay_head_[p]];
      if (e.due_ns > now) break;
      tx_slots_[p].push_back(e.slot);
      delay_head_[p] = (delay_head_[p] + 1) % slots_;
      --delay_count_[p];
      ++work;
      if (tx_slots_[p].size() == packet_port::max_batch) flush_tx(static_cast<std::uint16_t>(p));
    }
    flush_tx(static_cast<std::uint16_t>(p));
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
  (void)send_mirror_copy(len);
}

bool soft_switch::impl::send_mirror_copy(std::size_t len) {
  const std::span<const std::uint8_t> out(mirror_scratch_.data(), len);
  if (!mirror_port_->send(out)) {
    ++mirror_errors_;
    return false;
  }
  ++mirror_frames_;
  mirror_bytes_ += out.size();
  return true;
}

void soft_switch::impl::mirror_arrival(std::span<const std::uint8_t> frame, std::uint16_t port, std::uint8_t tc) {
  if (!mirror_port_) return;
  // The kernel's stamp of the frame's delivery to this port's ring, in the sender's own
  // transmit path: when it reached the switch, however late this loop read it.
  std::int64_t arrived = ports_[port].frame_stamp_ns();
  if (arrived == 0) arrived = ring_clock_ns();
  const std::size_t len =
      build_arrival_copy(opt_.mirror, port, tc, arrived, erspan_sequence_, frame, mirror_scratch_);
  if (len == 0) {
    ++mirror_errors_;
    return;
  }
  ++erspan_sequence_;
  if (send_mirror_copy(len)) ++mirror_arrival_frames_;
}

std::int64_t soft_switch::impl::next_deadline(std::int64_t now) {
  std::int64_t t = clock_.next_due_ns();
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    const std::int64_t due = model_->next_dequeue_time_ns(p, now);
    t = std::min(t, due != never_ns && pacers_[p].limited() ? std::max(due, pacers_[p].next_ns()) : due);
    if (delay_count_[p] > 0) t = std::min(t, delay_ring_[p][delay_head_[p]].due_ns);
    if (arrive_count_[p] > 0) t = std::min(t, arrive_ring_[p][arrive_head_[p]].due_ns);
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
  std::int64_t due = never_ns;  // what the loop last waited for
  while (!stop.load(std::memory_order_relaxed)) {
    std::int64_t now = clock_.now_ns();
    std::size_t work = 0;
    // A late wake-up is a stall of the egress side: a port waiting for its next slot
    // lost that much time (timer slack, a descheduled vCPU).
    std::int64_t stall_ns = due != never_ns && now > due ? now - due : 0;
    due = never_ns;
    stamp_offset_fresh_ = false;
    for (std::uint16_t p = 0; p < ports_.size(); ++p) {
      const std::size_t got = ports_[p].receive(64, [&](std::span<const std::uint8_t> f) { on_frame(p, f, now); });
      if (got > 0) stall_ns = std::max(stall_ns, ports_[p].last_batch_wait_ns());
      work += got;
    }
    if (stall_ns > opt_.max_catchup_ns)
      for (auto& c : stall_catchup_ns_) c = std::max(c, std::min(stall_ns, opt_.max_stall_catchup_ns));
    now = clock_.now_ns();
    clock_.run_due(now);
    work += service_arrivals(now);
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
    due = deadline;
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

}  // namespace rocelab::fabric::soft_switch
