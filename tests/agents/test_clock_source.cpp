#include "rocelab/agents/clock/clock_source.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rocelab/agents/clock/host_clock_reader.hpp"

namespace rocelab::agents::clock {
namespace {

// pmc's answer on a PTP slave with a grandmaster (linuxptp 3.x spelling).
constexpr const char* pmc_with_grandmaster =
    "sending: GET TIME_STATUS_NP\n"
    "\t90e2ba.fffe.20c7f8-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP \n"
    "\t\tmaster_offset              -310\n"
    "\t\tingress_time               1361545089345029441\n"
    "\t\tcumulativeScaledRateOffset   +1.000000000\n"
    "\t\tscaledLastGmPhaseChange    0\n"
    "\t\tgmTimeBaseIndicator        0\n"
    "\t\tlastGmPhaseChange          0x0000'0000000000000000.0000\n"
    "\t\tgmPresent                  true\n"
    "\t\tgmIdentity                 00a069.fffe.0b552d\n";

// Older linuxptp spells MANAGMENT; this host is its own grandmaster candidate.
constexpr const char* pmc_without_grandmaster =
    "sending: GET TIME_STATUS_NP\n"
    "        90e2ba.fffe.20c7f8-0 seq 0 RESPONSE MANAGMENT TIME_STATUS_NP\n"
    "                master_offset              0\n"
    "                gmPresent                  false\n"
    "                gmIdentity                 90e2ba.fffe.20c7f8\n";

struct pmc_case {
  const char* name;
  std::string text;
  bool ok;
  std::int64_t master_offset_ns;
  bool gm_present;
  const char* error;  // part of the message when !ok
};

class pmc_parsing : public ::testing::TestWithParam<pmc_case> {};

TEST_P(pmc_parsing, reads_time_status_np) {
  const auto& c = GetParam();
  auto r = parse_pmc_time_status(c.text);
  ASSERT_EQ(r.ok(), c.ok) << (r ? "parsed" : r.error().message());
  if (!c.ok) {
    EXPECT_NE(r.error().message().find(c.error), std::string::npos) << r.error().message();
    return;
  }
  EXPECT_EQ(r->master_offset_ns, c.master_offset_ns);
  EXPECT_EQ(r->gm_present, c.gm_present);
}

INSTANTIATE_TEST_SUITE_P(
    cases, pmc_parsing,
    ::testing::Values(
        pmc_case{"slave_with_grandmaster", pmc_with_grandmaster, true, -310, true, ""},
        pmc_case{"older_spelling_without_grandmaster", pmc_without_grandmaster, true, 0, false, ""},
        pmc_case{"second_port_ignored",
                 std::string(pmc_with_grandmaster) +
                     "\t90e2ba.fffe.20c7f8-1 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP\n\t\tmaster_offset 99999\n"
                     "\t\tgmPresent false\n",
                 true, -310, true, ""},
        pmc_case{"ptp4l_not_running", "sending: GET TIME_STATUS_NP\n", false, 0, false, "no TIME_STATUS_NP response"},
        pmc_case{"empty", "", false, 0, false, "no TIME_STATUS_NP response"},
        pmc_case{"offset_not_a_number",
                 "x seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP\n master_offset 3.5\n gmPresent true\n", false, 0, false,
                 "master_offset '3.5' is not an integer"},
        pmc_case{"gm_present_garbled",
                 "x seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP\n master_offset 3\n gmPresent yes\n", false, 0, false,
                 "gmPresent 'yes'"},
        pmc_case{"other_response_only",
                 "x seq 0 RESPONSE MANAGEMENT CURRENT_DATA_SET\n offsetFromMaster -142.0\n", false, 0, false,
                 "no TIME_STATUS_NP response"}),
    [](const auto& info) { return std::string(info.param.name); });

// What this machine's kernel said (ntp_adjtime, modes 0): TIME_ERROR, STA_UNSYNC, 16 s.
constexpr timex_reading unsynchronised_here{time_error_state, sta_unsync_bit, 16'000'000, 16'000'000};
// A chrony-disciplined kernel: TIME_OK, STA_PLL, maxerror 1.5 ms, esterror 40 us.
constexpr timex_reading chrony_synchronised{0, 0x0001, 1'500, 40};

TEST(clock_source, an_unsynchronised_kernel_clock_is_none_and_says_why) {
  const auto s = clock_source_from_timex(unsynchronised_here);
  EXPECT_EQ(s.kind, sync_kind::none);
  EXPECT_EQ(s.error_bound_ns, 0);
  EXPECT_NE(s.detail.find("STA_UNSYNC"), std::string::npos) << s.detail;
}

TEST(clock_source, time_error_alone_is_not_synchronised) {
  const auto s = clock_source_from_timex({time_error_state, 0, 100, 10});
  EXPECT_EQ(s.kind, sync_kind::none);
  EXPECT_NE(s.detail.find("TIME_ERROR"), std::string::npos) << s.detail;
}

TEST(clock_source, a_synchronised_kernel_clock_is_ntp_bounded_by_maxerror) {
  const auto s = clock_source_from_timex(chrony_synchronised);
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_EQ(s.error_bound_ns, 1'500'000);
  EXPECT_EQ(s.estimated_error_ns, 40'000);
}

TEST(clock_source, ptp_with_a_grandmaster_and_a_disciplined_system_clock_is_ptp) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), chrony_synchronised);
  EXPECT_EQ(s.kind, sync_kind::ptp);
  EXPECT_EQ(s.error_bound_ns, 310 + phc_to_system_allowance_ns);
  EXPECT_NE(s.detail.find("00a069.fffe.0b552d"), std::string::npos) << s.detail;
}

TEST(clock_source, ptp_without_a_disciplined_system_clock_is_not_synchronised) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), unsynchronised_here);
  EXPECT_EQ(s.kind, sync_kind::none);
  EXPECT_NE(s.detail.find("phc2sys"), std::string::npos) << s.detail;
}

