#pragma once
// A stand-in for the twin engine when testing workloads (the callers of twin_context): it
// records posts and lets the test complete messages in the order it chooses, at the time
// it chooses. The engine itself is tested in tests/fabric.

#include <cstdint>
#include <map>
#include <vector>

#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic::testing {

class fake_twin_context final : public fabric::twin::twin_context {
 public:
  struct posted {
    std::uint64_t id;
    fabric::twin::message m;
    std::int64_t posted_at_ns;
    bool done = false;
  };

  explicit fake_twin_context(std::uint32_t hosts, double link_gbps = 100) : hosts_(hosts), link_gbps_(link_gbps) {}

  [[nodiscard]] std::int64_t now_ns() const override { return now_ns_; }
  [[nodiscard]] std::uint32_t hosts() const override { return hosts_; }
  [[nodiscard]] double link_gbps() const override { return link_gbps_; }
  std::uint64_t post(const fabric::twin::message& m) override {
    const std::uint64_t id = next_id_++;
    posts.push_back({id, m, now_ns_});
    return id;
  }
  void report_allreduce(const allreduce_result& r) override { reports.push_back(r); }

  // Completes post #index at `at_ns` (time moves forward only) and tells the workload.
  void complete(fabric::twin::workload& w, std::size_t index, std::int64_t at_ns) {
    if (at_ns > now_ns_) now_ns_ = at_ns;
    posts[index].done = true;
    const posted p = posts[index];
    flow_record r;
    r.src = p.m.src;
    r.dst = p.m.dst;
    r.bytes = p.m.bytes;
    r.kind = p.m.kind;
    r.start_ns = std::max(p.posted_at_ns, p.m.start_ns);
    r.end_ns = now_ns_;
    r.fct_ns = r.end_ns - r.start_ns;
    w.on_message_complete(p.id, p.m, r, *this);
  }
  // Completes every pending post, oldest first, each `fct_ns` after it could start, until
  // nothing is pending (the workload may post more meanwhile). Returns completions.
  std::size_t drain(fabric::twin::workload& w, std::int64_t fct_ns) {
    std::size_t n = 0;
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t i = 0; i < posts.size(); ++i) {
        if (posts[i].done) continue;
        const std::int64_t start = std::max(posts[i].posted_at_ns, posts[i].m.start_ns);
        complete(w, i, start + fct_ns);
        ++n;
        progress = true;
      }
    }
    return n;
  }

  std::vector<posted> posts;
  std::vector<allreduce_result> reports;

 private:
  std::uint32_t hosts_;
  double link_gbps_;
  std::int64_t now_ns_ = 0;
  std::uint64_t next_id_ = 100;
};

}  // namespace rocelab::traffic::testing
