#include "rocelab/traffic/allreduce.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace rocelab::traffic {
namespace {

using fabric::twin::message;
using fabric::twin::twin_context;

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

// Chunk c of n when S is cut into n nearly equal chunks.
std::uint64_t chunk_bytes(std::uint64_t total, std::uint32_t n, std::uint32_t c) {
  return total / n + (c < total % n ? 1 : 0);
}

std::uint32_t mod(std::int64_t a, std::uint32_t n) {
  const std::int64_t r = a % static_cast<std::int64_t>(n);
  return static_cast<std::uint32_t>(r < 0 ? r + n : r);
}

// A plan written rank by rank, step by step.
class plan_builder {
 public:
  explicit plan_builder(std::uint32_t ranks) { plan_.first_step.reserve(ranks + 1); }
  void begin_rank() { plan_.first_step.push_back(static_cast<std::uint32_t>(plan_.steps.size())); }
  [[nodiscard]] std::uint32_t steps_of_rank() const {
    return static_cast<std::uint32_t>(plan_.steps.size()) - plan_.first_step.back();
  }
  // A step that begins by sending `sends` and receives `receives` messages.
  void step(std::uint16_t receives, std::span<const allreduce_send> sends = {}) {
    const auto first = static_cast<std::uint32_t>(plan_.sends.size());
    plan_.steps.push_back({first, static_cast<std::uint16_t>(sends.size()), receives});
    plan_.sends.insert(plan_.sends.end(), sends.begin(), sends.end());
  }
  allreduce_plan finish() {
    plan_.first_step.push_back(static_cast<std::uint32_t>(plan_.steps.size()));
    return std::move(plan_);
  }

 private:
  allreduce_plan plan_;
};

// The size-1 steps of one phase of a ring all-reduce of `total` bytes cut into `size`
// chunks, for the member at `position`, which sends to `to` and receives from its left
// neighbour. Reduce-scatter step k sends chunk position-k (partially reduced) and receives
// chunk position-1-k; all-gather step k forwards the fully reduced chunk position+1-k.
// The receiver takes step k's message in its own step to_base + k.
enum class ring_phase : std::uint8_t { reduce_scatter, all_gather };

void ring_steps(plan_builder& out, ring_phase phase, std::uint32_t position, std::uint32_t size, std::uint64_t total,
                std::uint32_t to, std::uint32_t to_base) {
  const std::int64_t first = std::int64_t{position} + (phase == ring_phase::all_gather ? 1 : 0);
  for (std::uint32_t k = 0; k + 1 < size; ++k) {
    const allreduce_send m{to, to_base + k, chunk_bytes(total, size, mod(first - k, size))};
    out.step(1, {&m, 1});
  }
}

// One of the two trees over m members (servers, or ranks when g = 1): tree 0 is NCCL's
// binary tree, tree 1 its complement (mirrored for even m, shifted by one for odd m), in
// which tree 0's leaves (odd positions) are inner members.
struct member_tree {
  std::vector<std::uint32_t> parent;                 // per member; m for the root
  std::vector<std::vector<std::uint32_t>> children;  // per member, at most two

