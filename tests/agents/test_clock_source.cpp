#include "rocelab/agents/clock/clock_source.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "../support/text_file.hpp"
#include "rocelab/agents/clock/host_clock_reader.hpp"

// The clock source against recorded pmc and chronyc output (tests/data/clock-sync/README.md).

namespace rocelab::agents::clock {
namespace {

const std::filesystem::path records = std::filesystem::path(ROCELAB_SOURCE_DIR) / "tests/data/clock-sync";
std::string record(const char* name) { return testing::read_text(records / name); }

// pmc's answer on a PTP slave with a grandmaster (linuxptp's pmc_common.c format).
const std::string pmc_with_grandmaster = record("pmc-time-status-grandmaster.txt");

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
        pmc_case{"recorded_without_grandmaster", record("pmc-time-status-no-grandmaster.txt"), true, 0, false, ""},
        pmc_case{"older_spelling_without_grandmaster", pmc_without_grandmaster, true, 0, false, ""},
        pmc_case{"second_port_ignored",
                 pmc_with_grandmaster +
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

// Evidence that nothing but the kernel speaks for: no phc2sys, chronyd not asked.
clock_discipline no_evidence() { return {}; }
clock_discipline phc2sys_runs() {
  clock_discipline d;
  d.phc2sys_running = true;
  return d;
}
clock_discipline chrony_from(const char* record_name) {
  clock_discipline d;
  d.chrony = parse_chronyc_tracking(record(record_name));
  return d;
}

TEST(clock_source, ptp_with_a_grandmaster_and_phc2sys_is_ptp) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), chrony_synchronised, phc2sys_runs());
  EXPECT_EQ(s.kind, sync_kind::ptp);
  EXPECT_EQ(s.error_bound_ns, 310 + phc_to_system_allowance_ns);
  EXPECT_NE(s.detail.find("00a069.fffe.0b552d"), std::string::npos) << s.detail;
  EXPECT_NE(s.detail.find("phc2sys"), std::string::npos) << s.detail;
}

// Issue 41, new 4: ptp4l has a grandmaster and the kernel clock is marked synchronised,
// but chronyd clears STA_UNSYNC following an NTP server; phc2sys is not running. The
// system clock is NTP-grade: ntp, with chrony's bound (|System time| + Root dispersion +
// Root delay / 2 = 6.523 us + 1100.737 us + 6819.511 us), not ptp to ~1 us.
TEST(clock_source, ptp4l_with_chrony_from_an_ntp_server_is_ntp_with_chronys_bound) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), chrony_synchronised,
                                     chrony_from("chronyc-tracking-ntp.txt"));
  EXPECT_EQ(s.kind, sync_kind::ntp) << s.detail;
  EXPECT_NEAR(static_cast<double>(s.error_bound_ns), 7'926'771.0, 1.0);
  EXPECT_NE(s.detail.find("203.0.113.15"), std::string::npos) << s.detail;
  EXPECT_NE(s.detail.find("nothing disciplines the system clock from the PHC"), std::string::npos) << s.detail;
}

// The same without chronyc's answer: the kernel's word alone is no evidence of phc2sys.
TEST(clock_source, ptp4l_with_only_the_kernels_flag_is_not_ptp) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), chrony_synchronised, no_evidence());
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_EQ(s.error_bound_ns, 1'500'000);
}

// chronyd disciplining the system clock from the PHC ptp4l steers (refclock PHC): ptp,
// bounded by the PHC's offset plus chrony's bound against the PHC.
TEST(clock_source, ptp4l_with_a_chrony_phc_refclock_is_ptp) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), chrony_synchronised,
                                     chrony_from("chronyc-tracking-phc.txt"));
  EXPECT_EQ(s.kind, sync_kind::ptp) << s.detail;
  EXPECT_NEAR(static_cast<double>(s.error_bound_ns), 310.0 + 14.0 + 1311.0 + 0.5, 1.0);
  EXPECT_NE(s.detail.find("PHC0"), std::string::npos) << s.detail;
}

