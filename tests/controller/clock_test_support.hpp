// Shared by the clock tests: timer jobs for named agents, recorded pmc / adjtimex readings
// standing in for linuxptp and the kernel, and a controller started with a host clock.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller_test_support.hpp"
#include "rocelab/agents/clock/host_clock_reader.hpp"
#include "rocelab/controller/controller.hpp"

namespace rocelab::test {

namespace clk = agents::clock;

inline std::vector<controller::job_plan> timer_plans(const std::vector<std::string>& names) {
  std::vector<controller::job_plan> plans;
  for (const auto& n : names) {
    controller::job_plan p;
    p.agent = n;
    p.job.kind = protocol::job_kind::timer;
    p.job.timeout_ms = 10000;
    plans.push_back(p);
  }
  return plans;
}

// Recorded pmc / adjtimex readings standing in for linuxptp and the kernel.
class recorded_pmc final : public clk::pmc_reader {
 public:
  explicit recorded_pmc(result<std::string> text) : text_(std::move(text)) {}
  result<std::string> time_status_text() override { return text_; }

 private:
  result<std::string> text_;
};
class recorded_timex final : public clk::timex_reader {
 public:
  explicit recorded_timex(clk::timex_reading r) : r_(r) {}
  result<clk::timex_reading> read() override { return r_; }

 private:
  clk::timex_reading r_;
};

inline std::shared_ptr<clk::host_clock_monitor> ptp_host(std::int64_t master_offset_ns) {
  const std::string pmc = "sending: GET TIME_STATUS_NP\n\t90e2ba.fffe.20c7f8-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP\n"
                          "\t\tmaster_offset " + std::to_string(master_offset_ns) +
                          "\n\t\tgmPresent true\n\t\tgmIdentity 00a069.fffe.0b552d\n";
  // phc2sys keeps the kernel clock marked synchronised.
  return std::make_shared<clk::host_clock_monitor>(std::make_unique<recorded_pmc>(pmc),
                                                   std::make_unique<recorded_timex>(clk::timex_reading{0, 0x2001, 0, 0}));
}

inline std::shared_ptr<clk::host_clock_monitor> unsynchronised_host() {
  return std::make_shared<clk::host_clock_monitor>(
      std::make_unique<recorded_pmc>(status(error_code::not_found, "pmc: not installed")),
      std::make_unique<recorded_timex>(clk::timex_reading{clk::time_error_state, clk::sta_unsync_bit, 16'000'000, 16'000'000}));
}

inline std::unique_ptr<controller::controller> start_controller(const temp_dir& dir, std::shared_ptr<const clk::host_clock_monitor> host_clock) {
  auto o = quick_controller_options(dir);
  o.host_clock = std::move(host_clock);
  auto c = controller::controller::start(o);
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c ? std::move(*c) : nullptr;
}

}  // namespace rocelab::test
