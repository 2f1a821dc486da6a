#include "rocelab/agents/clock/clock_source.hpp"

#include <charconv>
#include <cstdlib>
#include <vector>

namespace rocelab::agents::clock {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string microseconds_text(std::int64_t ns) { return std::to_string(ns / 1000) + " us"; }

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

clock_source choose_clock_source(const result<pmc_time_status>& pmc, const timex_reading& kernel) {
  clock_source k = clock_source_from_timex(kernel);
  if (!pmc) {
    if (!k.detail.empty()) k.detail += "; ";
    k.detail += "no PTP: " + pmc.error().message();
    return k;
  }
  const std::string gm = pmc->gm_present ? "grandmaster " + pmc->gm_identity : std::string("no grandmaster");
  const std::int64_t offset = std::llabs(pmc->master_offset_ns);
  if (pmc->gm_present && k.synchronised()) {
    clock_source s;
    s.kind = sync_kind::ptp;
    s.estimated_error_ns = offset;
    s.error_bound_ns = offset + phc_to_system_allowance_ns;
    s.detail = "ptp4l: " + gm + ", master_offset " + std::to_string(pmc->master_offset_ns) +
               " ns; system clock disciplined (phc2sys), bound " + microseconds_text(s.error_bound_ns);
    return s;
  }
  // PTP without a grandmaster, or a system clock nobody disciplines from the PHC: the
  // kernel's own state stands.
  k.detail += std::string("; ptp4l: ") + gm +
              (pmc->gm_present ? " but the system clock is not disciplined from it (phc2sys?)" : "");
  return k;
}

}  // namespace rocelab::agents::clock
