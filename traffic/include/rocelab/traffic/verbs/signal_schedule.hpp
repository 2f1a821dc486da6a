#pragma once
// Selective signalling of a stream of send work requests, as perftest's ib_write_bw does
// it (cq_mod, default 100: perftest_parameters.h DEF_CQ_MOD): one WR in `every` asks for a
// completion, and that completion retires it and the unsignalled WRs posted before it,
// since the send completions of one QP come in order. The last WR to post is signalled
// too. `every` is at most `depth` (the WRs in flight), so a full window always holds a
// signalled WR and the sender never waits for a completion no WR will produce. Pure.

#include <cstdint>
#include <deque>

namespace rocelab::traffic::verbs {

class signal_schedule {
 public:
  // every: 1 signals each WR; clamped to 1..depth (perftest lowers cq_mod to tx_depth).
  signal_schedule(std::uint32_t every, std::uint32_t depth) noexcept;

  // Whether the WR about to be posted is signalled; records it as posted. `total`: how
  // many the caller will post in all.
  [[nodiscard]] bool post(std::uint64_t total);
  // One signalled completion arrived: how many WRs it retires (0 if none is outstanding).
  [[nodiscard]] std::uint64_t complete();

  [[nodiscard]] std::uint64_t posted() const noexcept { return posted_; }
  [[nodiscard]] std::uint64_t completed() const noexcept { return completed_; }
  [[nodiscard]] std::uint64_t in_flight() const noexcept { return posted_ - completed_; }
  [[nodiscard]] std::uint32_t every() const noexcept { return every_; }
  [[nodiscard]] std::uint32_t depth() const noexcept { return depth_; }

 private:
  std::uint32_t every_;
  std::uint32_t depth_;
  std::uint64_t posted_ = 0;
  std::uint64_t completed_ = 0;
  std::uint64_t unsignalled_ = 0;   // posted since the last signalled WR
  std::deque<std::uint64_t> batches_;  // per signalled WR in flight: the WRs it retires
};

}  // namespace rocelab::traffic::verbs
