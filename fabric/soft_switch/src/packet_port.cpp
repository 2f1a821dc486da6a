#include "rocelab/fabric/soft_switch/packet_port.hpp"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

namespace rocelab::fabric::soft_switch {
namespace {

std::uint32_t load_status(const volatile std::uint32_t* p) noexcept {
  return __atomic_load_n(const_cast<const std::uint32_t*>(p), __ATOMIC_ACQUIRE);
}
void store_status(volatile std::uint32_t* p, std::uint32_t v) noexcept {
  __atomic_store_n(const_cast<std::uint32_t*>(p), v, __ATOMIC_RELEASE);
}

}  // namespace

result<packet_port> packet_port::open(const packet_port_options& o) {
  const std::string where = "port " + o.ifname;
  packet_port p;
  p.name_ = o.ifname;
  p.version_ = o.version;
  const int proto = o.receive ? htons(ETH_P_ALL) : 0;  // 0: send only, nothing is queued
  p.fd_ = unique_fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto));
  if (!p.fd_.valid()) return status::from_errno("socket(AF_PACKET)").with_context(where);
  p.ifindex_ = static_cast<int>(::if_nametoindex(o.ifname.c_str()));
  if (p.ifindex_ == 0) return status(error_code::not_found, "no such interface").with_context(where);
  const int fd = p.fd_.get();
  const int one = 1;
  // Frames go to the driver directly, as from a switch's MAC; no qdisc reordering.
  if (::setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0)
    return status::from_errno("PACKET_QDISC_BYPASS").with_context(where);

  if (o.receive) {
    // Our own transmissions must not come back as receptions (Linux 4.20+).
    if (::setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
      return status::from_errno("PACKET_IGNORE_OUTGOING").with_context(where);
    const int version = o.version == ring_version::v2 ? TPACKET_V2 : TPACKET_V3;
    if (::setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) != 0)
      return status::from_errno("PACKET_VERSION").with_context(where);
    if (o.version == ring_version::v2) {
      // Blocks must be whole pages (the kernel refuses a 2 KiB block with EINVAL, which
      // is what an MTU-1500 lab asks for); frames are laid out back to back either way,
      // so frame i stays at i x frame_bytes.
      const auto page = static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE));
      const std::uint32_t block = std::max(o.frame_bytes, page);
      const std::uint32_t per_block = block / o.frame_bytes;
      const std::uint32_t frames = (o.frames + per_block - 1) / per_block * per_block;
      tpacket_req req{};
      req.tp_frame_size = o.frame_bytes;
      req.tp_frame_nr = frames;
      req.tp_block_size = block;
      req.tp_block_nr = frames / per_block;
      if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0)
        return status::from_errno("PACKET_RX_RING (v2)").with_context(where);
      p.frame_bytes_ = o.frame_bytes;
      p.frames_ = frames;
      p.ring_bytes_ = std::size_t{o.frame_bytes} * frames;
    } else {
      tpacket_req3 req{};
      req.tp_block_size = o.block_bytes;
      req.tp_block_nr = o.blocks;
      req.tp_frame_size = 2048;  // only checked for alignment in v3
      req.tp_frame_nr = static_cast<unsigned>((std::size_t{o.block_bytes} * o.blocks) / 2048);
      req.tp_retire_blk_tov = o.block_timeout_ms;
      if (::setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0)
        return status::from_errno("PACKET_RX_RING (v3)").with_context(where);
      p.block_bytes_ = o.block_bytes;
      p.blocks_ = o.blocks;
      p.ring_bytes_ = std::size_t{o.block_bytes} * o.blocks;
    }
    void* ring = ::mmap(nullptr, p.ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (ring == MAP_FAILED) {
      p.ring_bytes_ = 0;
      return status::from_errno("mmap of the receive ring").with_context(where);
    }
    p.ring_ = static_cast<std::uint8_t*>(ring);
    // A switch port takes every frame, whatever its destination MAC.
    packet_mreq mr{};
    mr.mr_ifindex = p.ifindex_;
    mr.mr_type = PACKET_MR_PROMISC;
    if (::setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0)
      return status::from_errno("PACKET_MR_PROMISC").with_context(where);
  }
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = static_cast<std::uint16_t>(proto);
  addr.sll_ifindex = p.ifindex_;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return status::from_errno("bind").with_context(where);
  p.link_drops_base_ = p.read_link_drops();
  return p;
}

