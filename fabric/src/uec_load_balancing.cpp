#include "rocelab/fabric/uec_load_balancing.hpp"

#include <string>

namespace rocelab::fabric {

const char* to_string(load_balancing lb) {
  switch (lb) {
    case load_balancing::ecmp: return "ecmp";
    case load_balancing::oblivious: return "oblivious";
    case load_balancing::reps: return "reps";
  }
  return "ecmp";
}

result<load_balancing> parse_load_balancing(std::string_view text) {
  if (text == "ecmp") return load_balancing::ecmp;
  if (text == "oblivious" || text == "spray") return load_balancing::oblivious;
  if (text == "reps") return load_balancing::reps;
  return status(error_code::invalid_argument,
                "load balancing '" + std::string(text) + "': expects ecmp, oblivious or reps");
}

entropy_picker::entropy_picker(load_balancing kind, std::uint64_t seed, std::uint16_t flow_entropy,
                               std::uint32_t reps_slots)
    : kind_(kind), rng_(seed), flow_entropy_(flow_entropy) {
  if (kind_ == load_balancing::reps) ring_.assign(reps_slots == 0 ? 1 : reps_slots, 0);
}

std::uint16_t entropy_picker::random_entropy() {
  // splitmix64 (Steele, Lea, Flood 2014).
  std::uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::uint16_t>(z ^ (z >> 31));
}

std::uint16_t entropy_picker::next() {
  switch (kind_) {
    case load_balancing::ecmp: return flow_entropy_;
    case load_balancing::oblivious: return random_entropy();
    case load_balancing::reps:
      if (count_ > 0) {
        const std::uint16_t e = ring_[head_];
        head_ = (head_ + 1) % static_cast<std::uint32_t>(ring_.size());
        --count_;
        ++recycled_;
        return e;
      }
      return random_entropy();
  }
  return flow_entropy_;
}

void entropy_picker::on_ack(std::uint16_t entropy, bool ecn_ce) {
  if (kind_ != load_balancing::reps || ecn_ce) return;
  const auto n = static_cast<std::uint32_t>(ring_.size());
  if (count_ == n) return;  // full: the newest good path is dropped, the ring keeps its order
  ring_[(head_ + count_) % n] = entropy;
  ++count_;
}

}  // namespace rocelab::fabric
