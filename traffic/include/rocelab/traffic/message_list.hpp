#pragma once
// A fixed list of messages, each posted at its own start time: flow files of other
// simulators (HPCC ns-3's flow.txt), recorded flow lists, hand-written cases.

#include <memory>
#include <vector>

#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic {

class message_list_workload final : public fabric::twin::workload {
 public:
  explicit message_list_workload(std::vector<fabric::twin::message> messages)
      : messages_(std::move(messages)) {}

  // Posts every message at once; the twin holds each until its start_ns.
  void start(fabric::twin::twin_context& ctx) override;
  [[nodiscard]] std::size_t size() const { return messages_.size(); }

 private:
  std::vector<fabric::twin::message> messages_;
};

}  // namespace rocelab::traffic
