#pragma once
// One captured packet as every capture source yields it (file, libpcap, DPDK).

#include <cstdint>
#include <span>
#include <string>

namespace rocelab::captures {

// LINKTYPE_* values of the pcap/pcapng link-layer header registry.
enum class link_type : std::uint16_t {
  null_bsd = 0,
  ethernet = 1,
  raw = 101,   // raw IPv4 or IPv6, version nibble decides
  ipv4 = 228,
  ipv6 = 229,
};

// A view of one packet. `bytes` is what was captured (at most the snap length);
// `original_length` is the length on the wire. The view borrows: it is valid until the
// source's next call (a mapped file keeps it valid for the reader's lifetime).
struct packet_view {
  std::int64_t timestamp_ns = 0;     // since the Unix epoch
  std::uint32_t interface_id = 0;    // pcapng interface / DPDK port / 0 for pcap
  std::uint32_t original_length = 0;
  std::span<const std::uint8_t> bytes;
};

// What a capture file or live source says about one interface.
struct interface_info {
  link_type link = link_type::ethernet;
  std::uint32_t snaplen = 0;         // 0: unlimited
  std::string name;                  // if_name option, interface or port name
  std::string description;
  std::int64_t timestamp_unit_ns_num = 1;  // informative: resolution as a fraction
  std::int64_t timestamp_unit_ns_den = 1;  //   of a nanosecond (1/1 = ns, 1000/1 = us)
};

}  // namespace rocelab::captures
