#pragma once
// Several workloads in one run (background flows plus an incast, say). Each part posts
// through a context that remembers which part posted which message, so completions go
// back to the part that posted them. Parts start in the order given.

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic {

class composite_workload final : public fabric::twin::workload {
 public:
  explicit composite_workload(std::vector<std::unique_ptr<fabric::twin::workload>> parts);

  void start(fabric::twin::twin_context& ctx) override;
  void on_message_complete(std::uint64_t id, const fabric::twin::message& m, const flow_record& record,
                           fabric::twin::twin_context& ctx) override;

  [[nodiscard]] std::size_t size() const { return parts_.size(); }

 private:
  class routing_context;
  std::vector<std::unique_ptr<fabric::twin::workload>> parts_;
  std::unordered_map<std::uint64_t, std::size_t> owner_;  // message id -> part
};

}  // namespace rocelab::traffic