TEST(clock_source, ptp_without_a_grandmaster_falls_back_to_the_kernel) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_without_grandmaster), chrony_synchronised);
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_EQ(s.error_bound_ns, 1'500'000);
}

TEST(clock_source, no_pmc_leaves_the_kernel_and_names_why) {
  const result<pmc_time_status> none = status(error_code::not_found, "pmc: not installed");
  const auto s = choose_clock_source(none, chrony_synchronised);
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_NE(s.detail.find("pmc: not installed"), std::string::npos) << s.detail;
}

TEST(clock_source, kind_names_round_trip) {
  for (auto k : {sync_kind::none, sync_kind::ptp, sync_kind::ntp}) EXPECT_EQ(sync_kind_from_string(to_string(k)), k);
  EXPECT_FALSE(sync_kind_from_string("gps"));
}

// Recorded readings through the reader seams.
class recorded_pmc final : public pmc_reader {
 public:
  explicit recorded_pmc(result<std::string> text) : text_(std::move(text)) {}
  result<std::string> time_status_text() override { return text_; }

 private:
  result<std::string> text_;
};

class recorded_timex final : public timex_reader {
 public:
  explicit recorded_timex(result<timex_reading> r) : r_(std::move(r)) {}
  result<timex_reading> read() override { return r_; }

 private:
  result<timex_reading> r_;
};

TEST(host_clock_reader, combines_recorded_pmc_and_timex) {
  recorded_pmc pmc{std::string(pmc_with_grandmaster)};
  recorded_timex timex(chrony_synchronised);
  EXPECT_EQ(read_host_clock(pmc, timex).kind, sync_kind::ptp);
}

TEST(host_clock_reader, an_unreadable_kernel_clock_is_none) {
  recorded_pmc pmc{std::string(pmc_with_grandmaster)};
  recorded_timex timex(status(error_code::io_error, "ntp_adjtime: Operation not permitted"));
  const auto s = read_host_clock(pmc, timex);
  EXPECT_EQ(s.kind, sync_kind::none);
  EXPECT_NE(s.detail.find("Operation not permitted"), std::string::npos) << s.detail;
}

TEST(host_clock_reader, the_monitor_has_a_reading_at_once) {
  host_clock_monitor m(std::make_unique<recorded_pmc>(status(error_code::not_found, "no pmc")),
                       std::make_unique<recorded_timex>(chrony_synchronised), std::chrono::milliseconds(10));
  EXPECT_EQ(m.current().kind, sync_kind::ntp);
  EXPECT_EQ(m.current().error_bound_ns, 1'500'000);
}

// The real kernel reader: read-only ntp_adjtime works unprivileged and gives a state.
TEST(host_clock_reader, the_kernel_reader_reads_this_host) {
  auto r = make_timex_reader()->read();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_GE(r->state, 0);
  EXPECT_LE(r->state, time_error_state);
  const auto s = clock_source_from_timex(*r);
  EXPECT_FALSE(s.detail.empty());
}

// A pmc that cannot be run is an error naming it, not a hang.
TEST(host_clock_reader, a_missing_pmc_is_an_error) {
  auto r = make_pmc_reader("/nonexistent/pmc")->time_status_text();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("pmc"), std::string::npos) << r.error().message();
}

// Realtime minus monotonic is stable between two reads (no step in between on a test host).
TEST(host_clock_reader, realtime_minus_monotonic_is_stable_across_reads) {
  const auto a = realtime_minus_monotonic_ns();
  const auto b = realtime_minus_monotonic_ns();
  EXPECT_LT(std::llabs(a - b), 1'000'000);
}

}  // namespace
}  // namespace rocelab::agents::clock
