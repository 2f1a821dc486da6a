#pragma once
// Per-packet path selection at an Ultra Ethernet sender: every packet carries an entropy
// value (UEC 1.0: the entropy field the switches hash in place of the 5-tuple's source
// port), so the sender, not the switch, spreads a flow over the fabric's paths.
//   ecmp:      one entropy for the whole flow (the flow hashes onto one path, as RoCE);
//   oblivious: a fresh pseudo-random entropy per packet (spraying);
//   reps:      Recycled Entropy Packet Spraying (Bonato et al., "REPS", 2024; the UEC
//              load balancer of UEC's simulator): entropies whose ACK came back unmarked
//              are kept in a small ring and re-used; with none to re-use the sender
//              explores a fresh random one. Marked or trimmed paths are not re-used.
// Adaptive routing (adaptive_routing.hpp) is the switch-side alternative.
//
// Pure: randomness comes from the seed. Single-threaded.

#include <cstdint>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::fabric {

enum class load_balancing : std::uint8_t { ecmp, oblivious, reps };
[[nodiscard]] const char* to_string(load_balancing lb);
[[nodiscard]] result<load_balancing> parse_load_balancing(std::string_view text);  // "ecmp" | "oblivious" | "reps"

class entropy_picker {
 public:
  // `flow_entropy`: the entropy ecmp uses for every packet. `reps_slots`: how many good
  // entropies REPS remembers (0 is taken as 1).
  entropy_picker(load_balancing kind, std::uint64_t seed, std::uint16_t flow_entropy, std::uint32_t reps_slots = 64);

  // The entropy of the next packet.
  [[nodiscard]] std::uint16_t next();
  // The ACK of a packet sent with `entropy` returned; `ecn_ce`: the packet was marked.
  void on_ack(std::uint16_t entropy, bool ecn_ce);

  [[nodiscard]] load_balancing kind() const { return kind_; }
  [[nodiscard]] std::uint64_t recycled() const { return recycled_; }  // packets sent on a re-used entropy

 private:
  std::uint16_t random_entropy();

  load_balancing kind_;
  std::uint64_t rng_;
  std::uint16_t flow_entropy_;
  std::vector<std::uint16_t> ring_;
  std::uint32_t head_ = 0, count_ = 0;
  std::uint64_t recycled_ = 0;
};

}  // namespace rocelab::fabric
