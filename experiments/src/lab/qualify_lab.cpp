#include "rocelab/experiments/lab/qualify_lab.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include <nlohmann/json.hpp>

#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/common/monotonic_clock.hpp"
#include "rocelab/common/realtime_section.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/fabric/soft_switch/switch_settings.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace rocelab::experiments {
namespace {

namespace lab = agents::lab;
namespace ss = fabric::soft_switch;
using json = nlohmann::json;
namespace wire = captures::wire;

constexpr std::int64_t refresh_ns = 2'000'000;  // XOFF repeats; a 0xffff pause lasts 33 ms at 1 Gb/s
constexpr std::array<std::uint8_t, 4> unassigned_ip = {198, 18, 0, 250};  // no lab host has it

// The XON/XOFF pair of release() must not be split by the scheduler, or the port sends
// for as long as this thread waits (milliseconds on a busy machine: hundreds of frames):
// SCHED_FIFO below the soft switch (50), above the soft NICs (40).
constexpr int release_rt_priority = 45;

std::uint64_t u64(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<std::uint64_t>() : 0;
}

}  // namespace

namespace wire = captures::wire;

class lab_switch_under_test::impl {
 public:
  lab::lab_state lab;
  std::optional<ss::control_client> ctl;
  std::vector<ss::packet_port> ports;  // host i's eth0, opened in its namespace
  std::vector<wire::mac_address> macs;
  std::vector<std::array<std::uint8_t, 4>> ips;
  std::array<std::uint8_t, fabric::num_priorities> dscp_of{};  // a DSCP the switch maps to each priority
  std::optional<json> snapshot;  // the switch's configuration before the first configure()
  std::mutex send_mutex;         // the refresher and the caller share the sockets
  std::vector<std::uint8_t> held, stormed;
  std::atomic<bool> stop{false};
  std::thread refresher;

  ~impl() {
    stop = true;
    if (refresher.joinable()) refresher.join();
  }

  status send_pfc(std::uint16_t port, std::uint8_t mask, bool xoff) {
    std::lock_guard lock(send_mutex);
    return send_pfc_locked(port, mask, xoff);
  }
  // With send_mutex held.
  status send_pfc_locked(std::uint16_t port, std::uint8_t mask, bool xoff) {
    captures::pfc_frame_spec f;
    f.src_mac = macs[port];
    f.class_enable = mask;
    for (int p = 0; p < fabric::num_priorities; ++p)
      if ((mask >> p) & 1u) f.quanta[static_cast<std::size_t>(p)] = xoff ? 0xffff : 0;
    std::vector<std::uint8_t> frame;
    captures::append_pfc_frame(f, frame);
    if (!ports[port].send(frame))
      return status(error_code::io_error, "sending a PFC frame from " + lab.hosts[port].name);
    return status::success();
  }

