#pragma once
// A switch_under_test that passes every call to another one, for qualification tests
// that make a switch deviate from what it is told (override configure()).

#include "rocelab/experiments/qualify/qualify.hpp"

namespace rocelab::testing {

class forwarding_switch : public experiments::switch_under_test {
 public:
  explicit forwarding_switch(experiments::switch_under_test& inner) : inner_(inner) {}
  std::string describe() const override { return inner_.describe(); }
  std::int64_t now_ns() const override { return inner_.now_ns(); }
  status configure(const fabric::switch_config& cfg) override { return inner_.configure(cfg); }
  status hold(std::uint16_t p, std::uint8_t q) override { return inner_.hold(p, q); }
  status resume(std::uint16_t p, std::uint8_t q) override { return inner_.resume(p, q); }
  result<std::uint32_t> release(std::uint16_t p, std::uint8_t q, std::uint32_t n) override {
    return inner_.release(p, q, n);
  }
  result<std::uint32_t> send(const experiments::probe_frames& f) override { return inner_.send(f); }
  result<experiments::probe_counters> read(std::uint16_t s, std::uint16_t d, std::uint8_t q) override {
    return inner_.read(s, d, q);
  }
  status storm(std::uint16_t p, std::uint8_t q, bool on) override { return inner_.storm(p, q, on); }
  status wait(std::int64_t ns) override { return inner_.wait(ns); }
  status restore() override { return inner_.restore(); }

 protected:
  experiments::switch_under_test& inner_;
};

}  // namespace rocelab::testing
