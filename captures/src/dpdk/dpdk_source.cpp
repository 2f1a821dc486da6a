// rte_eth_read_clock, used to map NIC timestamps onto epoch time, is still marked
// experimental in DPDK 22.11; this feature macro is how DPDK asks callers to opt in.
#define ALLOW_EXPERIMENTAL_API 1

#include "rocelab/captures/dpdk_source.hpp"

#include "rocelab/captures/dpdk_rx_plan.hpp"
#include "rocelab/captures/nic_clock.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include <dirent.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/timex.h>

#include <algorithm>
#include <cstdlib>
#include <array>
#include <cstdio>
#include <atomic>
#include <ctime>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <sstream>
#include <thread>
#include <utility>

namespace rocelab::captures {
namespace {

constexpr std::uint16_t burst_size = 32;
constexpr unsigned mempool_cache_size = 256;
// How long the device clock is watched at open to learn its rate against CLOCK_REALTIME,
// and how often it is sampled again while the capture runs (the fit follows the
// oscillator over its last 64 samples, about 6 s).
constexpr auto clock_calibration_window = std::chrono::milliseconds(50);
constexpr auto clock_sample_interval = std::chrono::milliseconds(100);

std::int64_t realtime_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string dpdk_error(int err) { return rte_strerror(err < 0 ? -err : err); }

std::vector<std::string> split_whitespace(const std::string& text) {
  std::vector<std::string> tokens;
  std::istringstream in(text);
  for (std::string token; in >> token;) tokens.push_back(std::move(token));
  return tokens;
}

// The EAL is process-wide and DPDK allows one rte_eal_init per process, so its state is
// a function-local static whose destructor runs rte_eal_cleanup at exit.
class eal_state {
 public:
  static eal_state& instance() {
    static eal_state state;
    return state;
  }

  status ensure_initialised(const std::string& args) {
    const std::lock_guard lock(mutex_);
    const auto tokens = split_whitespace(args);
    if (attempted_) {
      if (tokens != tokens_)
        return {error_code::invalid_argument,
                "the DPDK EAL was already initialised in this process with different "
                "arguments (\"" + joined() + "\"); DPDK cannot initialise it twice"};
      return init_status_;
    }
    attempted_ = true;
    tokens_ = tokens;
    // rte_eal_init may keep pointers into argv and permutes it, so the strings live as
    // long as the process does.
    storage_.push_back("rocelab");
    storage_.insert(storage_.end(), tokens.begin(), tokens.end());
    for (auto& s : storage_) argv_.push_back(s.data());
    argv_.push_back(nullptr);
    const int rc = rte_eal_init(static_cast<int>(storage_.size()), argv_.data());
    if (rc < 0) {
      init_status_ = status(error_code::unavailable,
                            "rte_eal_init(\"" + joined() + "\"): " + dpdk_error(rte_errno));
      return init_status_;
    }
    initialised_ = true;
    return status::success();
  }

  // Ports can belong to one source at a time; a second claim is a caller error.
  bool claim(std::uint16_t port) {
    const std::lock_guard lock(mutex_);
    return claimed_.insert(port).second;
  }
  bool claimed(std::uint16_t port) {
    const std::lock_guard lock(mutex_);
    return claimed_.count(port) != 0;
  }
  void release(std::uint16_t port) noexcept {
    const std::lock_guard lock(mutex_);
    claimed_.erase(port);
  }
  unsigned next_pool_number() { return pool_counter_++; }

  eal_state(const eal_state&) = delete;
  eal_state& operator=(const eal_state&) = delete;

 private:
  eal_state() = default;
  ~eal_state() {
    if (!initialised_) return;
    if (const int rc = rte_eal_cleanup(); rc != 0)
      std::cerr << "rocelab: rte_eal_cleanup: " << dpdk_error(rc) << '\n';
  }

  std::string joined() const {
    std::string out;
    for (const auto& t : tokens_) out += (out.empty() ? "" : " ") + t;
    return out;
  }