  void refresh_loop() {
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(refresh_ns));
      for (std::uint16_t p = 0; p < ports.size(); ++p) {
        // The mask is read and its XOFF sent under one lock: once storm(off) or resume()
        // has cleared a bit, no refresh for it can still be on its way. (A refresh sent
        // after a storm's end would move the watchdog's restoration; one after an XON
        // would pause the port again.)
        std::lock_guard lock(send_mutex);
        if (const std::uint8_t mask = held[p] | stormed[p]; mask != 0) (void)send_pfc_locked(p, mask, true);
      }
    }
  }

  result<json> counters() {
    auto r = ctl->call({{"op", "counters"}});
    if (!r) return r.error().with_context("reading the switch's counters");
    if (!r->value("ok", false) || !r->contains("ports"))
      return status(error_code::io_error, "switch counters: " + r->value("error", r->dump()));
    return *r;
  }

  // Waits (bounded) until pred(counters) holds; the last counters either way.
  result<json> wait_for(const std::function<bool(const json&)>& pred, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto c = counters();
      if (!c) return c;
      if (pred(*c) || std::chrono::steady_clock::now() > deadline) return c;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Waits until port's PFC receive counter passes `before` (the switch took our frame).
  status wait_pfc_taken(std::uint16_t port, std::uint64_t before) {
    auto c = wait_for([&](const json& j) { return u64(j["ports"][port], "pfc_rx_frames") > before; },
                      std::chrono::seconds(1));
    if (!c) return c.error();
    if (u64((*c)["ports"][port], "pfc_rx_frames") <= before)
      return status(error_code::io_error, "the switch did not receive the PFC frame from " + lab.hosts[port].name);
    return status::success();
  }

  result<std::uint64_t> pfc_rx(std::uint16_t port) {
    auto c = counters();
    if (!c) return c.error();
    return u64((*c)["ports"][port], "pfc_rx_frames");
  }

  // Every model field of `model` (the classes as the switch has them) in one set.
  status apply_model(const fabric::switch_config& model) {
    auto cur = ctl->call({{"op", "config"}});
    if (!cur || !cur->value("ok", false)) return status(error_code::io_error, "reading the switch's configuration");
    auto settings = ss::settings_from_json(cur->at("config"));
    if (!settings) return settings.error().with_context("the switch's configuration");
    if (model.ports.size() != settings->model.ports.size())
      return status(error_code::invalid_argument, "the configuration has " + std::to_string(model.ports.size()) +
                                                      " ports, the switch " +
                                                      std::to_string(settings->model.ports.size()));
    settings->model = model;
    json fields = json::array();
    for (const auto& d : ss::settable_fields()) {
      auto v = ss::get_field(*settings, d.name, -1, -1);
      if (!v) return v.error();
      const std::string name(d.name);
      if (d.scope == ss::field_scope::global) {
        fields.push_back({{"field", name}, {"value", *v}});
        continue;
      }
      for (std::size_t p = 0; p < v->size(); ++p) {
        if (d.scope == ss::field_scope::port) {
          fields.push_back({{"field", name}, {"value", (*v)[p]}, {"port", p}});
          continue;
        }
        for (std::size_t q = 0; q < fabric::num_priorities; ++q)
          fields.push_back({{"field", name}, {"value", (*v)[p][q]}, {"port", p}, {"priority", q}});
      }
    }
    auto r = ctl->call({{"op", "set"}, {"fields", fields}}, std::chrono::seconds(20));
    if (!r) return r.error().with_context("configuring the switch");
    if (!r->value("ok", false))
      return status(error_code::invalid_argument, "the switch refused the configuration: " + r->value("error", r->dump()));
    for (const char* op : {"reset_counters", "reset_watermarks"})
      if (auto z = ctl->call({{"op", op}}); !z || !z->value("ok", false))
        return status(error_code::io_error, std::string("switch ") + op + " failed");
    return status::success();
  }
};

