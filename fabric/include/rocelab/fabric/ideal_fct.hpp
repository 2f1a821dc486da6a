#pragma once
// The ideal flow completion time: a message alone on an idle path, from its start to the
// arrival of its last ACK. One function for every backend (the twin, the virtual lab's
// soft NICs, a hardware lab's verbs jobs), so a slowdown (FCT / ideal) means the same on
// each and can be compared across them.
//
// Every hop is store and forward: a frame is serialized at the hop's rate, then travels
// its delay, and the next hop starts it when it has fully arrived. For n packets of equal
// frame size s (w = s + the wire overhead) over hops j = 1..L of rate r_j and delay d_j,
// with bottleneck rate r_b, that is
//   ideal = sum_j d_j + n w 8 / r_b + sum_{j != b} w 8 / r_j        (data pipeline)
//         + sum_j (d_j + (ack + overhead) 8 / r_j)                    (the last ACK back)
// i.e. every hop's delay, all packets serialized at the bottleneck, the store and forward
// of one packet per further hop, and the ACK's way back; the replay also handles the
// larger first packet (RETH) and the shorter last one exactly. Serialization is rounded
// up to the picosecond, arrivals up to the nanosecond, as the twin's engine and the
// switch model do (so the twin's flows never beat their ideal).
//
// Pure; no errors (a path of at most max_hops hops).

#include <cstdint>
#include <span>

namespace rocelab::fabric {

// One store-and-forward hop: a transmitter at rate_bps, then delay_ns (propagation, plus
// the next switch's port-to-port latency) to the next receiver.
struct ideal_hop {
  std::int64_t rate_bps = 0;
  std::int64_t delay_ns = 0;
};

// The frames a message is carried in.
struct ideal_frames {
  std::uint32_t mtu_bytes = 4096;
  std::uint32_t data_overhead_bytes = 0;  // headers and trailers of every data frame
  std::uint32_t first_extra_bytes = 0;    // on the first frame only (RDMA WRITE's RETH)
  std::uint32_t ack_bytes = 0;            // the last ACK's frame
  std::uint32_t wire_overhead_bytes = 20; // per frame on the wire (Ethernet: preamble + IFG)
  // HPCC ns-3's serialization: whole ns, truncated (its frames beat the exact time).
  bool truncate_to_ns = false;
};

inline constexpr std::size_t ideal_max_hops = 8;

// The ideal FCT over `path` (hops from the sender's NIC to the receiver's; the ACK comes
// back over the same hops in reverse), in ns. A message of `bytes` is
// twin::packets_of(bytes, mtu) packets, the last one carrying the rest.
[[nodiscard]] std::int64_t ideal_fct_ns(std::span<const ideal_hop> path, std::uint64_t bytes,
                                        const ideal_frames& frames);

}  // namespace rocelab::fabric