// A PHC refclock without a grandmaster is a free-running NIC clock: not the lab's time.
TEST(clock_source, a_chrony_phc_refclock_without_a_grandmaster_is_none) {
  auto s = choose_clock_source(parse_pmc_time_status(record("pmc-time-status-no-grandmaster.txt")),
                               chrony_synchronised, chrony_from("chronyc-tracking-phc.txt"));
  EXPECT_EQ(s.kind, sync_kind::none) << s.detail;
  s = choose_clock_source(status(error_code::not_found, "pmc: not installed"), chrony_synchronised,
                          chrony_from("chronyc-tracking-phc.txt"));
  EXPECT_EQ(s.kind, sync_kind::none) << s.detail;
}

TEST(clock_source, chrony_from_ntp_without_ptp_is_ntp_with_chronys_bound) {
  const auto s = choose_clock_source(status(error_code::not_found, "pmc: not installed"), chrony_synchronised,
                                     chrony_from("chronyc-tracking-ntp.txt"));
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_NEAR(static_cast<double>(s.error_bound_ns), 7'926'771.0, 1.0);
}

TEST(clock_source, ptp_without_a_disciplined_system_clock_is_not_synchronised) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_with_grandmaster), unsynchronised_here, phc2sys_runs());
  EXPECT_EQ(s.kind, sync_kind::none);
  EXPECT_NE(s.detail.find("STA_UNSYNC"), std::string::npos) << s.detail;
}

TEST(clock_source, an_unsynchronised_chrony_leaves_the_kernels_bound) {
  const auto s = choose_clock_source(status(error_code::not_found, "pmc: not installed"), chrony_synchronised,
                                     chrony_from("chronyc-tracking-unsynchronised.txt"));
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_EQ(s.error_bound_ns, 1'500'000);
  EXPECT_NE(s.detail.find("chronyd not synchronised"), std::string::npos) << s.detail;
}

TEST(clock_source, ptp_without_a_grandmaster_falls_back_to_the_kernel) {
  const auto s = choose_clock_source(parse_pmc_time_status(pmc_without_grandmaster), chrony_synchronised, phc2sys_runs());
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_EQ(s.error_bound_ns, 1'500'000);
}

TEST(clock_source, no_pmc_leaves_the_kernel_and_names_why) {
  const result<pmc_time_status> none = status(error_code::not_found, "pmc: not installed");
  const auto s = choose_clock_source(none, chrony_synchronised, no_evidence());
  EXPECT_EQ(s.kind, sync_kind::ntp);
  EXPECT_NE(s.detail.find("pmc: not installed"), std::string::npos) << s.detail;
}

// chronyc's tracking report (client.c's format; chronyc.adoc's example values).
TEST(chronyc_tracking, parses_the_recorded_reports) {
  auto ntp = parse_chronyc_tracking(record("chronyc-tracking-ntp.txt"));
  ASSERT_TRUE(ntp.ok()) << ntp.error().message();
  EXPECT_EQ(ntp->reference_id, 0xCB00710Fu);
  EXPECT_EQ(ntp->reference_name, "203.0.113.15");
  EXPECT_EQ(ntp->stratum, 3);
  EXPECT_TRUE(ntp->synchronised());
  EXPECT_FALSE(ntp->refclock());
  EXPECT_FALSE(ntp->phc_refclock());
  EXPECT_NEAR(ntp->system_time_offset_s, 6.523e-6, 1e-12);

  auto phc = parse_chronyc_tracking(record("chronyc-tracking-phc.txt"));
  ASSERT_TRUE(phc.ok()) << phc.error().message();
  EXPECT_EQ(phc->reference_id, 0x50484330u);
  EXPECT_TRUE(phc->refclock());
  EXPECT_TRUE(phc->phc_refclock());

  auto unsync = parse_chronyc_tracking(record("chronyc-tracking-unsynchronised.txt"));
  ASSERT_TRUE(unsync.ok()) << unsync.error().message();
  EXPECT_FALSE(unsync->synchronised());
  EXPECT_FALSE(unsync->refclock());
}

