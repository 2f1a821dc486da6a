#include "rocelab/traffic/verbs/rc_endpoint.hpp"

#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "rocelab/traffic/verbs/path_mtu.hpp"
#include "rocelab/traffic/verbs/signal_schedule.hpp"

namespace rocelab::traffic::verbs {
namespace fs = std::filesystem;

namespace detail {
void log_destroy_failure(const char* what, int rc) noexcept {
  std::fprintf(stderr, "rocelab verbs: %s: %s\n", what, std::strerror(rc > 0 ? rc : errno));
}
}  // namespace detail

namespace {

status verb_error(const char* verb, int rc_or_errno) {
  const int e = rc_or_errno != 0 ? rc_or_errno : errno;
  return {error_code::io_error, std::string(verb) + ": " + std::strerror(e), e};
}

std::string no_device_message(const std::string& sysfs_root) {
  const fs::path ib = fs::path(sysfs_root) / "class/infiniband";
  std::error_code ec;
  return "no RDMA device found (libibverbs lists none; " + ib.string() +
         (fs::exists(ib, ec) ? " has no usable device)" : " does not exist: no RDMA driver, and no Soft-RoCE (rdma_rxe) link)");
}

}  // namespace

result<std::vector<std::string>> list_devices(const std::string& sysfs_root) {
  int n = 0;
  device_list_ptr list(ibv_get_device_list(&n));
  std::vector<std::string> out;
  for (int i = 0; list && i < n; ++i) out.emplace_back(ibv_get_device_name(list.get()[i]));
  if (out.empty()) return status(error_code::unavailable, no_device_message(sysfs_root));
  return out;
}

result<std::unique_ptr<rc_endpoint>> rc_endpoint::open(endpoint_options options) {
  if (options.local_ip.empty())
    return status(error_code::invalid_argument, "verbs endpoint: local_ip is needed to select the RoCE v2 GID");
  std::unique_ptr<rc_endpoint> ep(new rc_endpoint(std::move(options)));
  auto& o = ep->options_;

  int n = 0;
  device_list_ptr list(ibv_get_device_list(&n));
  if (!list || n == 0) return status(error_code::unavailable, no_device_message(o.sysfs_root));
  std::string wanted = o.device;
  if (wanted.empty() && !o.netdev.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(o.sysfs_root) / "class/net" / o.netdev / "device/infiniband", ec))
      wanted = e.path().filename().string();
    if (wanted.empty())
      return status(error_code::unavailable, "no RDMA device found for " + o.netdev + " (" + o.sysfs_root + "/class/net/" +
                                                 o.netdev + "/device/infiniband is missing)");
  }
  ibv_device* device = nullptr;
  std::string names;
  for (int i = 0; i < n; ++i) {
    const std::string name = ibv_get_device_name(list.get()[i]);
    names += (names.empty() ? "" : ", ") + name;
    if (wanted.empty() || name == wanted) {
      device = list.get()[i];
      break;
    }
  }
  if (device == nullptr) return status(error_code::not_found, "no RDMA device " + wanted + " (devices: " + names + ")");
  ep->device_name_ = ibv_get_device_name(device);
  const std::string context = "verbs endpoint on " + ep->device_name_ + " port " + std::to_string(o.port);

  auto table = read_gid_table(o.sysfs_root, ep->device_name_, o.port);
  if (!table.ok()) return table.error().with_context(context);
  auto gid = select_roce_v2_gid(*table, o.local_ip);
  if (!gid.ok()) return gid.error().with_context(context);
  ep->gid_ = *gid;

  ep->context_.reset(ibv_open_device(device));
  if (!ep->context_) return verb_error("ibv_open_device", 0).with_context(context);
  // A RoCE port's active MTU follows its netdev's MTU; a path MTU above it sends frames the
  // link drops (perftest's set_mtu clamps the same way).
  ibv_port_attr port{};
  if (int rc = ibv_query_port(ep->context_.get(), o.port, &port); rc != 0)
    return verb_error("ibv_query_port", rc).with_context(context);
  ep->active_mtu_ = port.active_mtu;
  auto mtu = decide_path_mtu(o.mtu, ep->active_mtu_, 0);
  if (!mtu) return mtu.error().with_context(context);
  ep->path_mtu_ = *mtu;
  if (!mtu->note.empty()) std::fprintf(stderr, "rocelab verbs: %s: %s\n", context.c_str(), mtu->note.c_str());
  if (o.completion_channel) {
    ep->channel_.reset(ibv_create_comp_channel(ep->context_.get()));
    if (!ep->channel_) return verb_error("ibv_create_comp_channel", 0).with_context(context);
  }
  ep->pd_.reset(ibv_alloc_pd(ep->context_.get()));
  if (!ep->pd_) return verb_error("ibv_alloc_pd", 0).with_context(context);
  ep->memory_ = std::make_unique<std::uint8_t[]>(o.buffer_bytes);
  ep->mr_.reset(ibv_reg_mr(ep->pd_.get(), ep->memory_.get(), o.buffer_bytes,
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  if (!ep->mr_) return verb_error("ibv_reg_mr", 0).with_context(context);
  ep->cq_.reset(ibv_create_cq(ep->context_.get(), static_cast<int>(o.cq_depth), nullptr, ep->channel_.get(), 0));
  if (!ep->cq_) return verb_error("ibv_create_cq", 0).with_context(context);
  ibv_qp_init_attr init{};
  init.send_cq = ep->cq_.get();
  init.recv_cq = ep->cq_.get();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = o.max_send_wr;
  init.cap.max_recv_wr = 1;  // WRITE needs no receives
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  ep->qp_.reset(ibv_create_qp(ep->pd_.get(), &init));
  if (!ep->qp_) return verb_error("ibv_create_qp", 0).with_context(context);
  if (o.initial_psn == 0) o.initial_psn = std::random_device{}() & 0xFFFFFF;
  return ep;
}

connection_data rc_endpoint::local() const {
  connection_data c;
  c.qpn = qp_->qp_num;
  c.psn = options_.initial_psn & 0xFFFFFF;
  c.gid = gid_.gid;
  c.rkey = mr_->rkey;
  c.addr = reinterpret_cast<std::uintptr_t>(memory_.get());
  c.length = static_cast<std::uint32_t>(options_.buffer_bytes);
  c.mtu = static_cast<std::uint8_t>(path_mtu_.mtu);
  return c;
}

status rc_endpoint::connect(const connection_data& peer) {
  const std::string context = "connecting QP " + std::to_string(qp_->qp_num) + " to QP " + std::to_string(peer.qpn);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = options_.port;
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
  if (int rc = ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS); rc != 0)
    return verb_error("ibv_modify_qp INIT", rc).with_context(context);

  auto mtu = decide_path_mtu(options_.mtu, active_mtu_, peer.mtu);
  if (!mtu) return mtu.error().with_context(context);
  if (!mtu->note.empty() && mtu->note != path_mtu_.note)
    std::fprintf(stderr, "rocelab verbs: %s: %s\n", context.c_str(), mtu->note.c_str());
  path_mtu_ = *mtu;

  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = path_mtu_.mtu;
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 12;
  // RoCE: addressing by GRH (the GIDs); is_global is mandatory, LIDs do not exist.
  a.ah_attr.is_global = 1;
  a.ah_attr.port_num = options_.port;
  a.ah_attr.sl = options_.service_level;
  std::memcpy(a.ah_attr.grh.dgid.raw, peer.gid.data(), 16);
  a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(gid_.index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.grh.traffic_class = options_.traffic_class;
  if (int rc = ibv_modify_qp(qp_.get(), &a,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0)
    return verb_error("ibv_modify_qp RTR", rc).with_context(context);

  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = options_.initial_psn & 0xFFFFFF;
  a.timeout = 14;    // 4.096 us x 2^14 = 67 ms local ACK timeout (perftest's default)
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  if (int rc = ibv_modify_qp(qp_.get(), &a,
                             IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                 IBV_QP_MAX_QP_RD_ATOMIC);
      rc != 0)
    return verb_error("ibv_modify_qp RTS", rc).with_context(context);
  peer_ = peer;
  return status::success();
}

status rc_endpoint::post_write(std::uint64_t wr_id, std::size_t local_offset, std::uint64_t remote_offset,
                               std::uint32_t length, bool signaled) {
  if (local_offset + length > options_.buffer_bytes || remote_offset + length > peer_.length)
    return {error_code::invalid_argument, "RDMA WRITE of " + std::to_string(length) + " bytes beyond a buffer"};
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(memory_.get()) + local_offset;
  sge.length = length;
  sge.lkey = mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  wr.wr.rdma.remote_addr = peer_.addr + remote_offset;
  wr.wr.rdma.rkey = peer_.rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_.get(), &wr, &bad); rc != 0) return verb_error("ibv_post_send", rc);
  return status::success();
}

