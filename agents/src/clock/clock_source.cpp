#include "rocelab/agents/clock/clock_source.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace rocelab::agents::clock {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string microseconds_text(std::int64_t ns) { return std::to_string(ns / 1000) + " us"; }

// "0.000006523 seconds slow of NTP time", "-0.000006747 seconds": the leading number.
std::optional<double> seconds_value(std::string_view value) {
  const std::string text(value.substr(0, value.find(' ')));
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

const char* to_string(sync_kind k) noexcept {
  switch (k) {
    case sync_kind::ptp: return "ptp";
    case sync_kind::ntp: return "ntp";
    case sync_kind::none: break;
  }
  return "none";
}

std::optional<sync_kind> sync_kind_from_string(std::string_view text) noexcept {
  if (text == "none") return sync_kind::none;
  if (text == "ptp") return sync_kind::ptp;
  if (text == "ntp") return sync_kind::ntp;
  return std::nullopt;
}

// pmc prints the request ("sending: GET TIME_STATUS_NP"), then per answering port a line
// "<port identity> seq N RESPONSE MANAGEMENT TIME_STATUS_NP" (MANAGMENT in older
// linuxptp) and one "name value" line per field. The first response counts.
result<pmc_time_status> parse_pmc_time_status(std::string_view text) {
  pmc_time_status out;
  bool in_response = false, have_offset = false, have_gm = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.find("RESPONSE") != std::string_view::npos) {
      if (in_response) break;  // a second port's answer
      in_response = line.find("TIME_STATUS_NP") != std::string_view::npos;
      continue;
    }
    if (!in_response) continue;
    const auto space = line.find_first_of(" \t");
    if (space == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, space), value = trim(line.substr(space));
    if (key == "master_offset") {
      const char* first = value.data();
      if (!value.empty() && value.front() == '+') ++first;
      const auto [end, ec] = std::from_chars(first, value.data() + value.size(), out.master_offset_ns);
      if (ec != std::errc() || end != value.data() + value.size())
        return status(error_code::malformed_input, "pmc TIME_STATUS_NP: master_offset '" + std::string(value) + "' is not an integer");
      have_offset = true;
    } else if (key == "gmPresent") {
      if (value != "true" && value != "false")
        return status(error_code::malformed_input, "pmc TIME_STATUS_NP: gmPresent '" + std::string(value) + "' is not true or false");
      out.gm_present = value == "true";
      have_gm = true;
    } else if (key == "gmIdentity") {
      out.gm_identity = std::string(value);
    }
  }
  if (!have_offset && !have_gm) return status(error_code::malformed_input, "pmc: no TIME_STATUS_NP response (is ptp4l running?)");
  if (!have_offset) return status(error_code::malformed_input, "pmc TIME_STATUS_NP: no master_offset");
  if (!have_gm) return status(error_code::malformed_input, "pmc TIME_STATUS_NP: no gmPresent");
  return out;
}

bool chrony_tracking::refclock() const {
  if (reference_id == 0 || reference_name.empty() || reference_name.size() > 4) return false;
  std::string ascii;
  for (int shift = 24; shift >= 0; shift -= 8) {
    const char c = static_cast<char>((reference_id >> shift) & 0xff);
    if (c != 0) ascii += c;
  }
  return ascii == reference_name;
}

bool chrony_tracking::phc_refclock() const { return refclock() && reference_name.rfind("PHC", 0) == 0; }

std::int64_t chrony_tracking::error_bound_ns() const {
  const double s = std::fabs(system_time_offset_s) + root_dispersion_s + 0.5 * root_delay_s;
  return static_cast<std::int64_t>(std::ceil(s * 1e9));
}

// chronyc prints one "Name<padding>: value" line per field (client.c, process_cmd_tracking).
result<chrony_tracking> parse_chronyc_tracking(std::string_view text) {
  chrony_tracking out;
  bool have_id = false, have_system = false, have_delay = false, have_dispersion = false, have_leap = false;
  const auto bad = [](const char* field, std::string_view value) {
    return status(error_code::malformed_input,
                  std::string("chronyc tracking: ") + field + " '" + std::string(value) + "' is not a number");
  };
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "Reference ID") {
      const std::string_view hex = value.substr(0, value.find(' '));
      const auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), out.reference_id, 16);
      if (ec != std::errc() || end != hex.data() + hex.size())
        return status(error_code::malformed_input,
                      "chronyc tracking: Reference ID '" + std::string(value) + "' is not hexadecimal");
      const auto open = value.find('('), close = value.rfind(')');
      if (open != std::string_view::npos && close != std::string_view::npos && close > open)
        out.reference_name = std::string(value.substr(open + 1, close - open - 1));
      have_id = true;
    } else if (key == "Stratum") {
      (void)std::from_chars(value.data(), value.data() + value.size(), out.stratum);
    } else if (key == "System time") {
      const auto v = seconds_value(value);
      if (!v) return bad("System time", value);
      out.system_time_offset_s = std::fabs(*v);
      have_system = true;
    } else if (key == "Root delay") {
      const auto v = seconds_value(value);
      if (!v) return bad("Root delay", value);
      out.root_delay_s = *v;
      have_delay = true;
    } else if (key == "Root dispersion") {
      const auto v = seconds_value(value);
      if (!v) return bad("Root dispersion", value);
      out.root_dispersion_s = *v;
      have_dispersion = true;
    } else if (key == "Leap status") {
      out.leap_status = std::string(value);
      have_leap = true;
    }
  }
  if (!have_id) return status(error_code::malformed_input, "chronyc tracking: no Reference ID (is chronyd running?)");
  if (!have_system) return status(error_code::malformed_input, "chronyc tracking: no System time");
  if (!have_delay) return status(error_code::malformed_input, "chronyc tracking: no Root delay");
  if (!have_dispersion) return status(error_code::malformed_input, "chronyc tracking: no Root dispersion");
  if (!have_leap) return status(error_code::malformed_input, "chronyc tracking: no Leap status");
  return out;
}

