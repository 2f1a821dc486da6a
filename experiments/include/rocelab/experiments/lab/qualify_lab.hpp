#pragma once
// The virtual lab's soft switch as a switch under qualification: real frames through
// real veths, the switch process untouched except through its control API.
//
// - Probe frames are RoCEv2 WRITEs built with the captures frame builder and sent from
//   the source host's namespace (an AF_PACKET socket opened there), addressed to the
//   destination host's MAC but an IP no host has (198.18.0.250), so the host kernel drops
//   them silently. Their DSCP is one the switch maps to the probed priority.
// - hold/storm: the peer host sends 802.1Qbb XOFF (0xffff quanta) from its namespace and
//   a refresher thread repeats it every `refresh` until resume (XON) or the storm's end.
// - release(n): XON then XOFF back to back, repeated until n packets left (the step's
//   resolution is what the switch loop lets through between the two frames; the counters
//   say exactly how many).
// - read: the control API's counters (per port, PG and queue, with the watchdog's).
// - configure: every model field of the configuration through one all-or-none `set`,
//   after a snapshot of the switch's own configuration; restore puts it back.
// Needs root (namespaces). The lab's link rate should be low (the lab's usual 0.2-2
// Gb/s) so that the switch, not the host, is the bottleneck.

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/qualify/qualify.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

class lab_switch_under_test final : public switch_under_test {
 public:
  // The lab must be up with its switch running; ports are the lab's hosts in order.
  [[nodiscard]] static result<std::unique_ptr<lab_switch_under_test>> open(const agents::lab::lab_state& lab);
  ~lab_switch_under_test() override;

  // The configuration the switch runs now (its {"op":"config"}).
  [[nodiscard]] result<fabric::switch_config> current_config();

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

  class impl;

 private:
  explicit lab_switch_under_test(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// Brings up a lab for the spec (topology.hosts hosts, at least 3; its link rate and
// buffer), puts the spec's switch settings on it, qualifies the switch against the
// configuration it then reports, and takes the lab down. `rocelab_binary` runs the
// switch (empty: this process's executable, i.e. when called from `rocelab`).
[[nodiscard]] result<qualify_result> qualify_virtual_lab(const experiment_spec& spec, const qualify_plan& plan,
                                                         const std::string& lab_name = "qualify",
                                                         const std::string& rocelab_binary = {});

}  // namespace rocelab::experiments