TEST(chronyc_tracking, a_gps_refclock_is_a_refclock_but_not_a_phc) {
  // chronyc.adoc's ntpdata example names a GPS refclock 47505300 (GPS).
  std::string text = record("chronyc-tracking-phc.txt");
  text.replace(text.find("50484330 (PHC0)"), 15, "47505300 (GPS)");
  auto t = parse_chronyc_tracking(text);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->refclock());
  EXPECT_FALSE(t->phc_refclock());
}

TEST(chronyc_tracking, refuses_what_is_not_a_report) {
  EXPECT_FALSE(parse_chronyc_tracking("506 Cannot talk to daemon\n").ok());
  std::string text = record("chronyc-tracking-ntp.txt");
  text.replace(text.find("0.001100737"), 11, "lots");
  auto r = parse_chronyc_tracking(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("Root dispersion 'lots"), std::string::npos) << r.error().message();
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

class recorded_discipline final : public discipline_reader {
 public:
  recorded_discipline(bool phc2sys, result<std::string> tracking) : phc2sys_(phc2sys), tracking_(std::move(tracking)) {}
  bool phc2sys_running() override { return phc2sys_; }
  result<std::string> chronyc_tracking_text() override { return tracking_; }

 private:
  bool phc2sys_;
  result<std::string> tracking_;
};

const result<std::string> no_chronyd = status(error_code::unavailable, "chronyc exited with status 1");

TEST(host_clock_reader, combines_recorded_pmc_timex_and_discipline) {
  recorded_pmc pmc{pmc_with_grandmaster};
  recorded_timex timex(chrony_synchronised);
  recorded_discipline phc2sys(true, no_chronyd);
  EXPECT_EQ(read_host_clock(pmc, timex, phc2sys).kind, sync_kind::ptp);
  recorded_discipline chrony_ntp(false, record("chronyc-tracking-ntp.txt"));
  EXPECT_EQ(read_host_clock(pmc, timex, chrony_ntp).kind, sync_kind::ntp);
}

TEST(host_clock_reader, an_unreadable_kernel_clock_is_none) {
  recorded_pmc pmc{pmc_with_grandmaster};
  recorded_timex timex(status(error_code::io_error, "ntp_adjtime: Operation not permitted"));
  recorded_discipline phc2sys(true, no_chronyd);
  const auto s = read_host_clock(pmc, timex, phc2sys);
  EXPECT_EQ(s.kind, sync_kind::none);
  EXPECT_NE(s.detail.find("Operation not permitted"), std::string::npos) << s.detail;
}

TEST(host_clock_reader, the_monitor_has_a_reading_at_once) {
  host_clock_monitor m(std::make_unique<recorded_pmc>(status(error_code::not_found, "no pmc")),
                       std::make_unique<recorded_timex>(chrony_synchronised),
                       std::make_unique<recorded_discipline>(false, no_chronyd), std::chrono::milliseconds(10));
  EXPECT_EQ(m.current().kind, sync_kind::ntp);
  EXPECT_EQ(m.current().error_bound_ns, 1'500'000);
}

// phc2sys is found by its process name under a proc tree; a missing chronyc is an error
// naming it.
TEST(host_clock_reader, the_discipline_reader_finds_phc2sys_and_names_a_missing_chronyc) {
  testing::temp_dir proc("proc");
  const auto process = [&](const char* pid, const char* comm) {
    std::filesystem::create_directories(proc.path() / pid);
    std::ofstream(proc.path() / pid / "comm") << comm << "\n";
  };
  process("1", "systemd");
  process("812", "ptp4l");
  process("self", "phc2sys");  // not a pid
  EXPECT_FALSE(make_discipline_reader(proc.path().string())->phc2sys_running());
  process("813", "phc2sys");
  auto reader = make_discipline_reader(proc.path().string(), "/nonexistent/chronyc");
  EXPECT_TRUE(reader->phc2sys_running());
  auto text = reader->chronyc_tracking_text();
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message().find("chronyc"), std::string::npos) << text.error().message();
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