result<std::size_t> rc_endpoint::poll(std::span<ibv_wc> out) {
  const int n = ibv_poll_cq(cq_.get(), static_cast<int>(out.size()), out.data());
  if (n < 0) return verb_error("ibv_poll_cq", EIO);
  for (int i = 0; i < n; ++i)
    if (out[static_cast<std::size_t>(i)].status != IBV_WC_SUCCESS)
      return status(error_code::io_error, std::string("completion of work request ") +
                                              std::to_string(out[static_cast<std::size_t>(i)].wr_id) + ": " +
                                              ibv_wc_status_str(out[static_cast<std::size_t>(i)].status));
  return static_cast<std::size_t>(n);
}

result<std::size_t> rc_endpoint::wait(std::span<ibv_wc> out, std::chrono::milliseconds timeout) {
  if (!channel_) return status(error_code::unsupported, "wait: the endpoint was opened without a completion channel");
  // Arm first, then poll: a completion that arrived before arming is found by the poll,
  // one after it raises the event (the verbs man page's recipe, ibv_req_notify_cq(3)).
  if (int rc = ibv_req_notify_cq(cq_.get(), 0); rc != 0) return verb_error("ibv_req_notify_cq", rc);
  auto n = poll(out);
  if (!n.ok() || *n > 0) return n;
  pollfd p{channel_->fd, POLLIN, 0};
  const int rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
  if (rc < 0) return verb_error("poll on the completion channel", errno);
  if (rc == 0) return std::size_t{0};
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  if (ibv_get_cq_event(channel_.get(), &cq, &cq_context) != 0) return verb_error("ibv_get_cq_event", errno);
  // Every event must be acknowledged before the CQ can be destroyed.
  ibv_ack_cq_events(cq, 1);
  return poll(out);
}

