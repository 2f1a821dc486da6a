#pragma once
// Which clock this host keeps in step with the lab, and how far off it may be.
//
// Sources, best first:
//   ptp  linuxptp: ptp4l has a grandmaster (`pmc -u -b 0 'GET TIME_STATUS_NP'`: gmPresent
//        true), the kernel clock is synchronised, and there is evidence that the system
//        clock is disciplined from the NIC's clock (PHC), which pmc cannot see: a phc2sys
//        process, or chronyd whose reference is a PHC refclock (`chronyc tracking`:
//        "Reference ID : 50484330 (PHC0)"). The kernel's STA_UNSYNC alone is no evidence:
//        chronyd clears it too (and rtcsync keeps it clear) when it follows an NTP server.
//        Bound: |master_offset| (the PHC against the grandmaster at its last sync) plus
//        phc_to_system_allowance_ns for phc2sys, or plus chrony's bound for a PHC refclock.
//   ntp  chrony or ntpd: ntp_adjtime(2) read-only says synchronised (STA_UNSYNC clear, not
//        TIME_ERROR). Bound: chrony's own (chronyc.adoc, tracking: |System time| + Root
//        dispersion + Root delay / 2) when chronyd answers, else maxerror (the kernel's
//        maximum error, which the daemon sets and the kernel grows by 500 ppm between
//        updates); esterror is kept as estimated_error_ns.
//   none neither, or chronyd following a PHC that ptp4l does not steer to a grandmaster
//        (a free-running NIC clock): rocelab estimates each agent's offset itself
//        (protocol/clock_offset.hpp).
// The clock the bound applies to is CLOCK_REALTIME; rocelab maps CLOCK_MONOTONIC through
// it (realtime - monotonic on each host), since CLOCK_MONOTONIC is slewed with it and only
// differs by steps.
//
// Pure core: the parsers take the text pmc and chronyc printed and the fields ntp_adjtime
// filled; the readers that produce them are host_clock_reader.hpp.

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

// What `chronyc -n tracking` prints (chrony's doc/chronyc.adoc, "tracking"), the fields
// the source and its bound need.
struct chrony_tracking {
  std::uint32_t reference_id = 0;  // "Reference ID    : 50484330 (PHC0)": 0x50484330
  std::string reference_name;      // in the parentheses: an address, a name, or a refclock's refid
  int stratum = 0;
  double system_time_offset_s = 0;  // |System time|: how far the system clock still is from chronyd's time
  double root_delay_s = 0;
  double root_dispersion_s = 0;
  std::string leap_status;  // "Normal", "Insert second", "Delete second", "Not synchronised"

  [[nodiscard]] bool synchronised() const noexcept { return leap_status != "Not synchronised"; }
  // A local reference clock: chronyc names a refclock by its refid, the reference ID's
  // four bytes as ASCII; a server is named by its address or host name.
  [[nodiscard]] bool refclock() const;
  // A refclock of chrony's PHC driver, whose refid is "PHC<n>" unless the refclock line
  // sets another (chrony.conf.adoc, refclock: refid defaults to the driver's name and index).
  [[nodiscard]] bool phc_refclock() const;
  // chronyc.adoc: clock_error <= |system_time_offset| + root_dispersion + 0.5 * root_delay.
  [[nodiscard]] std::int64_t error_bound_ns() const;
};

// Parses `chronyc tracking` output. Errors (malformed_input): a required line (Reference
// ID, System time, Root delay, Root dispersion, Leap status) missing or not a number.
[[nodiscard]] result<chrony_tracking> parse_chronyc_tracking(std::string_view chronyc_output);

// What says who disciplines the system clock, beyond the kernel's flags.
struct clock_discipline {
  bool phc2sys_running = false;  // a phc2sys process on this host
  // chronyc tracking, parsed; an error: chronyd not running, chronyc not installed, ...
  result<chrony_tracking> chrony = status(error_code::not_found, "chronyc tracking not read");
};

// The kernel clock's state alone: ntp when synchronised, else none (detail says why).
[[nodiscard]] clock_source clock_source_from_timex(const timex_reading& t);

// The host's source from all readings (the rules at the top of this file). `pmc` is the
// parse of pmc's answer or why there is none (not installed, ptp4l not running); it and
// the discipline evidence go into detail.
[[nodiscard]] clock_source choose_clock_source(const result<pmc_time_status>& pmc, const timex_reading& kernel,
                                               const clock_discipline& discipline);

}  // namespace rocelab::agents::clock
