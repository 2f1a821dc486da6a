#pragma once
// Which clock this host keeps in step with the lab, and how far off it may be.
//
// Sources, best first:
//   ptp  linuxptp: ptp4l has a grandmaster (`pmc -u -b 0 'GET TIME_STATUS_NP'`: gmPresent
//        true) and the system clock is disciplined from the NIC's clock (phc2sys clears the
//        kernel's STA_UNSYNC). Bound: |master_offset| (the PHC against the grandmaster at
//        its last sync) plus phc_to_system_allowance_ns for phc2sys, which pmc cannot see.
//   ntp  chrony or ntpd (both discipline the kernel clock, so the kernel cannot tell which):
//        ntp_adjtime(2) read-only says synchronised (STA_UNSYNC clear, not TIME_ERROR).
//        Bound: maxerror (the kernel's maximum error, which the daemon sets and the kernel
//        grows by 500 ppm between updates); esterror is kept as estimated_error_ns.
//   none neither: rocelab estimates each agent's offset itself (protocol/clock_offset.hpp).
// The clock the bound applies to is CLOCK_REALTIME; rocelab maps CLOCK_MONOTONIC through
// it (realtime - monotonic on each host), since CLOCK_MONOTONIC is slewed with it and only
// differs by steps.
//
// Pure core: the parsers take the text pmc printed and the fields ntp_adjtime filled; the
// readers that produce them are host_clock_reader.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"

namespace rocelab::agents::clock {

enum class sync_kind : std::uint8_t { none, ptp, ntp };

[[nodiscard]] const char* to_string(sync_kind k) noexcept;  // "none" | "ptp" | "ntp"
[[nodiscard]] std::optional<sync_kind> sync_kind_from_string(std::string_view text) noexcept;

struct clock_source {
  sync_kind kind = sync_kind::none;
  std::int64_t error_bound_ns = 0;      // 0 when kind is none
  std::int64_t estimated_error_ns = 0;  // ntp: esterror; ptp: |master_offset|
  std::string detail;                   // what was read, for reports ("ptp4l: gm 00a069.fffe.0b552d, offset 310 ns")

  [[nodiscard]] bool synchronised() const noexcept { return kind != sync_kind::none; }
};

// What pmc's TIME_STATUS_NP answer says.
struct pmc_time_status {
  std::int64_t master_offset_ns = 0;
  bool gm_present = false;
  std::string gm_identity;
};

// Parses pmc's output for 'GET TIME_STATUS_NP'. Errors (malformed_input): no
// TIME_STATUS_NP response (ptp4l not running answers nothing), a missing or malformed
// master_offset or gmPresent.
[[nodiscard]] result<pmc_time_status> parse_pmc_time_status(std::string_view pmc_output);

// The fields of struct timex this needs (ntp_adjtime with modes 0), and its return value.
struct timex_reading {
  int state = 0;             // the return value: TIME_OK .. TIME_ERROR (5)
  int status = 0;            // STA_* bits
  long maxerror_us = 0;
  long esterror_us = 0;
};

inline constexpr int time_error_state = 5;   // TIME_ERROR
inline constexpr int sta_unsync_bit = 0x0040; // STA_UNSYNC
inline constexpr std::int64_t phc_to_system_allowance_ns = 1'000;

// The kernel clock's state alone: ntp when synchronised, else none (detail says why).
[[nodiscard]] clock_source clock_source_from_timex(const timex_reading& t);

// The host's source from both readings: ptp when pmc answered with a grandmaster and the
// kernel clock is synchronised, else what the kernel says. `pmc` is the parse of pmc's
// answer or why there is none (not installed, ptp4l not running); it goes into detail.
[[nodiscard]] clock_source choose_clock_source(const result<pmc_time_status>& pmc, const timex_reading& kernel);

}  // namespace rocelab::agents::clock
