#include "rocelab/traffic/incast.hpp"

#include <algorithm>
#include <numeric>

#include "rocelab/traffic/random.hpp"

namespace rocelab::traffic {
namespace {

using fabric::twin::message;
using fabric::twin::twin_context;

// Random streams of this workload (see random_stream).
constexpr std::uint64_t senders_stream = 0x1c0001;
constexpr std::uint64_t jitter_stream = 0x1c0100;

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

class incast_workload final : public fabric::twin::workload {
 public:
  incast_workload(incast_config cfg, std::vector<std::uint32_t> senders, std::uint64_t seed)
      : cfg_(std::move(cfg)), senders_(std::move(senders)), seed_(seed) {}

  void start(twin_context& ctx) override { start_round(ctx, 0, cfg_.start_ns); }

  void on_message_complete(std::uint64_t, const message& m, const flow_record&, twin_context& ctx) override {
    if ((m.tag >> 32) != round_) return;
    if (--outstanding_ > 0) return;
    if (round_ + 1 < cfg_.rounds) start_round(ctx, round_ + 1, ctx.now_ns() + cfg_.round_gap_ns);
  }

 private:
  void start_round(twin_context& ctx, std::uint32_t round, std::int64_t at_ns) {
    round_ = round;
    const auto messages = incast_round(cfg_, senders_, round, at_ns, seed_);
    outstanding_ = messages.size();
    for (const message& m : messages) ctx.post(m);
  }

  incast_config cfg_;
  std::vector<std::uint32_t> senders_;
  std::uint64_t seed_;
  std::uint32_t round_ = 0;
  std::size_t outstanding_ = 0;
};

}  // namespace

status validate(const incast_config& cfg, std::uint32_t hosts) {
  if (cfg.receiver >= hosts)
    return bad("receiver " + std::to_string(cfg.receiver) + " is not a host (0.." + std::to_string(hosts - 1) + ")");
  if (cfg.flow_bytes == 0) return bad("flow_bytes must be > 0");
  if (cfg.rounds == 0) return bad("rounds must be >= 1");
  if (cfg.round_gap_ns < 0 || cfg.start_ns < 0 || cfg.start_jitter_ns < 0) return bad("negative time");
  if (cfg.priority < -1 || cfg.priority > 7) return bad("priority must be 0..7 (or -1 for the NIC's)");
  if (cfg.senders.empty()) {
    if (cfg.sender_count == 0) return bad("senders must be >= 1");
    if (cfg.sender_count > hosts - 1)
      return bad("senders " + std::to_string(cfg.sender_count) + " > the " + std::to_string(hosts - 1) +
                 " hosts other than the receiver");
  }
  std::vector<bool> seen(hosts, false);
  for (std::uint32_t s : cfg.senders) {
    if (s >= hosts) return bad("sender " + std::to_string(s) + " is not a host");
    if (s == cfg.receiver) return bad("sender " + std::to_string(s) + " is the receiver");
    if (seen[s]) return bad("sender " + std::to_string(s) + " listed twice");
    seen[s] = true;
  }
  return status::success();
}

std::vector<std::uint32_t> incast_senders(const incast_config& cfg, std::uint32_t hosts, std::uint64_t seed) {
  if (!cfg.senders.empty()) return cfg.senders;
  std::vector<std::uint32_t> others;
  for (std::uint32_t h = 0; h < hosts; ++h)
    if (h != cfg.receiver) others.push_back(h);
  const std::size_t n = std::min<std::size_t>(cfg.sender_count, others.size());
  if (n == others.size()) return others;
  // Partial Fisher-Yates: a uniform n-subset, then kept in host order so the message list
  // reads naturally.
  random_stream rng(seed, senders_stream);
  for (std::size_t i = 0; i < n; ++i) std::swap(others[i], others[i + rng.below(others.size() - i)]);
  others.resize(n);
  std::sort(others.begin(), others.end());
  return others;
}

std::vector<message> incast_round(const incast_config& cfg, const std::vector<std::uint32_t>& senders,
                                  std::uint32_t round, std::int64_t round_start_ns, std::uint64_t seed) {
  random_stream rng(seed, jitter_stream + round);
  std::vector<message> out;
  out.reserve(senders.size());
  for (std::size_t i = 0; i < senders.size(); ++i) {
    message m;
    m.src = senders[i];
    m.dst = cfg.receiver;
    m.bytes = cfg.flow_bytes;
    const std::int64_t jitter =
        cfg.start_jitter_ns > 0 ? static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(cfg.start_jitter_ns) + 1)) : 0;
    m.start_ns = round_start_ns + jitter;
    m.kind = workload_kind::incast;
    m.priority = cfg.priority;
    m.tag = (static_cast<std::uint64_t>(round) << 32) | i;
    out.push_back(m);
  }
  return out;
}

result<std::unique_ptr<fabric::twin::workload>> make_incast(const incast_config& cfg, std::uint32_t hosts,
                                                            std::uint64_t seed) {
  if (auto st = validate(cfg, hosts); !st.ok()) return st.with_context("incast");
  return std::unique_ptr<fabric::twin::workload>(
      std::make_unique<incast_workload>(cfg, incast_senders(cfg, hosts, seed), seed));
}

}  // namespace rocelab::traffic