result<write_bw_result> rc_endpoint::write_bw(std::uint32_t message_bytes, std::uint64_t iterations,
                                              std::uint32_t tx_depth, std::chrono::milliseconds timeout,
                                              std::uint32_t cq_mod) {
  if (message_bytes == 0 || message_bytes > options_.buffer_bytes || message_bytes > peer_.length)
    return status(error_code::invalid_argument, "write_bw: message size outside both buffers");
  tx_depth = std::max<std::uint32_t>(1, std::min(tx_depth, options_.max_send_wr));
  write_bw_result r;
  // One completion per cq_mod writes; each retires its batch (signal_schedule.hpp).
  signal_schedule schedule(cq_mod, tx_depth);
  std::vector<ibv_wc> wcs(tx_depth);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  while (schedule.completed() < iterations) {
    while (schedule.posted() < iterations && schedule.in_flight() < tx_depth) {
      const std::uint64_t id = schedule.posted();
      ROCELAB_RETURN_IF_ERROR(post_write(id, 0, 0, message_bytes, schedule.post(iterations)));
    }
    auto n = poll(wcs);
    if (!n.ok()) return n.error().with_context("write_bw");
    for (std::size_t i = 0; i < *n; ++i) (void)schedule.complete();
    if (*n == 0 && std::chrono::steady_clock::now() > deadline)
      return status(error_code::cancelled, "write_bw: " + std::to_string(schedule.completed()) + " of " +
                                               std::to_string(iterations) + " writes completed before the deadline");
  }
  r.messages = schedule.completed();
  r.bytes = schedule.completed() * message_bytes;
  r.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  return r;
}

result<write_lat_result> rc_endpoint::write_lat(bool initiator, std::uint32_t message_bytes, std::uint64_t iterations,
                                                std::chrono::milliseconds timeout) {
  // The buffer's first message_bytes receive the peer's writes; the next message_bytes are
  // what we send, so our own outgoing flag never looks like an arrival.
  if (message_bytes == 0 || 2ull * message_bytes > options_.buffer_bytes || message_bytes > peer_.length)
    return status(error_code::invalid_argument, "write_lat: two messages must fit the buffer, one the peer's");
  write_lat_result r;
  r.half_rtt_ns.reserve(iterations);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The peer's write lands in our buffer by DMA: read the flag byte through a volatile
  // pointer so every poll goes to memory.
  volatile std::uint8_t* flag = memory_.get() + message_bytes - 1;
  std::uint8_t* out_flag = memory_.get() + 2 * std::size_t{message_bytes} - 1;
  ibv_wc wc[4];
  auto wait_for = [&](std::uint8_t expected) -> status {
    while (*flag != expected) {
      if (std::chrono::steady_clock::now() > deadline)
        return {error_code::cancelled, "write_lat: the peer's write did not arrive before the deadline"};
    }
    return status::success();
  };
  auto send = [&](std::uint64_t i, std::uint8_t value) -> status {
    *out_flag = value;
    ROCELAB_RETURN_IF_ERROR(post_write(i, message_bytes, 0, message_bytes, true));
    // Reap the completion so the send queue never fills; it also surfaces a failed write.
    for (;;) {
      auto n = poll(wc);
      if (!n.ok()) return n.error().with_context("write_lat");
      if (*n > 0) return status::success();
      if (std::chrono::steady_clock::now() > deadline)
        return {error_code::cancelled, "write_lat: no completion before the deadline"};
    }
  };
  for (std::uint64_t i = 0; i < iterations; ++i) {
    // 1..255 and never 0, so a fresh (zeroed) buffer does not look like an arrival.
    const auto value = static_cast<std::uint8_t>(i % 255 + 1);
    if (initiator) {
      const auto t0 = std::chrono::steady_clock::now();
      ROCELAB_RETURN_IF_ERROR(send(i, value));
      ROCELAB_RETURN_IF_ERROR(wait_for(value));
      r.half_rtt_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count() / 2);
    } else {
      ROCELAB_RETURN_IF_ERROR(wait_for(value));
      ROCELAB_RETURN_IF_ERROR(send(i, value));
    }
    ++r.iterations;
  }
  return r;
}

}  // namespace rocelab::traffic::verbs
