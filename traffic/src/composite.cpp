#include "rocelab/traffic/composite.hpp"

namespace rocelab::traffic {

using fabric::twin::message;
using fabric::twin::twin_context;

// Forwards to the engine's context and notes which part posted each message.
class composite_workload::routing_context final : public twin_context {
 public:
  routing_context(twin_context& inner, std::unordered_map<std::uint64_t, std::size_t>& owner, std::size_t part)
      : inner_(inner), owner_(owner), part_(part) {}
  [[nodiscard]] std::int64_t now_ns() const override { return inner_.now_ns(); }
  [[nodiscard]] std::uint32_t hosts() const override { return inner_.hosts(); }
  [[nodiscard]] double link_gbps() const override { return inner_.link_gbps(); }
  std::uint64_t post(const message& m) override {
    const std::uint64_t id = inner_.post(m);
    owner_[id] = part_;
    return id;
  }
  void report_allreduce(const allreduce_result& r) override { inner_.report_allreduce(r); }

 private:
  twin_context& inner_;
  std::unordered_map<std::uint64_t, std::size_t>& owner_;
  std::size_t part_;
};

composite_workload::composite_workload(std::vector<std::unique_ptr<fabric::twin::workload>> parts)
    : parts_(std::move(parts)) {}

void composite_workload::start(twin_context& ctx) {
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    routing_context routed(ctx, owner_, i);
    parts_[i]->start(routed);
  }
}

void composite_workload::on_message_complete(std::uint64_t id, const message& m, const flow_record& record,
                                             twin_context& ctx) {
  const auto it = owner_.find(id);
  if (it == owner_.end()) return;
  const std::size_t part = it->second;
  owner_.erase(it);
  routing_context routed(ctx, owner_, part);
  parts_[part]->on_message_complete(id, m, record, routed);
}

}  // namespace rocelab::traffic