  member_tree(std::uint32_t m, std::uint32_t which) : parent(m, m), children(m) {
    auto member_at = [&](std::uint32_t pos) { return which == 0 ? pos : m % 2 == 0 ? m - 1 - pos : (pos + 1) % m; };
    const std::vector<std::uint32_t> up = binary_tree_parents(m);
    for (std::uint32_t pos = 0; pos < m; ++pos) {
      if (up[pos] == m) continue;
      parent[member_at(pos)] = member_at(up[pos]);
      children[member_at(up[pos])].push_back(member_at(pos));
    }
  }
  // A member's steps in the tree: receive its children's sums, send its own up, receive
  // the result from its parent, send it down; the root and the leaves skip what they
  // lack. So a parent takes its children's messages in its first tree step, and a child
  // the result in the step after the one that sent up.
  [[nodiscard]] bool has_parent(std::uint32_t x) const { return parent[x] != parent.size(); }
  [[nodiscard]] std::uint32_t down_receive(std::uint32_t x) const { return (children[x].empty() ? 0 : 1) + 1; }
  [[nodiscard]] std::uint32_t steps(std::uint32_t x) const {
    return (children[x].empty() ? 0 : 2) + (has_parent(x) ? 2 : 0);
  }
};

// NCCL's rings (g = 1: the ring) and trees (g = 1: the tree) over rails: see the header.
allreduce_plan rails_schedule(bool tree, std::uint32_t n, std::uint64_t bytes, std::uint32_t g, std::uint32_t slice) {
  const std::uint32_t servers = n / g;
  std::vector<member_tree> trees;
  if (tree) {
    trees.emplace_back(servers, 0);
    trees.emplace_back(servers, 1);
  }
  // Rank r's tree on its rail, and the number of steps its rail phase takes.
  auto tree_of = [&](std::uint32_t r) -> const member_tree& { return trees[(r % g + slice) % 2]; };
  auto rail_steps = [&](std::uint32_t r) { return tree ? tree_of(r).steps(r / g) : 2 * (servers - 1); };
  plan_builder out(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    out.begin_rank();
    const std::uint32_t server = r / g, i = r % g;
    const std::uint32_t right = server * g + (i + 1) % g;
    const std::uint32_t next = (server + 1) % servers * g + i;
    // (1) Reduce-scatter within the server; local rank i then holds the server's sum of
    // chunk i+1 of g.
    ring_steps(out, ring_phase::reduce_scatter, i, g, bytes, right, 0);
    // (2) That chunk all-reduced along rail i: a ring or a tree over the servers.
    const std::uint64_t shard = chunk_bytes(bytes, g, (i + 1) % g);
    const std::uint32_t base = g - 1;
    if (!tree) {
      ring_steps(out, ring_phase::reduce_scatter, server, servers, shard, next, base);
      ring_steps(out, ring_phase::all_gather, server, servers, shard, next, base + servers - 1);
    } else {
      const member_tree& t = tree_of(r);
      const auto& kids = t.children[server];
      auto rank_of = [&](std::uint32_t member) { return member * g + i; };
      if (!kids.empty()) out.step(static_cast<std::uint16_t>(kids.size()));  // the children's sums
      if (t.has_parent(server)) {
        const allreduce_send up{rank_of(t.parent[server]), base, shard};
        out.step(0, {&up, 1});
        out.step(1);  // the result, from the parent
      }
      if (!kids.empty()) {
        std::array<allreduce_send, 2> down{};
        for (std::size_t c = 0; c < kids.size(); ++c)
          down[c] = {rank_of(kids[c]), base + t.down_receive(kids[c]), shard};
        out.step(0, {down.data(), kids.size()});
      }
    }
    // (3) All-gather within the server; the right neighbour's rail phase may be longer or
    // shorter than this rank's (a tree's leaf beside an inner member).
    ring_steps(out, ring_phase::all_gather, i, g, bytes, right, base + rail_steps(right));
  }
  return out.finish();
}

// Tag layout: send (2 bits) | iteration (22 bits) | step (20 bits) | slice x ranks + rank
// (20 bits). The send is the message's index in its step (a tree sends to two children).
constexpr int step_shift = 20, iteration_shift = 40, send_shift = 62;
constexpr std::uint64_t field_mask = (1ULL << 20) - 1;
constexpr std::uint64_t iteration_mask = (1ULL << 22) - 1;

class allreduce_workload final : public fabric::twin::workload {
 public:
  allreduce_workload(allreduce_config cfg, std::vector<std::uint32_t> hosts)
      : cfg_(std::move(cfg)), hosts_(std::move(hosts)), n_(static_cast<std::uint32_t>(hosts_.size())) {
    for (std::uint32_t p = 0; p < cfg_.slices; ++p) {
      plans_.push_back(
          allreduce_schedule(cfg_.algorithm, n_, chunk_bytes(cfg_.bytes, cfg_.slices, p), cfg_.ranks_per_host, p));
      slice_base_.push_back(steps_);
      steps_ += plans_.back().steps.size();
      messages_ += plans_.back().sends.size();
    }
  }

