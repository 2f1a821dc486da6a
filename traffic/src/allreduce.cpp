#include "rocelab/traffic/allreduce.hpp"

#include <algorithm>
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

// The size-1 steps of one phase of a ring all-reduce of `total` bytes cut into `size`
// chunks, for the member at `position`, which sends to `to` and receives from `from`.
// Reduce-scatter step k sends chunk position-k (partially reduced) and receives chunk
// position-1-k; all-gather step k forwards the fully reduced chunk position+1-k.
enum class ring_phase : std::uint8_t { reduce_scatter, all_gather };

void ring_steps(std::vector<allreduce_send>& out, ring_phase phase, std::uint32_t position, std::uint32_t size,
                std::uint64_t total, std::uint32_t to, std::uint32_t from) {
  const std::int64_t first = std::int64_t{position} + (phase == ring_phase::all_gather ? 1 : 0);
  for (std::uint32_t k = 0; k + 1 < size; ++k) out.push_back({to, chunk_bytes(total, size, mod(first - k, size)), from});
}

// Tag layout: iteration (24 bits) | step (20 bits) | slice x ranks + rank (20 bits).
constexpr int step_shift = 20, iteration_shift = 40;
constexpr std::uint64_t field_mask = (1ULL << 20) - 1;

class allreduce_workload final : public fabric::twin::workload {
 public:
  allreduce_workload(allreduce_config cfg, std::vector<std::uint32_t> hosts)
      : cfg_(std::move(cfg)), hosts_(std::move(hosts)), n_(static_cast<std::uint32_t>(hosts_.size())) {
    for (std::uint32_t p = 0; p < cfg_.slices; ++p)
      schedules_.push_back(
          allreduce_schedule(cfg_.algorithm, n_, chunk_bytes(cfg_.bytes, cfg_.slices, p), cfg_.ranks_per_host));
    steps_ = static_cast<std::uint32_t>(schedules_.front().front().size());
  }

  void start(twin_context& ctx) override { start_iteration(ctx, 0, cfg_.start_ns); }

  void on_message_complete(std::uint64_t, const message& m, const flow_record&, twin_context& ctx) override {
    if ((m.tag >> iteration_shift) != iteration_) return;
    const auto lane = static_cast<std::uint32_t>(m.tag & field_mask);
    const std::uint32_t slice = lane / n_, rank = lane % n_;
    const auto step = static_cast<std::uint32_t>((m.tag >> step_shift) & field_mask);
    const std::uint32_t to = schedules_[slice][rank][step].to_rank;
    sent_[index(slice, rank, step)] = true;
    received_[index(slice, to, step)] = true;
    ++completed_;
    try_advance(ctx, slice, rank);
    if (to != rank) try_advance(ctx, slice, to);
    if (completed_ < static_cast<std::size_t>(cfg_.slices) * n_ * steps_) return;

    const std::int64_t now = ctx.now_ns();
    ctx.report_allreduce(allreduce_bandwidth(cfg_.algorithm, n_, cfg_.bytes, now - iteration_start_ns_));
    if (iteration_ + 1 < cfg_.iterations) start_iteration(ctx, iteration_ + 1, now + cfg_.iteration_gap_ns);
  }

 private:
  [[nodiscard]] std::size_t index(std::uint32_t slice, std::uint32_t rank, std::uint32_t step) const {
    return (static_cast<std::size_t>(slice) * n_ + rank) * steps_ + step;
  }
  [[nodiscard]] bool done(std::uint32_t slice, std::uint32_t rank, std::uint32_t step) const {
    return sent_[index(slice, rank, step)] && received_[index(slice, rank, step)];
  }

  void start_iteration(twin_context& ctx, std::uint32_t iteration, std::int64_t at_ns) {
    iteration_ = iteration;
    iteration_start_ns_ = at_ns;
    completed_ = 0;
    const std::size_t lanes = static_cast<std::size_t>(cfg_.slices) * n_;
    sent_.assign(lanes * steps_, false);
    received_.assign(lanes * steps_, false);
    next_step_.assign(lanes, 0);
    for (std::uint32_t r = 0; r < n_; ++r) post(ctx, 0, r, 0, at_ns);
  }

  // Posts the rank's next step of `slice` once its previous step is complete; the rank's
  // first step of the next slice once this slice's first step is (the pipeline: each
  // slice one step behind the one before it).
  void try_advance(twin_context& ctx, std::uint32_t slice, std::uint32_t rank) {
    const std::uint32_t s = next_step_[static_cast<std::size_t>(slice) * n_ + rank];
    if (s < steps_ && s > 0 && done(slice, rank, s - 1)) post(ctx, slice, rank, s, ctx.now_ns());
    if (slice + 1 < cfg_.slices && next_step_[static_cast<std::size_t>(slice + 1) * n_ + rank] == 0 &&
        done(slice, rank, 0))
      post(ctx, slice + 1, rank, 0, ctx.now_ns());
  }