  std::mutex mutex_;
  bool attempted_ = false;
  bool initialised_ = false;
  status init_status_;
  std::vector<std::string> tokens_;
  std::vector<std::string> storage_;
  std::vector<char*> argv_;
  std::set<std::uint16_t> claimed_;
  std::atomic<unsigned> pool_counter_{0};
};

}  // namespace

// Per-port state. Hardware timestamps become epoch ns through `clock` (nic_clock.hpp):
// as they are when the PMD stamps wall-clock time, else by a line fitted to samples of
// rte_eth_read_clock against CLOCK_REALTIME taken at open and every
// clock_sample_interval while polling.
struct dpdk_source::port_state {
  std::uint16_t id = 0;
  interface_info info;
  bool configured = false;
  bool started = false;
  bool hardware_timestamps = false;
  int timestamp_offset = -1;     // mbuf dynamic field offset
  std::uint64_t timestamp_flag = 0;  // ol_flags bit saying the field is valid
  nic_clock_map clock;
  std::chrono::steady_clock::time_point last_clock_sample{};
  std::uint64_t received = 0;
  std::uint64_t bytes = 0;
  // net_af_packet: the interface its socket is bound to, and the ring overflows read
  // from that socket so far (read_af_packet_drops).
  bool af_packet = false;
  int if_index = 0;
  std::uint64_t ring_drops = 0;
  std::string notes;  // what open() learnt about this port, repeated with every stats()
  bool tai_warned = false;  // notes say the stamps are TAI with no offset to convert them
};

void dpdk_source::port_closer::operator()(port_state* port) const noexcept {
  if (port->started) {
    if (const int rc = rte_eth_dev_stop(port->id); rc != 0)
      std::cerr << "rocelab: stopping DPDK port " << port->id << ": " << dpdk_error(rc) << '\n';
  }
  if (port->configured) {
    if (const int rc = rte_eth_dev_close(port->id); rc != 0)
      std::cerr << "rocelab: closing DPDK port " << port->id << ": " << dpdk_error(rc) << '\n';
  }
  eal_state::instance().release(port->id);
  delete port;
}

void dpdk_source::mempool_deleter::operator()(rte_mempool* pool) const noexcept {
  rte_mempool_free(pool);
}

namespace {

// One reading of the device clock against CLOCK_REALTIME into `clock`. The realtime
// sample is the midpoint of two reads around the device read, halving the read-latency
// error. False when the device clock cannot be read.
bool sample_clock(std::uint16_t port, nic_clock_map& clock) {
  const std::int64_t before = realtime_ns();
  std::uint64_t ticks = 0;
  if (rte_eth_read_clock(port, &ticks) != 0) return false;
  clock.sample(ticks, before + (realtime_ns() - before) / 2);
  return true;
}

// The kernel's TAI - UTC offset (struct timex tai, read-only ntp_adjtime: allowed
// unprivileged); 0 when it cannot be read or nothing (chronyd leapsectz, ntpd, phc2sys
// -a with a leap file) has set it.
std::int32_t host_tai_utc_offset_s() noexcept {
  timex t{};
  if (::ntp_adjtime(&t) < 0) return 0;
  return t.tai;
}

// Two readings clock_calibration_window apart: enough to map counter stamps from the
// first packet on; poll() keeps sampling.
bool calibrate_clock(std::uint16_t port, nic_clock_map& clock) {
  if (!sample_clock(port, clock)) return false;
  std::this_thread::sleep_for(clock_calibration_window);
  return sample_clock(port, clock) && clock.calibrated();
}

// The af_packet PMD copies each ring frame (framesz minus the 32 bytes of TPACKET2
// header it does not keep) into one mbuf, and refuses a pool with a smaller data room;
// the largest `framesz=` of any --vdev in the EAL arguments decides, at least 2048.
std::uint32_t af_packet_frame_bytes(std::string_view eal_args) {
  std::uint32_t bytes = RTE_MBUF_DEFAULT_DATAROOM;
  constexpr std::string_view key = "framesz=";
  for (std::size_t at = eal_args.find(key); at != std::string_view::npos; at = eal_args.find(key, at + 1)) {
    std::uint32_t v = 0;
    std::size_t i = at + key.size();
    while (i < eal_args.size() && eal_args[i] >= '0' && eal_args[i] <= '9' && v < (1u << 24))
      v = v * 10 + static_cast<std::uint32_t>(eal_args[i++] - '0');
    bytes = std::max(bytes, v);
  }
  return bytes;
}

// DPDK 22.11's net_af_packet reports no drops at all: its eth_stats_get fills packets and
// bytes only, so a frame the kernel drops because the PMD's PACKET_MMAP ring is full (the
// capture not scheduled for the time the ring lasts) is counted nowhere in ethdev. The
// kernel counts it on the PMD's socket (PACKET_STATISTICS tp_drops), and that socket is one
// of this process's descriptors, bound to the port's interface: the drops are read there.
// Reading clears the kernel's count, so it is accumulated per port.
struct af_packet_port {
  int if_index = 0;
  std::uint64_t* drops = nullptr;
};
void read_af_packet_drops(const std::vector<af_packet_port>& ports) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = ::dirfd(dir);
  while (const dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == own) continue;
    int domain = 0;
    socklen_t len = sizeof domain;
    if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_PACKET) continue;
    sockaddr_ll addr{};
    len = sizeof addr;
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0) continue;
    for (const auto& port : ports) {
      if (port.if_index != addr.sll_ifindex) continue;
      tpacket_stats_v3 st{};  // tp_packets and tp_drops lead both layouts (v1/v2 and v3)
      len = sizeof st;
      if (::getsockopt(static_cast<int>(fd), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) *port.drops += st.tp_drops;
      break;
    }
  }
  ::closedir(dir);
}

}  // namespace

