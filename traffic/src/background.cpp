#include "rocelab/traffic/background.hpp"

#include <algorithm>
#include <cmath>

#include "rocelab/traffic/random.hpp"

namespace rocelab::traffic {
namespace {

using fabric::twin::message;
using fabric::twin::twin_context;

constexpr std::uint64_t background_stream = 0xb6000000;  // + source host

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

class background_workload final : public fabric::twin::workload {
 public:
  background_workload(background_config cfg, std::uint32_t hosts, std::uint64_t seed)
      : cfg_(std::move(cfg)), hosts_(hosts), seed_(seed) {}

  void start(twin_context& ctx) override {
    for (const message& m : background_messages(cfg_, hosts_, ctx.link_gbps(), seed_)) ctx.post(m);
  }

 private:
  background_config cfg_;
  std::uint32_t hosts_;
  std::uint64_t seed_;
};

}  // namespace

status validate(const background_config& cfg, std::uint32_t hosts) {
  if (!(cfg.load > 0 && cfg.load <= 1)) return bad("load must be in (0, 1]");
  if (cfg.cdf.points().empty()) return bad("no flow-size CDF");
  if (!(cfg.cdf.mean_bytes() > 0)) return bad("the flow-size CDF has mean 0");
  if (cfg.start_ns < 0 || cfg.duration_ns <= 0) return bad("duration must be > 0 and start >= 0");
  if (cfg.priority < -1 || cfg.priority > 7) return bad("priority must be 0..7 (or -1 for the NIC's)");
  std::vector<bool> seen(hosts, false);
  for (std::uint32_t h : cfg.hosts) {
    if (h >= hosts) return bad("host " + std::to_string(h) + " is not a host");
    if (seen[h]) return bad("host " + std::to_string(h) + " listed twice");
    seen[h] = true;
  }
  const std::size_t n = cfg.hosts.empty() ? hosts : cfg.hosts.size();
  if (n < 2) return bad("background traffic needs at least 2 hosts");
  return status::success();
}

std::vector<message> background_messages(const background_config& cfg, std::uint32_t hosts, double link_gbps,
                                         std::uint64_t seed) {
  std::vector<std::uint32_t> members = cfg.hosts;
  if (members.empty())
    for (std::uint32_t h = 0; h < hosts; ++h) members.push_back(h);
  std::vector<message> out;
  if (members.size() < 2 || !(link_gbps > 0)) return out;

  // Mean inter-arrival per host (ns): mean_bytes x 8 / (load x link_bps) s.
  const double mean_gap_ns = cfg.cdf.mean_bytes() * 8.0 / (cfg.load * link_gbps);
  const std::int64_t end_ns = cfg.start_ns + cfg.duration_ns;
  for (std::size_t i = 0; i < members.size(); ++i) {
    // One stream per source host: adding a host does not change the others' flows.
    random_stream rng(seed, background_stream + members[i]);
    double t = static_cast<double>(cfg.start_ns);
    for (;;) {
      t += rng.exponential(mean_gap_ns);
      if (t >= static_cast<double>(end_ns)) break;
      message m;
      m.src = members[i];
      // Uniform over the other members: draw among n-1 and skip the source.
      std::size_t d = rng.below(members.size() - 1);
      if (d >= i) ++d;
      m.dst = members[d];
      m.bytes = cfg.cdf.sample(rng.uniform());
      m.start_ns = static_cast<std::int64_t>(std::floor(t));
      m.kind = workload_kind::background;
      m.priority = cfg.priority;
      out.push_back(m);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const message& a, const message& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.src < b.src;
  });
  if (cfg.max_flows > 0 && out.size() > cfg.max_flows) out.resize(cfg.max_flows);
  for (std::size_t k = 0; k < out.size(); ++k) out[k].tag = k;
  return out;
}

result<std::unique_ptr<fabric::twin::workload>> make_background(background_config cfg, std::uint32_t hosts,
                                                                std::uint64_t seed) {
  if (auto st = validate(cfg, hosts); !st.ok()) return st.with_context("background");
  return std::unique_ptr<fabric::twin::workload>(std::make_unique<background_workload>(std::move(cfg), hosts, seed));
}

}  // namespace rocelab::traffic
