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
//   tree (NCCL's tree algorithm; Sanders, Speck and Traeff, "Two-tree algorithms for full
//     bandwidth broadcast, reduction and scan", Parallel Computing 2009): a binary tree over
//     the ranks, laid out by lowest set bit as NCCL lays out its trees (rank 0 the root,
//     odd ranks the leaves). Every rank receives its children's data, reduces it with its
//     own and sends the sum to its parent; the root's sum then flows back down. Each
//     message carries the whole slice, so a rank's sends do not shrink with n: the tree
//     trades bandwidth for 2 log2(n) steps of latency, where a ring takes 2(n-1). Slices
//     alternate between the tree and its complement (mirrored for an even rank count,
//     shifted by one for an odd one), in which the leaves of the first are inner ranks:
//     with an even number of slices each tree carries half of the data, as in NCCL's
//     double binary tree; with one slice only the first tree runs.
//   hierarchical_tree (NCCL's trees on rail-optimized servers): hierarchical_ring with
//     phase (2) a tree over the servers of rail i instead of a ring: the rail's servers
//     reduce the shard up the tree and broadcast it down. Rail i of slice p uses tree
//     (i + p) mod 2, so the rails of a server balance the two trees. g = 1 is the tree.
//   Ring and halving-doubling send 2(n-1)/n x S per rank.
//
// Dependencies: a rank's schedule is a list of steps, each sending zero or more messages
// when it begins and receiving a known number of messages. Step k+1 begins when step k is
// complete, i.e. what it receives in step k has arrived (the data it forwards or reduces
// next depends on it) and its own step-k messages have been delivered (one outstanding
// message per rank and direction, like a collective library's single connection per peer
// per channel). On a ring every step sends one message and receives one; in a tree a rank
// receives from its children in one step and sends to its parent in the next.
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
#include <span>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic {

enum class allreduce_algorithm : std::uint8_t { ring, halving_doubling, hierarchical_ring, tree, hierarchical_tree };

inline constexpr allreduce_algorithm all_allreduce_algorithms[] = {
    allreduce_algorithm::ring, allreduce_algorithm::halving_doubling, allreduce_algorithm::hierarchical_ring,
    allreduce_algorithm::tree, allreduce_algorithm::hierarchical_tree};

[[nodiscard]] constexpr const char* to_string(allreduce_algorithm a) noexcept {
  switch (a) {
    case allreduce_algorithm::ring: return "ring";
    case allreduce_algorithm::halving_doubling: return "halving_doubling";
    case allreduce_algorithm::hierarchical_ring: return "hierarchical_ring";
    case allreduce_algorithm::tree: return "tree";
    case allreduce_algorithm::hierarchical_tree: return "hierarchical_tree";
  }
  return "ring";
}

// The algorithms that run a phase in every server on the local link, around one on each rail.
[[nodiscard]] constexpr bool is_hierarchical(allreduce_algorithm a) noexcept {
  return a == allreduce_algorithm::hierarchical_ring || a == allreduce_algorithm::hierarchical_tree;
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
  // hierarchical_ring and hierarchical_tree: ranks a server (its NICs, topology
  // nics_per_host); the rank count must be a multiple. Ignored by the others.
  std::uint32_t ranks_per_host = 1;
  std::uint32_t slices = 1;  // 1..max_allreduce_slices
};

inline constexpr std::uint32_t max_allreduce_slices = 16;

[[nodiscard]] status validate(const allreduce_config& cfg, std::uint32_t hosts);

// One message of a step: to which rank, how large, and in which of the receiver's steps
// it arrives.
struct allreduce_send {
  std::uint32_t to_rank = 0;
  std::uint32_t to_step = 0;
  std::uint64_t bytes = 0;
};
static_assert(sizeof(allreduce_send) == 16);

// A step: its sends (allreduce_plan::sends_of) and how many messages it receives.
struct allreduce_step {
  std::uint32_t first_send = 0;  // index into allreduce_plan::sends
  std::uint16_t sends = 0;
  std::uint16_t receives = 0;
};
static_assert(sizeof(allreduce_step) == 8);

// One iteration's static pattern of one slice (chunks of S/n, the first S mod n chunks one
// byte larger), flat: a 1,024-rank ring is two million steps.
struct allreduce_plan {
  std::vector<std::uint32_t> first_step;  // per rank, into steps; then one past the last rank's
  std::vector<allreduce_step> steps;
  std::vector<allreduce_send> sends;

  [[nodiscard]] std::uint32_t ranks() const { return static_cast<std::uint32_t>(first_step.size()) - 1; }
  [[nodiscard]] std::span<const allreduce_step> steps_of(std::uint32_t rank) const {
    return {steps.data() + first_step[rank], first_step[rank + 1] - first_step[rank]};
  }
  [[nodiscard]] std::span<const allreduce_send> sends_of(const allreduce_step& s) const {
    return {sends.data() + s.first_send, s.sends};
  }
};

// The plan of slice `slice` (the trees alternate by slice; the others ignore it).
[[nodiscard]] allreduce_plan allreduce_schedule(allreduce_algorithm algorithm, std::uint32_t ranks, std::uint64_t bytes,
                                                std::uint32_t ranks_per_host = 1, std::uint32_t slice = 0);

// NCCL's binary tree over positions 0..m-1: each position's parent (m for the root,
// position 0). Exposed for its tests.
[[nodiscard]] std::vector<std::uint32_t> binary_tree_parents(std::uint32_t m);

// nccl-tests: algbw = bytes / time; busbw = algbw x 2(n-1)/n; in Gb/s (bits).
[[nodiscard]] allreduce_result allreduce_bandwidth(allreduce_algorithm algorithm, std::uint32_t ranks,
                                                   std::uint64_t bytes, std::int64_t time_ns);

[[nodiscard]] result<std::unique_ptr<fabric::twin::workload>> make_allreduce(const allreduce_config& cfg,
                                                                             std::uint32_t hosts);

}  // namespace rocelab::traffic
