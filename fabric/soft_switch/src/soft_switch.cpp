// The soft switch's construction (model, frame pool, packet ports, mirror port, epoll,
// timerfd, control socket) and the public soft_switch class over its impl.

#include "soft_switch_impl.hpp"

namespace rocelab::fabric::soft_switch {

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
  forwarding_.resize(n);

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
  arrive_ring_.assign(n, std::vector<delayed>(slots_));
  arrive_head_.assign(n, 0);
  arrive_count_.assign(n, 0);
  ingress_due_ns_.assign(n, 0);
  fdb_.reserve(4096);
  pacers_.assign(n, packet_pacer(opt_.port_rate_pps, opt_.max_catchup_ns));
  tx_slots_.assign(n, {});
  stall_catchup_ns_.assign(n, 0);
  pause_changed_ns_.assign(n, 0);
  for (auto& t : tx_slots_) t.reserve(packet_port::max_batch);

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