lab_switch_under_test::lab_switch_under_test(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
lab_switch_under_test::~lab_switch_under_test() = default;

result<std::unique_ptr<lab_switch_under_test>> lab_switch_under_test::open(const lab::lab_state& state) {
  auto p = std::make_unique<impl>();
  p->lab = state;
  auto c = ss::control_client::connect(state.control_socket);
  if (!c) return c.error().with_context("connecting to the switch of lab '" + state.name + "'");
  p->ctl.emplace(std::move(*c));
  for (const auto& h : state.hosts) {
    auto mac = traffic::soft_nic::parse_mac(h.mac);
    auto ip = traffic::soft_nic::parse_ipv4(h.ipv4);
    if (!mac || !ip) return status(error_code::malformed_input, "lab state: addresses of " + h.name);
    p->macs.push_back(*mac);
    p->ips.push_back(*ip);
    std::optional<ss::packet_port> port;
    status st = lab::in_netns(h.netns, [&]() -> status {
      ss::packet_port_options o;
      o.ifname = h.ifname;
      o.receive = false;
      auto opened = ss::packet_port::open(o);
      if (!opened) return opened.error();
      port.emplace(std::move(*opened));
      return status::success();
    });
    if (!st.ok()) return st.with_context("opening a probe socket in " + h.netns);
    p->ports.push_back(std::move(*port));
  }
  p->held.assign(state.hosts.size(), 0);
  p->stormed.assign(state.hosts.size(), 0);
  // The DSCP each priority is reached by, from the switch's own DSCP_TO_TC_MAP.
  auto cfg = p->ctl->call({{"op", "config"}});
  if (!cfg || !cfg->value("ok", false)) return status(error_code::io_error, "reading the switch's configuration");
  auto settings = ss::settings_from_json(cfg->at("config"));
  if (!settings) return settings.error().with_context("the switch's configuration");
  for (int prio = 0; prio < fabric::num_priorities; ++prio)
    for (int d = 63; d >= 0; --d)
      if (settings->classes.dscp_to_tc[static_cast<std::size_t>(d)] == prio)
        p->dscp_of[static_cast<std::size_t>(prio)] = static_cast<std::uint8_t>(d);
  p->refresher = std::thread([raw = p.get()] { raw->refresh_loop(); });
  return std::unique_ptr<lab_switch_under_test>(new lab_switch_under_test(std::move(p)));
}

result<fabric::switch_config> lab_switch_under_test::current_config() {
  auto r = impl_->ctl->call({{"op", "config"}});
  if (!r || !r->value("ok", false)) return status(error_code::io_error, "reading the switch's configuration");
  auto s = ss::settings_from_json(r->at("config"));
  if (!s) return s.error();
  return s->model;
}

std::string lab_switch_under_test::describe() const {
  char s[160];
  std::snprintf(s, sizeof s, "the virtual lab's soft switch (lab %s, %zu ports at %g Gb/s)", impl_->lab.name.c_str(),
                impl_->lab.hosts.size(), impl_->lab.link_gbps);
  return s;
}

std::int64_t lab_switch_under_test::now_ns() const { return monotonic_ns(); }

status lab_switch_under_test::configure(const fabric::switch_config& cfg) {
  if (!impl_->snapshot) {
    auto r = impl_->ctl->call({{"op", "config"}});
    if (!r || !r->value("ok", false)) return status(error_code::io_error, "snapshotting the switch's configuration");
    impl_->snapshot = r->at("config");
  }
  return impl_->apply_model(cfg);
}

status lab_switch_under_test::hold(std::uint16_t port, std::uint8_t priority) {
  if (port >= impl_->ports.size()) return status(error_code::invalid_argument, "no port " + std::to_string(port));
  auto before = impl_->pfc_rx(port);
  if (!before) return before.error();
  {
    std::lock_guard lock(impl_->send_mutex);
    impl_->held[port] |= static_cast<std::uint8_t>(1u << priority);
  }
  ROCELAB_RETURN_IF_ERROR(impl_->send_pfc(port, static_cast<std::uint8_t>(1u << priority), true));
  return impl_->wait_pfc_taken(port, *before);
}

status lab_switch_under_test::resume(std::uint16_t port, std::uint8_t priority) {
  if (port >= impl_->ports.size()) return status(error_code::invalid_argument, "no port " + std::to_string(port));
  const auto bit = static_cast<std::uint8_t>(1u << priority);
  bool stormed;
  {
    std::lock_guard lock(impl_->send_mutex);
    impl_->held[port] &= static_cast<std::uint8_t>(~bit);
    stormed = (impl_->stormed[port] & bit) != 0;
  }
  if (!stormed) ROCELAB_RETURN_IF_ERROR(impl_->send_pfc(port, bit, false));
  auto c = impl_->wait_for(
      [&](const json& j) { return u64(j["ports"][port]["queues"][priority], "depth_bytes") == 0; },
      std::chrono::seconds(10));
  if (!c) return c.error();
  if (u64((*c)["ports"][port]["queues"][priority], "depth_bytes") != 0)
    return status(error_code::io_error, "port " + std::to_string(port) + " priority " + std::to_string(priority) +
                                            " did not drain within 10 s of XON");
  return status::success();
}

result<std::uint32_t> lab_switch_under_test::release(std::uint16_t port, std::uint8_t priority,
                                                     std::uint32_t packets) {
  auto c0 = impl_->counters();
  if (!c0) return c0.error();
  const auto sent = [&](const json& j) { return u64(j["ports"][port]["queues"][priority], "dequeued_packets"); };
  const std::uint64_t start = sent(*c0);
  std::uint64_t now = start;
  const auto bit = static_cast<std::uint8_t>(1u << priority);
  // XON then XOFF; when the switch loop took both before sending anything, open the
  // window a little longer next time, but never beyond two frame times at the port's
  // rate (a longer window lets a burst go and the XON point is lost in it).
  const double rate_bps = std::max(1e6, impl_->lab.link_gbps * 1e9);
  const auto max_window_ns = static_cast<std::int64_t>(2 * 1102 * 8 / rate_bps * 1e9);
  std::int64_t window_ns = 0;
  for (int attempt = 0; attempt < 64 && now - start < packets; ++attempt) {
    if (u64((*c0)["ports"][port]["queues"][priority], "depth_packets") == 0) break;
    {
      const realtime_section rt(release_rt_priority);
      ROCELAB_RETURN_IF_ERROR(impl_->send_pfc(port, bit, false));
      if (window_ns > 0) {
        // Spin rather than sleep: a sleep's wake-up is late by more than the window.
        const std::int64_t until = monotonic_ns() + window_ns;
        while (monotonic_ns() < until) {
        }
      }
      ROCELAB_RETURN_IF_ERROR(impl_->send_pfc(port, bit, true));
    }
    // Generous: on a busy machine the switch loop may not run for a while, and a pair
    // sent before its counters caught up would let a second batch go.
    auto c = impl_->wait_for([&](const json& j) { return sent(j) > now; }, std::chrono::milliseconds(50));
    if (!c) return c.error();
    if (sent(*c) == now) window_ns = std::min(max_window_ns, std::max<std::int64_t>(10'000, window_ns * 2));
    now = sent(*c);
    *c0 = *c;
  }
  return static_cast<std::uint32_t>(now - start);
}

result<std::uint32_t> lab_switch_under_test::send(const probe_frames& f) {
  auto& x = *impl_;
  if (f.src >= x.ports.size() || f.dst >= x.ports.size())
    return status(error_code::invalid_argument, "probe ports outside the lab's " + std::to_string(x.ports.size()));
  captures::roce_frame_spec spec;
  spec.eth.src_mac = x.macs[f.src];
  spec.eth.dst_mac = x.macs[f.dst];
  spec.ip.src = captures::ipv4_mapped(x.ips[f.src][0], x.ips[f.src][1], x.ips[f.src][2], x.ips[f.src][3]);
  spec.ip.dst = captures::ipv4_mapped(unassigned_ip[0], unassigned_ip[1], unassigned_ip[2], unassigned_ip[3]);
  spec.ip.dscp = x.dscp_of[f.priority];
  spec.ip.ecn = f.ect ? wire::ecn_codepoint::ect0 : wire::ecn_codepoint::not_ect;
  spec.opcode = wire::roce_opcode::rc_rdma_write_only;
  spec.dest_qp = 0x51;
  std::vector<std::uint8_t> frame;
  const std::size_t header = captures::append_roce_frame(spec, frame);
  // The switch counts the frame with its FCS; the payload makes up the rest.
  const std::int64_t payload_bytes = static_cast<std::int64_t>(f.bytes) - 4 - static_cast<std::int64_t>(header);
  if (payload_bytes < 0) return status(error_code::invalid_argument, "probe frames of " + std::to_string(f.bytes) + " B are too small for RoCEv2");
  std::vector<std::uint8_t> payload(static_cast<std::size_t>(payload_bytes) & ~std::size_t{3}, 0x5a);
  spec.payload = payload;
  spec.reth_dma_length = static_cast<std::uint32_t>(payload.size());
  frame.clear();
  captures::append_roce_frame(spec, frame);
  if (frame.size() + 4 != f.bytes)
    return status(error_code::invalid_argument, "probe frames of " + std::to_string(f.bytes) +
                                                    " B: RoCE payloads come in 4-byte steps; try " +
                                                    std::to_string(frame.size() + 4));

  auto c0 = x.counters();
  if (!c0) return c0.error();
  const std::uint64_t before = u64((*c0)["ports"][f.src], "rx_packets");
  // In bursts the switch's receive ring takes at once; each burst confirmed by its
  // counters. A frame lost before the switch's MMU saw it (a full receive ring on a busy
  // machine) never arrived, so it is sent again (at most three times per burst).
  constexpr std::uint32_t burst = 32;
  std::uint64_t got = before;
  for (std::uint32_t done = 0; done < f.count;) {
    const std::uint32_t n = std::min(burst, f.count - done);
    done += n;
    for (int attempt = 0; attempt < 4 && got < before + done; ++attempt) {
      const auto missing = static_cast<std::uint32_t>(before + done - got);
      {
        std::lock_guard lock(x.send_mutex);
        for (std::uint32_t i = 0; i < missing; ++i) (void)x.ports[f.src].send(frame);
      }
      auto c = x.wait_for([&](const json& j) { return u64(j["ports"][f.src], "rx_packets") >= before + done; },
                          std::chrono::seconds(1));
      if (!c) return c.error();
      got = u64((*c)["ports"][f.src], "rx_packets");
    }
    if (got < before + done) break;  // still missing; the caller sees the count
  }
  return static_cast<std::uint32_t>(got - before);
}

result<probe_counters> lab_switch_under_test::read(std::uint16_t src, std::uint16_t dst, std::uint8_t priority) {
  auto c = impl_->counters();
  if (!c) return c.error();
  const json& ports = (*c)["ports"];
  if (src >= ports.size() || dst >= ports.size())
    return status(error_code::invalid_argument, "probe ports outside the switch's " + std::to_string(ports.size()));
  const json& pg = ports[src]["pgs"][priority];
  const json& q = ports[dst]["queues"][priority];
  probe_counters out;
  out.pg_xoff_sent = u64(pg, "xoff_sent");
  out.pg_xon_sent = u64(pg, "xon_sent");
  out.pg_dropped = u64(pg, "dropped_packets");
  out.pg_used_bytes = static_cast<std::int64_t>(u64(pg, "reserve_bytes") + u64(pg, "shared_bytes") +
                                                u64(pg, "headroom_bytes"));
  out.pg_headroom_bytes = static_cast<std::int64_t>(u64(pg, "headroom_bytes"));
  out.queue_dropped = u64(q, "dropped_packets");
  out.queue_ecn_marked = u64(q, "ecn_marked");
  out.queue_tx_packets = u64(q, "dequeued_packets");
  out.queue_depth_bytes = static_cast<std::int64_t>(u64(q, "depth_bytes"));
  if (q.contains("pfc_watchdog")) {
    const json& wd = q["pfc_watchdog"];
    out.wd_storms_detected = u64(wd, "storms_detected");
    out.wd_storms_restored = u64(wd, "storms_restored");
    out.wd_dropped = u64(wd, "tx_dropped") + u64(wd, "rx_dropped");
    out.wd_stormed = wd.value("stormed", false);
    // The switch's CLOCK_MONOTONIC (realtime_clock).
    out.wd_last_xoff_rx_ns = wd.value("last_xoff_rx_ns", std::int64_t{-1});
    out.wd_last_restored_ns = wd.value("last_restored_ns", std::int64_t{-1});
  }
  return out;
}

status lab_switch_under_test::storm(std::uint16_t port, std::uint8_t priority, bool on) {
  if (port >= impl_->ports.size()) return status(error_code::invalid_argument, "no port " + std::to_string(port));
  const auto bit = static_cast<std::uint8_t>(1u << priority);
  if (!on) {
    std::lock_guard lock(impl_->send_mutex);
    impl_->stormed[port] &= static_cast<std::uint8_t>(~bit);  // a storm just stops
    return status::success();
  }
  auto before = impl_->pfc_rx(port);
  if (!before) return before.error();
  {
    std::lock_guard lock(impl_->send_mutex);
    impl_->stormed[port] |= bit;
  }
  ROCELAB_RETURN_IF_ERROR(impl_->send_pfc(port, bit, true));
  return impl_->wait_pfc_taken(port, *before);
}

status lab_switch_under_test::wait(std::int64_t ns) {
  std::this_thread::sleep_for(std::chrono::nanoseconds(std::max<std::int64_t>(0, ns)));
  return status::success();
}

status lab_switch_under_test::restore() {
  auto& x = *impl_;
  for (std::uint16_t p = 0; p < x.ports.size(); ++p) {
    std::uint8_t mask;
    {
      std::lock_guard lock(x.send_mutex);
      mask = x.held[p] | x.stormed[p];
      x.held[p] = x.stormed[p] = 0;
    }
    if (mask != 0) ROCELAB_RETURN_IF_ERROR(x.send_pfc(p, mask, false));
  }
  if (!x.snapshot) return status::success();
  auto s = ss::settings_from_json(*x.snapshot);
  if (!s) return s.error().with_context("the snapshot");
  ROCELAB_RETURN_IF_ERROR(x.apply_model(s->model));
  x.snapshot.reset();
  return status::success();
}

result<qualify_result> qualify_virtual_lab(const experiment_spec& spec, const qualify_plan& plan,
                                           const std::string& lab_name, const std::string& rocelab_binary) {
  if (::geteuid() != 0)
    return status(error_code::unavailable, "qualifying the virtual lab's switch needs root (network namespaces)");
  if (spec.topology.hosts < 3)
    return status(error_code::invalid_argument, "qualify: topology.hosts must be at least 3 (source, held port, bystander)");
  if (!lab::lab_inspect(lab_name).namespaces.empty())
    return status(error_code::unavailable, "lab '" + lab_name + "' is already up; take it down with `rocelab lab down " +
                                               lab_name + "`");
  auto up = lab::lab_up(lab_options_for(spec, lab_name, {}, rocelab_binary));
  if (!up) return up.error().with_context("bringing up lab '" + lab_name + "'");
  auto out = [&]() -> result<qualify_result> {
    ROCELAB_RETURN_IF_ERROR(configure_lab_switch(*up, spec));
    auto target = lab_switch_under_test::open(*up);
    if (!target) return target.error();
    auto cfg = (*target)->current_config();
    if (!cfg) return cfg.error();
    return qualify_switch(**target, *cfg, plan);
  }();
  if (auto st = lab::lab_down(lab_name); !st.ok() && out.ok())
    return st.with_context("taking lab '" + lab_name + "' down");
  return out;
}

}  // namespace rocelab::experiments