  void start(twin_context& ctx) override { start_iteration(ctx, 0, cfg_.start_ns); }

  void on_message_complete(std::uint64_t, const message& m, const flow_record&, twin_context& ctx) override {
    if (((m.tag >> iteration_shift) & iteration_mask) != iteration_) return;
    const auto lane = static_cast<std::uint32_t>(m.tag & field_mask);
    const std::uint32_t slice = lane / n_, rank = lane % n_;
    const auto step = static_cast<std::uint32_t>((m.tag >> step_shift) & field_mask);
    const allreduce_plan& plan = plans_[slice];
    const allreduce_send& send = plan.sends_of(plan.steps_of(rank)[step])[m.tag >> send_shift];
    ++sent_[index(slice, rank, step)];
    ++received_[index(slice, send.to_rank, send.to_step)];
    ++completed_;
    try_advance(ctx, slice, rank);
    if (send.to_rank != rank) try_advance(ctx, slice, send.to_rank);
    if (completed_ < messages_) return;

    const std::int64_t now = ctx.now_ns();
    ctx.report_allreduce(allreduce_bandwidth(cfg_.algorithm, n_, cfg_.bytes, now - iteration_start_ns_));
    if (iteration_ + 1 < cfg_.iterations) start_iteration(ctx, iteration_ + 1, now + cfg_.iteration_gap_ns);
  }

 private:
  [[nodiscard]] std::size_t index(std::uint32_t slice, std::uint32_t rank, std::uint32_t step) const {
    return slice_base_[slice] + plans_[slice].first_step[rank] + step;
  }
  [[nodiscard]] std::uint32_t steps_of(std::uint32_t slice, std::uint32_t rank) const {
    return static_cast<std::uint32_t>(plans_[slice].steps_of(rank).size());
  }
  [[nodiscard]] bool done(std::uint32_t slice, std::uint32_t rank, std::uint32_t step) const {
    const std::size_t i = index(slice, rank, step);
    const allreduce_step& s = plans_[slice].steps_of(rank)[step];
    return sent_[i] == s.sends && received_[i] == s.receives;
  }

  void start_iteration(twin_context& ctx, std::uint32_t iteration, std::int64_t at_ns) {
    iteration_ = iteration;
    iteration_start_ns_ = at_ns;
    completed_ = 0;
    sent_.assign(steps_, 0);
    received_.assign(steps_, 0);
    next_step_.assign(static_cast<std::size_t>(cfg_.slices) * n_, 0);
    for (std::uint32_t r = 0; r < n_; ++r) post(ctx, 0, r, 0, at_ns);
  }

  // Begins the rank's next steps of `slice` while the step before is complete (a step
  // that only receives may be complete as it begins); the rank's first step of the next
  // slice once this slice's first step is (the pipeline: each slice one step behind the
  // one before it).
  void try_advance(twin_context& ctx, std::uint32_t slice, std::uint32_t rank) {
    const std::size_t lane = static_cast<std::size_t>(slice) * n_ + rank;
    for (;;) {
      const std::uint32_t s = next_step_[lane];
      if (s == 0 || s >= steps_of(slice, rank) || !done(slice, rank, s - 1)) break;
      post(ctx, slice, rank, s, ctx.now_ns());
    }
    if (slice + 1 < cfg_.slices && next_step_[lane + n_] == 0 && done(slice, rank, 0)) {
      post(ctx, slice + 1, rank, 0, ctx.now_ns());
      try_advance(ctx, slice + 1, rank);
    }
  }

