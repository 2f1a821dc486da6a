#pragma once
// The switch model (fabric::switch_model) as a switch under qualification, in virtual
// time: the data plane the twin and the soft switch both run, qualified without a lab.
//
// Frames arrive one serialization time apart at their source port's rate; ports that are
// not held send at line rate in between (an event loop over departures, the model's own
// timers and the peers' XOFF refreshes); a held port's peer re-sends XOFF every
// `refresh_ns`, well inside one pause (0xffff quanta: 335 us at 100 Gb/s).

#include <memory>

#include "rocelab/experiments/qualify/qualify.hpp"
#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/switch_model.hpp"

namespace rocelab::experiments {

class model_switch_under_test final : public switch_under_test {
 public:
  // `refresh_ns`: how often held and stormed ports' peers repeat their XOFF.
  explicit model_switch_under_test(std::int64_t refresh_ns = 20'000);
  ~model_switch_under_test() override;

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::int64_t now_ns() const override;
  [[nodiscard]] status configure(const fabric::switch_config& cfg) override;
  [[nodiscard]] status hold(std::uint16_t port, std::uint8_t priority) override;
  [[nodiscard]] status resume(std::uint16_t port, std::uint8_t priority) override;
  [[nodiscard]] result<std::uint32_t> release(std::uint16_t port, std::uint8_t priority,
                                              std::uint32_t packets) override;
  [[nodiscard]] result<std::uint32_t> send(const probe_frames& frames) override;
  [[nodiscard]] result<probe_counters> read(std::uint16_t src, std::uint16_t dst, std::uint8_t priority) override;
  [[nodiscard]] status storm(std::uint16_t port, std::uint8_t priority, bool on) override;
  [[nodiscard]] status wait(std::int64_t ns) override;
  [[nodiscard]] status restore() override;

  // The model in force (tests look inside).
  [[nodiscard]] const fabric::switch_model* model() const noexcept { return model_.get(); }

 private:
  void pause_from_peer(std::uint16_t port, std::uint8_t mask, bool xoff);
  // Runs time forward to `t`: model timers, peer refreshes and departures in time order.
  void advance_to(std::int64_t t);
  void dequeue_due();
  status check_port(std::uint16_t port, std::uint8_t priority) const;

  std::int64_t refresh_ns_;
  std::int64_t start_ns_ = 0;  // the next clock starts where the last one stopped
  std::unique_ptr<fabric::virtual_clock> clock_;
  std::unique_ptr<fabric::switch_model> model_;
  std::vector<std::uint8_t> held_, stormed_;  // per port: priorities the peer pauses
  std::vector<std::int64_t> budget_;           // per port: packets release() still lets go, -1: none
  std::vector<std::uint8_t> budget_prio_;
  std::int64_t next_refresh_ns_ = 0;
  bool configured_ = false;
};

}  // namespace rocelab::experiments