packet_port::packet_port(packet_port&& o) noexcept
    : name_(std::move(o.name_)),
      fd_(std::move(o.fd_)),
      ifindex_(o.ifindex_),
      version_(o.version_),
      ring_(std::exchange(o.ring_, nullptr)),
      ring_bytes_(std::exchange(o.ring_bytes_, 0)),
      frame_bytes_(o.frame_bytes_),
      frames_(o.frames_),
      head_(o.head_),
      block_bytes_(o.block_bytes_),
      blocks_(o.blocks_),
      block_(o.block_),
      left_in_block_(o.left_in_block_),
      next_in_block_(o.next_in_block_),
      wait_budget_ns_(o.wait_budget_ns_),
      batch_wait_ns_(o.batch_wait_ns_),
      head_stamp_ns_(o.head_stamp_ns_),
      link_drops_base_(o.link_drops_base_),
      stats_(o.stats_) {}

packet_port::~packet_port() {
  if (ring_ != nullptr) ::munmap(ring_, ring_bytes_);
}

std::span<const std::uint8_t> packet_port::peek(std::span<std::uint8_t> scratch) noexcept {
  if (ring_ == nullptr) return {};
  const std::uint8_t* base = nullptr;
  std::uint32_t snaplen = 0, wirelen = 0, st = 0, mac = 0;
  std::uint16_t tci = 0, tpid = 0;
  if (version_ == ring_version::v2) {
    auto* h = reinterpret_cast<tpacket2_hdr*>(ring_ + std::size_t{head_} * frame_bytes_);
    st = load_status(&h->tp_status);
    if ((st & TP_STATUS_USER) == 0) return {};
    base = reinterpret_cast<const std::uint8_t*>(h);
    snaplen = h->tp_snaplen;
    wirelen = h->tp_len;
    mac = h->tp_mac;
    tci = h->tp_vlan_tci;
    tpid = h->tp_vlan_tpid;
    head_stamp_ns_ = std::int64_t{h->tp_sec} * 1'000'000'000 + h->tp_nsec;
  } else {
    if (left_in_block_ == 0) {
      auto* bd = reinterpret_cast<tpacket_block_desc*>(ring_ + std::size_t{block_} * block_bytes_);
      if ((load_status(&bd->hdr.bh1.block_status) & TP_STATUS_USER) == 0) return {};
      left_in_block_ = bd->hdr.bh1.num_pkts;
      next_in_block_ = reinterpret_cast<std::uint8_t*>(bd) + bd->hdr.bh1.offset_to_first_pkt;
      if (left_in_block_ == 0) {
        store_status(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL);
        block_ = (block_ + 1) % blocks_;
        return {};
      }
    }
    auto* h = reinterpret_cast<tpacket3_hdr*>(next_in_block_);
    base = next_in_block_;
    st = h->tp_status;
    snaplen = h->tp_snaplen;
    wirelen = h->tp_len;
    mac = h->tp_mac;
    tci = h->hv1.tp_vlan_tci;
    tpid = h->hv1.tp_vlan_tpid;
    head_stamp_ns_ = std::int64_t{h->tp_sec} * 1'000'000'000 + h->tp_nsec;
  }
  if (snaplen < wirelen) ++stats_.rx_truncated;
  std::span<const std::uint8_t> frame(base + mac, snaplen);
  if ((st & TP_STATUS_VLAN_VALID) == 0 || frame.size() < 12 || frame.size() + 4 > scratch.size()) return frame;
  // Put back the 802.1Q tag the kernel moved into the header.
  if ((st & TP_STATUS_VLAN_TPID_VALID) == 0) tpid = ETH_P_8021Q;
  std::memcpy(scratch.data(), frame.data(), 12);
  scratch[12] = static_cast<std::uint8_t>(tpid >> 8);
  scratch[13] = static_cast<std::uint8_t>(tpid);
  scratch[14] = static_cast<std::uint8_t>(tci >> 8);
  scratch[15] = static_cast<std::uint8_t>(tci);
  std::memcpy(scratch.data() + 16, frame.data() + 12, frame.size() - 12);
  return scratch.first(frame.size() + 4);
}

std::int64_t ring_clock_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void packet_port::note_wait(std::int64_t now) noexcept {
  const std::int64_t wait = now - head_stamp_ns_;
  if (head_stamp_ns_ == 0 || wait < 0) return;  // no timestamp, or a clock step
  stats_.ring_wait_max_ns = std::max(stats_.ring_wait_max_ns, wait);
  if (wait_budget_ns_ > 0 && wait > wait_budget_ns_) ++stats_.ring_wait_over_budget;
  const auto us = static_cast<std::uint64_t>(wait / 1000);
  const int bucket = us < 2 ? 0 : std::min<int>(15, std::bit_width(us) - 1);
  ++stats_.ring_wait_log2_us[static_cast<std::size_t>(bucket)];
}