  void post(twin_context& ctx, std::uint32_t slice, std::uint32_t rank, std::uint32_t step, std::int64_t at_ns) {
    const allreduce_send& send = schedules_[slice][rank][step];
    message m;
    m.src = hosts_[rank];
    m.dst = hosts_[send.to_rank];
    m.bytes = send.bytes;
    m.start_ns = at_ns;
    m.kind = workload_kind::allreduce;
    m.priority = cfg_.priority;
    m.tag = (static_cast<std::uint64_t>(iteration_) << iteration_shift) |
            (static_cast<std::uint64_t>(step) << step_shift) | (static_cast<std::uint64_t>(slice) * n_ + rank);
    next_step_[static_cast<std::size_t>(slice) * n_ + rank] = step + 1;
    ctx.post(m);
  }

  allreduce_config cfg_;
  std::vector<std::uint32_t> hosts_;
  std::uint32_t n_;
  std::vector<std::vector<std::vector<allreduce_send>>> schedules_;  // [slice][rank][step]
  std::uint32_t steps_ = 0;
  std::uint32_t iteration_ = 0;
  std::int64_t iteration_start_ns_ = 0;
  std::size_t completed_ = 0;
  std::vector<bool> sent_, received_;
  std::vector<std::uint32_t> next_step_;  // [slice x ranks + rank]
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
  if (cfg.algorithm == allreduce_algorithm::hierarchical_ring &&
      (cfg.ranks_per_host < 1 || n % cfg.ranks_per_host != 0))
    return bad("hierarchical_ring: " + std::to_string(n) + " ranks are not whole servers of " +
               std::to_string(cfg.ranks_per_host));
  if (cfg.slices < 1 || cfg.slices > max_allreduce_slices)
    return bad("slices must be 1.." + std::to_string(max_allreduce_slices));
  if (n * cfg.slices > field_mask + 1) return bad("too many ranks x slices");
  if (cfg.bytes < n * cfg.slices) return bad("bytes must be at least ranks x slices (one byte per chunk)");
  if (cfg.iterations == 0) return bad("iterations must be >= 1");
  if (cfg.iterations > (1U << 23)) return bad("too many iterations");
  if (cfg.start_ns < 0 || cfg.iteration_gap_ns < 0) return bad("negative time");
  if (cfg.priority < -1 || cfg.priority > 7) return bad("priority must be 0..7 (or -1 for the NIC's)");
  return status::success();
}

std::vector<std::vector<allreduce_send>> allreduce_schedule(allreduce_algorithm algorithm, std::uint32_t n,
                                                            std::uint64_t bytes, std::uint32_t ranks_per_host) {
  std::vector<std::vector<allreduce_send>> s(n);
  if (algorithm != allreduce_algorithm::halving_doubling) {
    // The ring is the hierarchical ring with one rank a server: no steps within a server
    // and one ring over all ranks.
    const std::uint32_t g = algorithm == allreduce_algorithm::hierarchical_ring ? std::max(ranks_per_host, 1u) : 1;
    const std::uint32_t servers = n / g;
    for (std::uint32_t r = 0; r < n; ++r) {
      const std::uint32_t server = r / g, i = r % g;
      const std::uint32_t right = server * g + (i + 1) % g, left = server * g + (i + g - 1) % g;
      const std::uint32_t next = (server + 1) % servers * g + i, prev = (server + servers - 1) % servers * g + i;
      // (1) Reduce-scatter within the server; local rank i then holds the server's sum of
      // chunk i+1 of g.
      ring_steps(s[r], ring_phase::reduce_scatter, i, g, bytes, right, left);
      // (2) That chunk all-reduced along rail i: a ring over the servers.
      const std::uint64_t shard = chunk_bytes(bytes, g, (i + 1) % g);
      ring_steps(s[r], ring_phase::reduce_scatter, server, servers, shard, next, prev);
      ring_steps(s[r], ring_phase::all_gather, server, servers, shard, next, prev);
      // (3) All-gather within the server.
      ring_steps(s[r], ring_phase::all_gather, i, g, bytes, right, left);
    }
    return s;
  }
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
  for (std::uint32_t r = 0; r < n; ++r) {
    // Reduce-scatter by recursive halving: at step j the rank holds the blocks sharing its
    // top j bits and gives away the half that differs in bit m-1-j to that bit's partner.
    for (int j = 0; j < m; ++j) {
      const int bit = m - 1 - j;
      const std::uint32_t partner = r ^ (1U << bit);
      s[r].push_back({partner, blocks_bytes(r, m - j, true, bit), partner});
    }
    // All-gather by recursive doubling: at step j it sends the 2^j reduced blocks it has.
    for (int j = 0; j < m; ++j) {
      const std::uint32_t partner = r ^ (1U << j);
      s[r].push_back({partner, blocks_bytes(r, j, false, 0), partner});
    }
  }
  return s;
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