  void post(twin_context& ctx, std::uint32_t slice, std::uint32_t rank, std::uint32_t step, std::int64_t at_ns) {
    next_step_[static_cast<std::size_t>(slice) * n_ + rank] = step + 1;
    const allreduce_plan& plan = plans_[slice];
    const auto sends = plan.sends_of(plan.steps_of(rank)[step]);
    for (std::size_t j = 0; j < sends.size(); ++j) {
      message m;
      m.src = hosts_[rank];
      m.dst = hosts_[sends[j].to_rank];
      m.bytes = sends[j].bytes;
      m.start_ns = at_ns;
      m.kind = workload_kind::allreduce;
      m.priority = cfg_.priority;
      m.tag = (static_cast<std::uint64_t>(j) << send_shift) |
              (static_cast<std::uint64_t>(iteration_) << iteration_shift) |
              (static_cast<std::uint64_t>(step) << step_shift) | (static_cast<std::uint64_t>(slice) * n_ + rank);
      ctx.post(m);
    }
  }

  allreduce_config cfg_;
  std::vector<std::uint32_t> hosts_;
  std::uint32_t n_;
  std::vector<allreduce_plan> plans_;     // per slice
  std::vector<std::size_t> slice_base_;   // per slice: its first step in sent_ and received_
  std::size_t steps_ = 0, messages_ = 0;  // per iteration, all slices
  std::uint32_t iteration_ = 0;
  std::int64_t iteration_start_ns_ = 0;
  std::size_t completed_ = 0;
  std::vector<std::uint8_t> sent_, received_;  // per step: its messages delivered, its messages arrived
  std::vector<std::uint32_t> next_step_;       // [slice x ranks + rank]
};

}  // namespace

status validate(const allreduce_config& cfg, std::uint32_t hosts) {
  const std::size_t n = cfg.ranks.empty() ? cfg.rank_count : cfg.ranks.size();
  if (n < 2) return bad("ranks must be >= 2");
  if (n > field_mask) return bad("too many ranks");
  if (cfg.ranks.empty() && cfg.rank_count > hosts)
    return bad("ranks " + std::to_string(cfg.rank_count) + " > hosts " + std::to_string(hosts));
  std::vector<bool> seen(hosts, false);
  for (std::uint32_t h : cfg.ranks) {
    if (h >= hosts) return bad("rank host " + std::to_string(h) + " is not a host");
    if (seen[h]) return bad("host " + std::to_string(h) + " holds two ranks");
    seen[h] = true;
  }
  if (cfg.algorithm == allreduce_algorithm::halving_doubling && !std::has_single_bit(n))
    return bad("halving_doubling needs a power-of-two rank count, not " + std::to_string(n));
  if (is_hierarchical(cfg.algorithm) && (cfg.ranks_per_host < 1 || n % cfg.ranks_per_host != 0))
    return bad(std::string(to_string(cfg.algorithm)) + ": " + std::to_string(n) + " ranks are not whole servers of " +
               std::to_string(cfg.ranks_per_host));
  if (cfg.slices < 1 || cfg.slices > max_allreduce_slices)
    return bad("slices must be 1.." + std::to_string(max_allreduce_slices));
  if (n * cfg.slices > field_mask + 1) return bad("too many ranks x slices");
  if (cfg.bytes < n * cfg.slices) return bad("bytes must be at least ranks x slices (one byte per chunk)");
  if (cfg.iterations == 0) return bad("iterations must be >= 1");
  if (cfg.iterations > (1U << 22)) return bad("too many iterations");
  if (cfg.start_ns < 0 || cfg.iteration_gap_ns < 0) return bad("negative time");
  if (cfg.priority < -1 || cfg.priority > 7) return bad("priority must be 0..7 (or -1 for the NIC's)");
  return status::success();
}

std::vector<std::uint32_t> binary_tree_parents(std::uint32_t m) {
  // In the implicit in-order tree over the positive integers, p with lowest set bit b is
  // the child of (p ^ b) | (b << 1). A position hangs off its nearest ancestor below m;
  // past the largest power of two below m the ancestors are powers of two, all >= m, and
  // that power of two hangs off position 0, the root. Every position then has at most two
  // children: an ancestor at or past m has its right subtree past m too, so at most one
  // member of its subtree takes its place.
  std::vector<std::uint32_t> parent(m, m);
  for (std::uint32_t pos = 1; pos < m; ++pos) {
    std::uint64_t q = pos;
    for (;;) {
      const std::uint64_t b = q & (~q + 1);
      q = (q ^ b) | (b << 1);
      if (q < m) break;
      if (std::has_single_bit(q)) {
        q = 0;
        break;
      }
    }
    parent[pos] = static_cast<std::uint32_t>(q);
  }
  return parent;
}