clock_source clock_source_from_timex(const timex_reading& t) {
  clock_source s;
  const bool unsync = (t.status & sta_unsync_bit) != 0 || t.state == time_error_state;
  const std::string numbers = "maxerror " + std::to_string(t.maxerror_us) + " us, esterror " +
                              std::to_string(t.esterror_us) + " us";
  if (unsync) {
    s.detail = std::string("kernel clock not synchronised (") +
               ((t.status & sta_unsync_bit) != 0 ? "STA_UNSYNC" : "TIME_ERROR") + ", " + numbers + ")";
    return s;
  }
  s.kind = sync_kind::ntp;
  s.error_bound_ns = static_cast<std::int64_t>(t.maxerror_us) * 1000;
  s.estimated_error_ns = static_cast<std::int64_t>(t.esterror_us) * 1000;
  s.detail = "kernel clock synchronised by chrony or ntpd (" + numbers + ")";
  return s;
}

clock_source choose_clock_source(const result<pmc_time_status>& pmc, const timex_reading& kernel,
                                 const clock_discipline& discipline) {
  clock_source k = clock_source_from_timex(kernel);
  const chrony_tracking* chrony =
      discipline.chrony && discipline.chrony->synchronised() ? &*discipline.chrony : nullptr;
  std::string chrony_text;
  if (chrony) {
    const std::string name = chrony->reference_name.empty() ? std::string("an unnamed source") : chrony->reference_name;
    chrony_text = "chronyd following " + name + " (stratum " + std::to_string(chrony->stratum) + ", bound " +
                  microseconds_text(chrony->error_bound_ns()) + ")";
  } else if (!discipline.chrony) {
    chrony_text = "no chrony: " + discipline.chrony.error().message();
  } else {
    chrony_text = "chronyd not synchronised";
  }
  if (k.synchronised() && chrony) {
    // chronyd's bound is computed at the reading; maxerror only grows between its updates.
    k.error_bound_ns = chrony->error_bound_ns();
    k.estimated_error_ns = static_cast<std::int64_t>(chrony->system_time_offset_s * 1e9);
    k.detail = "kernel clock synchronised by " + chrony_text;
  } else {
    k.detail += "; " + chrony_text;
  }
  if (discipline.phc2sys_running) k.detail += "; phc2sys running";
  if (!pmc) {
    k.detail += "; no PTP: " + pmc.error().message();
  } else {
    const std::string gm = pmc->gm_present ? "grandmaster " + pmc->gm_identity : std::string("no grandmaster");
    const std::int64_t offset = std::llabs(pmc->master_offset_ns);
    if (pmc->gm_present && k.synchronised() && (discipline.phc2sys_running || (chrony && chrony->phc_refclock()))) {
      clock_source s;
      s.kind = sync_kind::ptp;
      s.estimated_error_ns = offset;
      s.error_bound_ns = offset + (discipline.phc2sys_running ? phc_to_system_allowance_ns : chrony->error_bound_ns());
      s.detail = "ptp4l: " + gm + ", master_offset " + std::to_string(pmc->master_offset_ns) +
                 " ns; system clock disciplined from the PHC by " +
                 (discipline.phc2sys_running ? std::string("phc2sys") : chrony_text) + ", bound " +
                 microseconds_text(s.error_bound_ns);
      return s;
    }
    k.detail += "; ptp4l: " + gm;
    if (pmc->gm_present && k.synchronised())
      k.detail += ", but nothing disciplines the system clock from the PHC (no phc2sys, no chrony PHC refclock)";
  }
  // A PHC that ptp4l does not steer to a grandmaster runs free: a clock chronyd follows
  // closely, but not the lab's time.
  if (k.synchronised() && chrony && chrony->phc_refclock() && !discipline.phc2sys_running &&
      (!pmc || !pmc->gm_present)) {
    clock_source s;
    s.detail = "chronyd follows " + chrony->reference_name + ", a PHC without a PTP grandmaster (" + k.detail + ")";
    return s;
  }
  return k;
}

}  // namespace rocelab::agents::clock