void packet_port::release() noexcept {
  if (version_ == ring_version::v2) {
    auto* h = reinterpret_cast<tpacket2_hdr*>(ring_ + std::size_t{head_} * frame_bytes_);
    store_status(&h->tp_status, TP_STATUS_KERNEL);
    head_ = (head_ + 1) % frames_;
    return;
  }
  auto* h = reinterpret_cast<tpacket3_hdr*>(next_in_block_);
  next_in_block_ += h->tp_next_offset;
  if (--left_in_block_ == 0) {
    auto* bd = reinterpret_cast<tpacket_block_desc*>(ring_ + std::size_t{block_} * block_bytes_);
    store_status(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL);
    block_ = (block_ + 1) % blocks_;
  }
}

bool packet_port::send(std::span<const std::uint8_t> frame) noexcept {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = ifindex_;
  to.sll_halen = 6;
  if (frame.size() >= 6) std::memcpy(to.sll_addr, frame.data(), 6);
  const ssize_t n = ::sendto(fd_.get(), frame.data(), frame.size(), MSG_DONTWAIT,
                             reinterpret_cast<const sockaddr*>(&to), sizeof to);
  if (n != static_cast<ssize_t>(frame.size())) {
    ++stats_.tx_errors;
    return false;
  }
  ++stats_.tx_frames;
  stats_.tx_bytes += frame.size();
  return true;
}

std::size_t packet_port::send_batch(std::span<const std::span<const std::uint8_t>> frames) noexcept {
  // No destination address: the socket is bound to the interface, and a SOCK_RAW frame
  // carries its own Ethernet header.
  std::array<mmsghdr, max_batch> msgs{};
  std::array<iovec, max_batch> iov{};
  std::size_t sent = 0;
  std::size_t i = 0;
  while (i < frames.size()) {
    const std::size_t n = std::min(max_batch, frames.size() - i);
    for (std::size_t k = 0; k < n; ++k) {
      const auto& f = frames[i + k];
      iov[k] = {const_cast<std::uint8_t*>(f.data()), f.size()};
      msgs[k] = {};
      msgs[k].msg_hdr.msg_iov = &iov[k];
      msgs[k].msg_hdr.msg_iovlen = 1;
    }
    const int r = ::sendmmsg(fd_.get(), msgs.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    // r < n: frame i + r was refused (r == -1: the first); count it and go on after it.
    const std::size_t took = r > 0 ? static_cast<std::size_t>(r) : 0;
    for (std::size_t k = 0; k < took; ++k) stats_.tx_bytes += frames[i + k].size();
    stats_.tx_frames += took;
    sent += took;
    i += took;
    if (took < n) {
      ++stats_.tx_errors;
      ++i;
    }
  }
  return sent;
}

std::pair<std::uint64_t, std::uint64_t> packet_port::read_link_drops() const noexcept {
  // getifaddrs reads the link statistics over rtnetlink in the calling thread's network
  // namespace (the switch's), unlike /sys, which shows the namespace it was mounted in.
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return {0, 0};
  std::pair<std::uint64_t, std::uint64_t> out{0, 0};
  for (const ifaddrs* a = all; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_PACKET || a->ifa_data == nullptr) continue;
    if (name_ != a->ifa_name) continue;
    rtnl_link_stats s{};
    std::memcpy(&s, a->ifa_data, sizeof s);
    out = {s.rx_dropped, s.tx_dropped};
    break;
  }
  ::freeifaddrs(all);
  return out;
}

void packet_port::reset_stats() noexcept {
  (void)stats();  // reading PACKET_STATISTICS clears the kernel's count
  stats_ = {};
  link_drops_base_ = read_link_drops();
}

const packet_port_stats& packet_port::stats() noexcept {
  if (ring_ != nullptr) {
    tpacket_stats_v3 s{};
    socklen_t len = version_ == ring_version::v2 ? sizeof(tpacket_stats) : sizeof s;
    if (::getsockopt(fd_.get(), SOL_PACKET, PACKET_STATISTICS, &s, &len) == 0) stats_.kernel_drops += s.tp_drops;
  }
  // The kernel's counters are 32-bit on some drivers; a value below the base is a wrap
  // or an interface reset, and counts from zero.
  const auto now = read_link_drops();
  stats_.link_rx_dropped = now.first >= link_drops_base_.first ? now.first - link_drops_base_.first : now.first;
  stats_.link_tx_dropped = now.second >= link_drops_base_.second ? now.second - link_drops_base_.second : now.second;
  return stats_;
}

}  // namespace rocelab::fabric::soft_switch
