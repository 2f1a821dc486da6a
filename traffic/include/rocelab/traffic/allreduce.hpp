#pragma once
// All-reduce of `bytes` per rank among `ranks` hosts, as the messages a collective
// library sends, with its step dependencies:
//
//   ring (NCCL's ring algorithm; Patarasuk and Yuan, "Bandwidth optimal all-reduce
//     algorithms for clusters of workstations", JPDC 2009): the buffer is cut into n
//     chunks; n-1 reduce-scatter steps then n-1 all-gather steps, in each of which every
//     rank sends one chunk to its right neighbour. 2(n-1) messages of S/n per rank.
//   halving_doubling (Rabenseifner's algorithm; Thakur, Rabenseifner and Gropp,
//     "Optimization of collective communication operations in MPICH", IJHPCA 2005):
//     reduce-scatter by recursive halving (log2 n steps exchanging S/2, S/4 ... S/n with
//     the partner at distance n/2, n/4 ... 1), then all-gather by recursive doubling
//     (S/n ... S/2 at distance 1 ... n/2). Needs a power-of-two rank count.
//   hierarchical_ring (NCCL on rail-optimized multi-NIC servers: rings over rails, the
//     intra-host steps on NVLink): with g = ranks_per_host ranks a server and N = n/g
//     servers, (1) a ring reduce-scatter among each server's g ranks (g-1 steps of S/g,
//     on the local link), after which local rank i holds its server's sum of shard
//     (i+1) mod g; (2) a ring all-reduce of that shard among the N ranks of rail i, one
//     on each server (2(N-1) steps of shard/N, all on rail i: NIC i to NIC i, never
//     across rails); (3) a ring all-gather within each server (g-1 steps of S/g). Rank r
//     is local rank r mod g of server r / g. 2(g-1)/g x S on the local link and
//     2(N-1)/N x S/g on the rail per rank. g = 1 is the ring.
//   Ring and halving-doubling send 2(n-1)/n x S per rank.
//
// Dependencies: a rank's step k+1 is posted when its step k is complete, i.e. the chunk it
// receives in step k has arrived (the data it forwards or reduces next depends on it) and
// its own step-k message has been delivered (one outstanding message per rank and
// direction, like a collective library's single connection per peer per channel).
// Slices (NCCL's pipelining: it moves a buffer through its ring in chunks, so that one
// chunk's step overlaps the next one's): the buffer is cut into `slices` parts, each
// all-reduced by the algorithm on its own, and a rank starts slice p+1 once its first step
// of slice p is complete. On rings over rails one slice's rail phase then overlaps the
// next slice's phase on the local link. 1: no pipelining.
// Iterations run back to back (iteration_gap_ns between them); each is reported with
// twin_context::report_allreduce using the nccl-tests definitions (doc/PERFORMANCE.md in
// NVIDIA/nccl-tests): algbw = S / t, busbw = algbw x 2(n-1)/n, where t runs from the
// iteration's start to the completion of its last message.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic {

enum class allreduce_algorithm : std::uint8_t { ring, halving_doubling, hierarchical_ring };

[[nodiscard]] constexpr const char* to_string(allreduce_algorithm a) noexcept {
  switch (a) {
    case allreduce_algorithm::ring: return "ring";
    case allreduce_algorithm::halving_doubling: return "halving_doubling";
    case allreduce_algorithm::hierarchical_ring: return "hierarchical_ring";
  }
  return "ring";
}

struct allreduce_config {
  allreduce_algorithm algorithm = allreduce_algorithm::ring;
  std::vector<std::uint32_t> ranks;  // rank -> host; empty: hosts 0 .. rank_count-1
  std::uint32_t rank_count = 8;
  std::uint64_t bytes = 64 * 1024 * 1024;  // per rank (nccl-tests "size")
  std::uint32_t iterations = 1;
  std::int64_t start_ns = 0;
  std::int64_t iteration_gap_ns = 0;
  std::int16_t priority = -1;
  // hierarchical_ring: ranks a server (its NICs, topology nics_per_host); the rank count
  // must be a multiple. Ignored by the others.
  std::uint32_t ranks_per_host = 1;
  std::uint32_t slices = 1;  // 1..max_allreduce_slices
};

inline constexpr std::uint32_t max_allreduce_slices = 16;

[[nodiscard]] status validate(const allreduce_config& cfg, std::uint32_t hosts);

// One message of the schedule: what rank `rank` sends in `step`.
struct allreduce_send {
  std::uint32_t to_rank = 0;
  std::uint64_t bytes = 0;
  std::uint32_t from_rank = 0;  // whose step-k message this rank receives
};

// schedule[rank][step]: the static pattern of one iteration (chunks of S/n, the first
// S mod n chunks one byte larger).
[[nodiscard]] std::vector<std::vector<allreduce_send>> allreduce_schedule(allreduce_algorithm algorithm,
                                                                          std::uint32_t ranks, std::uint64_t bytes,
                                                                          std::uint32_t ranks_per_host = 1);

// nccl-tests: algbw = bytes / time; busbw = algbw x 2(n-1)/n; in Gb/s (bits).
[[nodiscard]] allreduce_result allreduce_bandwidth(allreduce_algorithm algorithm, std::uint32_t ranks,
                                                   std::uint64_t bytes, std::int64_t time_ns);

[[nodiscard]] result<std::unique_ptr<fabric::twin::workload>> make_allreduce(const allreduce_config& cfg,
                                                                             std::uint32_t hosts);

}  // namespace rocelab::traffic
