#pragma once
// One side of a reliable-connection (RC) queue pair over RoCEv2 with rdma-core verbs,
// for RDMA WRITE traffic measured as perftest's ib_write_bw measures it.
//
// open(): device (by name, by its netdev through sysfs, or the first), PD, a registered
// buffer, a CQ (and a completion channel when asked), an RC QP in RESET; the GID index is
// the table's RoCE v2 entry for local_ip (gid_table.hpp). local() gives what the peer
// needs (connection_data.hpp); connect(peer) moves the QP INIT -> RTR -> RTS with a GRH
// to the peer's GID (RoCE has no LIDs). post_write() / poll() are the data path;
// write_bw() runs iterations of one message size with tx_depth writes in flight,
// signalling one in cq_mod as ib_write_bw does (signal_schedule.hpp) and polling the CQ,
// and reports bytes and time; write_lat() is ib_write_lat's ping-pong.
//
// Path MTU: open() reads the port's active MTU (ibv_query_port) and uses
// min(options.mtu, active MTU), connect() also the peer's; lowering it is logged on
// stderr, and a value that is no ibv_mtu is an error (path_mtu.hpp).
//
// Errors carry the verb that failed and its errno. With no RDMA device: unavailable,
// "no RDMA device found (...)". Threading: one thread per endpoint.

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/traffic/verbs/connection_data.hpp"
#include "rocelab/traffic/verbs/gid_table.hpp"
#include "rocelab/traffic/verbs/path_mtu.hpp"
#include "rocelab/traffic/verbs/verbs_handles.hpp"

namespace rocelab::traffic::verbs {

// The names libibverbs lists; unavailable ("no RDMA device found ...") when there are none.
[[nodiscard]] result<std::vector<std::string>> list_devices(const std::string& sysfs_root = "/sys");

struct endpoint_options {
  std::string device;                // "mlx5_0", "rxe0"; empty: the one behind `netdev`, else the first
  std::string netdev;                // optional: find the device through <sysfs_root>/class/net/IF/device/infiniband
  std::uint8_t port = 1;
  std::string local_ip;              // the address the traffic uses: selects the RoCE v2 GID
  std::string sysfs_root = "/sys";
  std::size_t buffer_bytes = 1 << 20;
  std::uint32_t max_send_wr = 128;
  std::uint32_t cq_depth = 256;
  bool completion_channel = false;   // event-driven completions; polling (as ib_write_bw) otherwise
  std::uint32_t initial_psn = 0;     // 24 bits
  ibv_mtu mtu = IBV_MTU_1024;
  std::uint8_t traffic_class = 106;  // IP TOS of the GRH: DSCP 26 (the lab's RoCE class) + ECT(0)
  std::uint8_t service_level = 3;    // the 802.1p priority on RoCE
};

struct write_bw_result {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::int64_t elapsed_ns = 0;
  [[nodiscard]] double gbps() const noexcept {
    return elapsed_ns > 0 ? static_cast<double>(bytes) * 8.0 / static_cast<double>(elapsed_ns) : 0.0;
  }
};

struct write_lat_result {
  std::uint64_t iterations = 0;
  std::vector<std::int64_t> half_rtt_ns;  // per iteration, as ib_write_lat reports (RTT / 2)
};

class rc_endpoint {
 public:
  [[nodiscard]] static result<std::unique_ptr<rc_endpoint>> open(endpoint_options options);
  rc_endpoint(const rc_endpoint&) = delete;
  rc_endpoint& operator=(const rc_endpoint&) = delete;
  ~rc_endpoint() = default;  // members go in reverse creation order

  [[nodiscard]] connection_data local() const;
  [[nodiscard]] status connect(const connection_data& peer);

  [[nodiscard]] status post_write(std::uint64_t wr_id, std::size_t local_offset, std::uint64_t remote_offset,
                                  std::uint32_t length, bool signaled);
  // Takes up to out.size() completions without blocking; a completion with an error
  // status fails with ibv_wc_status_str and the wr_id.
  [[nodiscard]] result<std::size_t> poll(std::span<ibv_wc> out);
  // With completion_channel: blocks until completions arrive (the CQ's event through the
  // channel's fd) or `timeout` passes (0 completions), then takes them as poll() does.
  // Without a channel it is an error (unsupported): use poll().
  [[nodiscard]] result<std::size_t> wait(std::span<ibv_wc> out, std::chrono::milliseconds timeout);
  // cq_mod: one write in cq_mod asks for a completion (perftest's default 100; 1: every one).
  [[nodiscard]] result<write_bw_result> write_bw(std::uint32_t message_bytes, std::uint64_t iterations,
                                                 std::uint32_t tx_depth, std::chrono::milliseconds timeout,
                                                 std::uint32_t cq_mod = 100);

  // ib_write_lat's ping-pong: the initiator writes `message_bytes` into the peer's buffer,
  // the peer sees the message's last byte change in its own memory and writes back; each
  // round trip is timed on the initiator. Both sides call it with the same arguments.
  [[nodiscard]] result<write_lat_result> write_lat(bool initiator, std::uint32_t message_bytes,
                                                   std::uint64_t iterations, std::chrono::milliseconds timeout);

  [[nodiscard]] std::span<std::uint8_t> buffer() noexcept { return {memory_.get(), options_.buffer_bytes}; }
  [[nodiscard]] const gid_entry& gid() const noexcept { return gid_; }
  [[nodiscard]] const std::string& device_name() const noexcept { return device_name_; }
  // The path MTU in use: after open() min(options.mtu, active MTU), after connect() also
  // the peer's; note says what lowered it.
  [[nodiscard]] const path_mtu_decision& path_mtu() const noexcept { return path_mtu_; }

 private:
  explicit rc_endpoint(endpoint_options options) : options_(std::move(options)) {}

  endpoint_options options_;
  std::string device_name_;
  gid_entry gid_;
  connection_data peer_{};
  ibv_mtu active_mtu_ = IBV_MTU_1024;
  path_mtu_decision path_mtu_;
  // Creation order (rc_pingpong, perftest): destroyed in reverse by member order.
  context_ptr context_;
  comp_channel_ptr channel_;
  pd_ptr pd_;
  std::unique_ptr<std::uint8_t[]> memory_;  // outlives its registration
  mr_ptr mr_;
  cq_ptr cq_;
  qp_ptr qp_;
};

}  // namespace rocelab::traffic::verbs
