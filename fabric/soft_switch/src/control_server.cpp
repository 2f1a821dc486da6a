// The soft switch's control server: the Unix socket (one JSON request a line, one
// response a line), its clients, settings changes applied by rebuilding the model, and
// the request handler.

#include "soft_switch_impl.hpp"

namespace rocelab::fabric::soft_switch {

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
  std::erase_if(clients_, [](const control_connection& c) { return !c.fd.valid(); });
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

void soft_switch::impl::serve_client(control_connection& c) {
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
      for (auto& h : forwarding_) h.clear();
      for (auto& p : ports_) p.reset_stats();
      mirror_frames_ = mirror_bytes_ = mirror_errors_ = mirror_truncated_ = mirror_pfc_frames_ = 0;
      mirror_arrival_frames_ = 0;
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
      if (r.mirror.arrivals) m.arrivals = *r.mirror.arrivals;
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

}  // namespace rocelab::fabric::soft_switch