dpdk_source::dpdk_source(mempool_handle pool, std::vector<port_handle> ports,
                         std::uint32_t snaplen)
    : pool_(std::move(pool)), ports_(std::move(ports)), snaplen_(snaplen) {}

dpdk_source::~dpdk_source() = default;

result<std::unique_ptr<dpdk_source>> dpdk_source::open(const dpdk_source_options& options) {
  if (options.snaplen == 0 || options.rx_descriptors == 0)
    return status(error_code::invalid_argument, "snaplen and rx_descriptors must be positive");
  auto& eal = eal_state::instance();
  const std::string eal_args = af_packet_args_for_mtu(options.eal_args, options.capture_mtu);
  ROCELAB_RETURN_IF_ERROR(eal.ensure_initialised(eal_args).with_context("initialising the DPDK EAL"));

  std::vector<std::uint16_t> port_ids = options.ports;
  if (port_ids.empty()) {
    std::uint16_t id = 0;
    RTE_ETH_FOREACH_DEV(id) { port_ids.push_back(id); }
  }
  if (port_ids.empty())
    return status(error_code::not_found,
                  "no DPDK ports (bind a NIC to a DPDK driver or pass "
                  "--vdev=net_af_packet0,iface=<name> in the EAL arguments)");
  for (const auto id : port_ids)
    if (rte_eth_dev_is_valid_port(id) == 0)
      return status(error_code::invalid_argument, "DPDK port " + std::to_string(id) +
                                                      " does not exist");

  const std::string pool_name = "rl_cap_" + std::to_string(eal.next_pool_number());
  // Every RX ring can be full while a burst is being handed to the caller, so the pool
  // must hold more mbufs than all rings together.
  const std::uint32_t needed = static_cast<std::uint32_t>(port_ids.size()) *
                                   (options.rx_descriptors + burst_size) +
                               mempool_cache_size;
  const std::uint32_t mbufs = std::max(options.mbufs, needed);
  std::uint32_t data_room = options.mbuf_data_bytes != 0 ? options.mbuf_data_bytes
                                                           : af_packet_frame_bytes(eal_args);
  // Each port's MTU and scatter for frames up to the capture MTU; a port without scatter
  // makes the pool's mbufs hold a whole frame.
  constexpr std::uint32_t max_data_room = UINT16_MAX - RTE_PKTMBUF_HEADROOM;
  std::vector<dpdk_rx_plan> plans;
  for (const auto id : port_ids) {
    // A port another capture holds is refused before a pool is made for it.
    if (eal.claimed(id))
      return status(error_code::invalid_argument, "port is already used by another capture")
          .with_context("opening DPDK port " + std::to_string(id));
    rte_eth_dev_info info{};
    if (const int rc = rte_eth_dev_info_get(id, &info); rc != 0)
      return status(error_code::io_error, "rte_eth_dev_info_get: " + dpdk_error(rc))
          .with_context("DPDK port " + std::to_string(id));
    const dpdk_rx_caps caps{.max_rx_pktlen = info.max_rx_pktlen,
                            .min_mtu = info.min_mtu,
                            .max_mtu = info.max_mtu,
                            .offers_scatter = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0};
    plans.push_back(plan_dpdk_rx(caps, options.capture_mtu, data_room, max_data_room));
  }
  for (const auto& plan : plans) data_room = std::max(data_room, plan.mbuf_data_bytes);
  if (data_room + RTE_PKTMBUF_HEADROOM > UINT16_MAX)
    return status(error_code::invalid_argument, "mbuf data room of " + std::to_string(data_room) +
                                                    " bytes: at most " +
                                                    std::to_string(UINT16_MAX - RTE_PKTMBUF_HEADROOM));
  mempool_handle pool(rte_pktmbuf_pool_create(pool_name.c_str(), mbufs, mempool_cache_size, 0,
                                              static_cast<std::uint16_t>(data_room + RTE_PKTMBUF_HEADROOM),
                                              SOCKET_ID_ANY));
  if (!pool)
    return status(error_code::resource_exhausted,
                  "creating mbuf pool of " + std::to_string(mbufs) + " mbufs: " +
                      dpdk_error(rte_errno));

  std::vector<port_handle> ports;
  for (std::size_t k = 0; k < port_ids.size(); ++k) {
    const std::uint16_t id = port_ids[k];
    const dpdk_rx_plan& plan = plans[k];
    char name[RTE_ETH_NAME_MAX_LEN] = {};
    if (rte_eth_dev_get_name_by_port(id, name) != 0)
      std::snprintf(name, sizeof name, "port%u", static_cast<unsigned>(id));
    const std::string context = "opening DPDK port " + std::to_string(id) + " (" + name + ")";

    if (!eal.claim(id))
      return status(error_code::invalid_argument, "port is already used by another capture")
          .with_context(context);
    port_handle port(new port_state);
    port->id = id;

    rte_eth_dev_info dev_info{};
    if (const int rc = rte_eth_dev_info_get(id, &dev_info); rc != 0)
      return status(error_code::io_error, "rte_eth_dev_info_get: " + dpdk_error(rc))
          .with_context(context);

    rte_eth_conf conf{};
    conf.rxmode.mtu = plan.mtu;
    // A frame longer than one mbuf arrives as a chain; poll() linearises it.
    if (plan.frame_bytes > data_room && plan.scatter) conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    const bool offers_timestamps =
        (dev_info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;
    const bool want_hw = options.prefer_hardware_timestamps && offers_timestamps;
    if (want_hw) conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;

    // A TX queue is configured too: some PMDs refuse to start without one, and it costs
    // one small ring.
    const std::uint16_t tx_queues = dev_info.max_tx_queues > 0 ? 1 : 0;
    if (const int rc = rte_eth_dev_configure(id, 1, tx_queues, &conf); rc != 0)
      return status(error_code::io_error, "rte_eth_dev_configure: " + dpdk_error(rc))
          .with_context(context);
    port->configured = true;
    // configure only recorded the MTU in ethdev's data; the PMD is told here (dpdk_rx_plan.hpp).
    if (dpdk_sets_mtu_after_configure(dev_info.driver_name != nullptr ? dev_info.driver_name : "")) {
      const dpdk_mtu_request request{.port_id = id,
                                     .port_name = name,
                                     .driver_name = dev_info.driver_name != nullptr ? dev_info.driver_name : "?",
                                     .mtu = plan.mtu,
                                     .max_mtu = dev_info.max_mtu};
      ROCELAB_RETURN_IF_ERROR(check_dpdk_set_mtu(rte_eth_dev_set_mtu(id, plan.mtu), request).with_context(context));
    }
    std::uint16_t mtu_in_force = plan.mtu;
    if (const int rc = rte_eth_dev_get_mtu(id, &mtu_in_force); rc != 0)
      return status(error_code::io_error, "rte_eth_dev_get_mtu: " + dpdk_error(rc)).with_context(context);

    std::uint16_t rx_desc = options.rx_descriptors;
    std::uint16_t tx_desc = 64;
    if (const int rc = rte_eth_dev_adjust_nb_rx_tx_desc(id, &rx_desc, &tx_desc); rc != 0)
      return status(error_code::io_error, "rte_eth_dev_adjust_nb_rx_tx_desc: " + dpdk_error(rc))
          .with_context(context);
    const int socket = rte_eth_dev_socket_id(id);
    const unsigned socket_id = socket < 0 ? static_cast<unsigned>(SOCKET_ID_ANY)
                                          : static_cast<unsigned>(socket);
    if (const int rc = rte_eth_rx_queue_setup(id, 0, rx_desc, socket_id, nullptr, pool.get());
        rc != 0)
      return status(error_code::io_error, "rte_eth_rx_queue_setup: " + dpdk_error(rc))
          .with_context(context);
    if (tx_queues > 0) {
      if (const int rc = rte_eth_tx_queue_setup(id, 0, tx_desc, socket_id, nullptr); rc != 0)
        return status(error_code::io_error, "rte_eth_tx_queue_setup: " + dpdk_error(rc))
            .with_context(context);
    }

    std::string notes = "MTU " + std::to_string(mtu_in_force) +
                        ((conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER) != 0 ? ", scatter" : "") + ". ";
    if (want_hw) {
      if (rte_mbuf_dyn_rx_timestamp_register(&port->timestamp_offset, &port->timestamp_flag) !=
          0) {
        notes += "registering the mbuf timestamp field failed (" + dpdk_error(rte_errno) +
                 "); software timestamps. ";
      } else {
        port->hardware_timestamps = true;
      }
    } else if (options.prefer_hardware_timestamps) {
      notes += "no RX timestamp offload on this port; software timestamps. ";
    }

    if (const int rc = rte_eth_dev_start(id); rc != 0)
      return status(error_code::io_error, "rte_eth_dev_start: " + dpdk_error(rc))
          .with_context(context);
    port->started = true;
    if (const int rc = rte_eth_promiscuous_enable(id); rc != 0)
      return status(error_code::io_error, "rte_eth_promiscuous_enable: " + dpdk_error(rc))
          .with_context(context);
    // Counters from before this capture (an earlier run on the same NIC) are not ours.
    if (const int rc = rte_eth_stats_reset(id); rc != 0)
      notes += "rte_eth_stats_reset: " + dpdk_error(rc) + "; counters include earlier traffic. ";

    if (port->hardware_timestamps && !calibrate_clock(id, port->clock)) {
      port->hardware_timestamps = false;
      notes += "device clock unreadable (rte_eth_read_clock); software timestamps. ";
    }
    if (port->hardware_timestamps) {
      const std::int32_t tai = options.tai_utc_offset_s >= 0 ? options.tai_utc_offset_s : host_tai_utc_offset_s();
      port->clock.set_tai_utc_offset_s(tai);
      if (tai > 0)
        notes += "real-time stamps in TAI are brought back to UTC by " + std::to_string(tai) + " s" +
                 (options.tai_utc_offset_s >= 0 ? "" : " (the host's TAI offset, adjtimex tai)") + ". ";
    }

    // Seen with DPDK 22.11: when the PACKET_MMAP ring overflows, the kernel drops frames
    // (tp_drops) but the PMD's imissed stays 0, so a clean imissed proves nothing here.
    const std::string_view driver = dev_info.driver_name != nullptr ? dev_info.driver_name : "?";
    if (driver == "net_af_packet") {
      notes += "net_af_packet counts no drops itself; its ring overflows are read from its socket as kernel_dropped. ";
      port->af_packet = true;
      port->if_index = static_cast<int>(dev_info.if_index);
    }

    port->notes = notes;
    port->info.link = link_type::ethernet;
    port->info.snaplen = options.snaplen;
    port->info.name = name;
    port->info.description = "DPDK port " + std::to_string(id) + " (" + std::string(driver) +
                             ")" + (notes.empty() ? "" : ": " + notes);
    ports.push_back(std::move(port));
  }
  return std::unique_ptr<dpdk_source>(
      new dpdk_source(std::move(pool), std::move(ports), options.snaplen));
}

result<std::size_t> dpdk_source::poll(std::chrono::milliseconds timeout,
                                      const packet_sink& sink) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
  std::array<rte_mbuf*, burst_size> burst{};
  std::size_t delivered = 0;

  for (;;) {
    bool any = false;
    for (std::uint32_t index = 0; index < ports_.size(); ++index) {
      port_state& port = *ports_[index];
      const std::uint16_t n = rte_eth_rx_burst(port.id, 0, burst.data(), burst_size);
      if (n == 0) continue;
      any = true;
      const std::int64_t burst_ns = realtime_ns();
      if (port.hardware_timestamps && clock::now() - port.last_clock_sample >= clock_sample_interval) {
        (void)sample_clock(port.id, port.clock);  // a failed read keeps the fit it has
        port.last_clock_sample = clock::now();
      }
      std::uint16_t next = 0;
      // The caller's sink may throw; the mbufs not yet handed back still belong to us.
      struct free_rest {
        std::array<rte_mbuf*, burst_size>& mbufs;
        std::uint16_t& next;
        std::uint16_t count;
        ~free_rest() {
          for (std::uint16_t k = next; k < count; ++k) rte_pktmbuf_free(mbufs[k]);
        }
      } guard{burst, next, n};

      for (; next < n; ++next) {
        rte_mbuf* m = burst[next];
        packet_view view;
        view.interface_id = index;
        view.original_length = rte_pktmbuf_pkt_len(m);
        view.timestamp_ns = burst_ns;
        if (port.hardware_timestamps && (m->ol_flags & port.timestamp_flag) != 0) {
          const auto stamp = *RTE_MBUF_DYNFIELD(m, port.timestamp_offset, rte_mbuf_timestamp_t*);
          if (const auto ns = port.clock.to_realtime_ns(stamp, burst_ns)) view.timestamp_ns = *ns;
          if (!port.tai_warned && port.clock.tai_utc_offset_s() == 0 && nic_clock_map::looks_like_tai(stamp, burst_ns)) {
            port.tai_warned = true;
            port.notes += "real-time stamps run " + std::to_string((static_cast<std::int64_t>(stamp) - burst_ns) / 1'000'000'000) +
                          " s ahead of UTC: the NIC's clock is TAI (ptp4l) and the host's TAI offset is unknown "
                          "(adjtimex tai 0; chronyd leapsectz or `pmc -u -b 0 'GET TIME_PROPERTIES_DATA_SET'` "
                          "currentUtcOffset gives it); timestamps are TAI. ";
          }
        }
        const std::uint32_t caplen = std::min(rte_pktmbuf_pkt_len(m), snaplen_);
        if (m->nb_segs == 1 || caplen <= rte_pktmbuf_data_len(m)) {
          view.bytes = {rte_pktmbuf_mtod(m, const std::uint8_t*), caplen};
        } else {
          scratch_.resize(caplen);
          const void* data = rte_pktmbuf_read(m, 0, caplen, scratch_.data());
          view.bytes = {static_cast<const std::uint8_t*>(data), caplen};
        }
        sink(view);
        ++delivered;
        ++port.received;
        port.bytes += view.original_length;
        rte_pktmbuf_free(m);
        burst[next] = nullptr;
      }
    }
    if (!any && delivered > 0) break;  // drained what had arrived
    if (clock::now() >= deadline) break;
  }
  return delivered;
}

std::vector<dpdk_port_stats> dpdk_source::port_stats() {
  std::vector<af_packet_port> af_packet;
  for (const auto& port : ports_)
    if (port->af_packet) af_packet.push_back({port->if_index, &port->ring_drops});
  if (!af_packet.empty()) read_af_packet_drops(af_packet);
  std::vector<dpdk_port_stats> out;
  for (const auto& port : ports_) {
    dpdk_port_stats s;
    s.port = port->id;
    s.stats.received = port->received;
    s.stats.bytes = port->bytes;
    s.stats.kernel_dropped = port->ring_drops;
    if (!port->notes.empty())
      s.stats.notes = "port " + std::to_string(port->id) + ": " + port->notes;
    rte_eth_stats st{};
    if (const int rc = rte_eth_stats_get(port->id, &st); rc == 0) {
      s.stats.imissed = st.imissed;
      s.stats.rx_nombuf = st.rx_nombuf;
      s.stats.ierrors = st.ierrors;
    } else {
      s.stats.notes += "rte_eth_stats_get(port " + std::to_string(port->id) +
                       "): " + dpdk_error(rc) + ". ";
    }
    out.push_back(std::move(s));
  }
  return out;
}

capture_stats dpdk_source::stats() {
  capture_stats total;
  for (const auto& [port, s] : port_stats()) {
    total.received += s.received;
    total.bytes += s.bytes;
    total.imissed += s.imissed;
    total.rx_nombuf += s.rx_nombuf;
    total.ierrors += s.ierrors;
    total.kernel_dropped += s.kernel_dropped;
    total.notes += s.notes;
  }
  total.notes += "kernel_dropped counts net_af_packet ring overflows only; if_dropped is a libpcap counter, 0 here. ";
  return total;
}

timestamp_source dpdk_source::timestamps() const {
  for (const auto& port : ports_)
    if (!port->hardware_timestamps) return timestamp_source::software;
  return timestamp_source::hardware;
}

std::vector<interface_info> dpdk_source::interfaces() const {
  std::vector<interface_info> out;
  for (const auto& port : ports_) out.push_back(port->info);
  return out;
}

std::vector<std::uint16_t> dpdk_source::ports() const {
  std::vector<std::uint16_t> out;
  for (const auto& port : ports_) out.push_back(port->id);
  return out;
}

}  // namespace rocelab::captures