allreduce_plan allreduce_schedule(allreduce_algorithm algorithm, std::uint32_t n, std::uint64_t bytes,
                                  std::uint32_t ranks_per_host, std::uint32_t slice) {
  const bool tree = algorithm == allreduce_algorithm::tree || algorithm == allreduce_algorithm::hierarchical_tree;
  // The ring is the hierarchical ring with one rank a server (no steps within a server,
  // one ring over all ranks); the tree likewise.
  if (algorithm != allreduce_algorithm::halving_doubling)
    return rails_schedule(tree, n, bytes, is_hierarchical(algorithm) ? std::max(ranks_per_host, 1u) : 1, slice);
  // Halving-doubling over n = 2^m blocks; block b's size is chunk_bytes(b).
  const int m = std::countr_zero(n);
  auto blocks_bytes = [&](std::uint32_t r, int shift, bool flip_bit, int bit) {
    // Sum of the blocks b with b >> shift == r >> shift, restricted (when flip_bit) to the
    // half whose `bit` differs from r's.
    std::uint64_t total = 0;
    for (std::uint32_t b = 0; b < n; ++b) {
      if ((b >> shift) != (r >> shift)) continue;
      if (flip_bit && (((b >> bit) & 1U) == ((r >> bit) & 1U))) continue;
      total += chunk_bytes(bytes, n, b);
    }
    return total;
  };
  plan_builder out(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    out.begin_rank();
    // Reduce-scatter by recursive halving: at step j the rank holds the blocks sharing its
    // top j bits and gives away the half that differs in bit m-1-j to that bit's partner,
    // who takes it in the same step.
    for (int j = 0; j < m; ++j) {
      const int bit = m - 1 - j;
      const std::uint32_t partner = r ^ (1U << bit);
      const allreduce_send s{partner, out.steps_of_rank(), blocks_bytes(r, m - j, true, bit)};
      out.step(1, {&s, 1});
    }
    // All-gather by recursive doubling: at step j it sends the 2^j reduced blocks it has.
    for (int j = 0; j < m; ++j) {
      const std::uint32_t partner = r ^ (1U << j);
      const allreduce_send s{partner, out.steps_of_rank(), blocks_bytes(r, j, false, 0)};
      out.step(1, {&s, 1});
    }
  }
  return out.finish();
}

allreduce_result allreduce_bandwidth(allreduce_algorithm algorithm, std::uint32_t ranks, std::uint64_t bytes,
                                     std::int64_t time_ns) {
  allreduce_result r;
  r.algorithm = to_string(algorithm);
  r.ranks = ranks;
  r.bytes = bytes;
  r.time_ns = time_ns;
  if (time_ns > 0 && ranks > 0) {
    // bytes x 8 bits / ns = Gb/s.
    r.algbw_gbps = static_cast<double>(bytes) * 8.0 / static_cast<double>(time_ns);
    r.busbw_gbps = r.algbw_gbps * 2.0 * (ranks - 1) / ranks;
  }
  return r;
}

result<std::unique_ptr<fabric::twin::workload>> make_allreduce(const allreduce_config& cfg, std::uint32_t hosts) {
  if (auto st = validate(cfg, hosts); !st.ok()) return st.with_context("allreduce");
  std::vector<std::uint32_t> rank_hosts = cfg.ranks;
  if (rank_hosts.empty())
    for (std::uint32_t r = 0; r < cfg.rank_count; ++r) rank_hosts.push_back(r);
  return std::unique_ptr<fabric::twin::workload>(std::make_unique<allreduce_workload>(cfg, std::move(rank_hosts)));
}

}  // namespace rocelab::traffic
