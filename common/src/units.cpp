#include "rocelab/common/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace rocelab {
namespace {

struct unit {
  std::string_view name;
  double scale;
};

constexpr std::array size_units{
    unit{"B", 1.0},
    unit{"KB", 1e3},  unit{"MB", 1e6},  unit{"GB", 1e9},  unit{"TB", 1e12},
    unit{"KiB", 1024.0}, unit{"MiB", 1048576.0}, unit{"GiB", 1073741824.0},
    unit{"TiB", 1099511627776.0},
};

constexpr std::array rate_units{
    unit{"bps", 1.0},  unit{"Kbps", 1e3},  unit{"Mbps", 1e6},  unit{"Gbps", 1e9},  unit{"Tbps", 1e12},
    unit{"b/s", 1.0},  unit{"Kb/s", 1e3},  unit{"Mb/s", 1e6},  unit{"Gb/s", 1e9},  unit{"Tb/s", 1e12},
};

constexpr std::array duration_units{
    unit{"ns", 1.0}, unit{"us", 1e3}, unit{"\xC2\xB5s", 1e3}, unit{"ms", 1e6}, unit{"s", 1e9},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

status bad(std::string_view what, std::string_view text, std::string_view expected) {
  return {error_code::invalid_argument,
          "'" + std::string(text) + "' is not a " + std::string(what) + " (" + std::string(expected) + ")"};
}

// Splits "1.5 MiB" into 1.5 and "MiB"; the number must be finite and non-negative.
template <std::size_t N>
result<double> parse_quantity(std::string_view original, const std::array<unit, N>& units, double plain_scale,
                              std::string_view what, std::string_view expected) {
  const std::string_view text = trim(original);
  double number = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, number, std::chars_format::general);
  if (ec != std::errc{} || first == last || !std::isfinite(number)) return bad(what, original, expected);
  if (number < 0) return bad(what, original, "must not be negative");
  const std::string_view suffix = trim(std::string_view(end, static_cast<std::size_t>(last - end)));
  double scale = 0;
  if (suffix.empty()) scale = plain_scale;
  for (const unit& u : units)
    if (u.name == suffix) scale = u.scale;
  if (scale == 0) return bad(what, original, expected);
  // "1e306Tbps" is finite as written and infinite in the base unit.
  if (!std::isfinite(number * scale)) return bad(what, original, "too large");
  return number * scale;
}

result<std::int64_t> whole(double value, std::string_view what, std::string_view text, std::string_view unit_name) {
  if (value >= 9.2e18) return bad(what, text, "too large");
  const double rounded = std::round(value);
  // Decimal fractions are not exact in binary ("1.1KB" = 1100.0000000000002): accept a
  // relative error far below one unit.
  if (std::fabs(value - rounded) > 1e-9 * std::max(1.0, std::fabs(value)))
    return bad(what, text, "not a whole number of " + std::string(unit_name));
  return static_cast<std::int64_t>(rounded);
}

// "64" + "KiB" when value is a whole multiple of scale, with a fraction otherwise when
// allow_fraction.
template <std::size_t N>
std::string format_with(double value, const std::array<unit, N>& units, std::size_t count, bool allow_fraction) {
  // Units are tried from the largest down; the first that divides exactly wins.
  for (std::size_t i = count; i-- > 0;) {
    const unit& u = units[i];
    if (value == 0) break;
    const double q = value / u.scale;
    if (q < 1) continue;
    if (q == std::floor(q) && q < 1e15) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.0f%.*s", q, static_cast<int>(u.name.size()), u.name.data());
      return buf;
    }
    if (allow_fraction) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.12g%.*s", q, static_cast<int>(u.name.size()), u.name.data());
      // Only use the fraction if it round-trips.
      double back = 0;
      std::from_chars(buf, buf + std::string_view(buf).size() - u.name.size(), back);
      if (back * u.scale == value) return buf;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g%.*s", value, static_cast<int>(units[0].name.size()), units[0].name.data());
  return buf;
}

}  // namespace

result<std::int64_t> parse_size_bytes(std::string_view text) {
  auto v = parse_quantity(text, size_units, 1.0, "size", "a number of bytes with B, KB, MB, GB, KiB, MiB or GiB");
  if (!v) return v.error();
  return whole(*v, "size", text, "bytes");
}

result<double> parse_rate_bps(std::string_view text) {
  return parse_quantity(text, rate_units, 1.0, "rate", "a number with bps, Kbps, Mbps, Gbps, Tbps or Gb/s ...");
}

result<std::int64_t> parse_duration_ns(std::string_view text) {
  auto v = parse_quantity(text, duration_units, 1.0, "duration", "a number with ns, us, ms or s");
  if (!v) return v.error();
  return whole(*v, "duration", text, "nanoseconds");
}

std::string format_size(std::int64_t bytes) {
  if (bytes <= 0) return std::to_string(bytes) + "B";
  // Binary units first (buffers are powers of two), then decimal ones.
  constexpr std::array binary{size_units[0], size_units[5], size_units[6], size_units[7], size_units[8]};
  constexpr std::array decimal{size_units[0], size_units[1], size_units[2], size_units[3], size_units[4]};
  const auto v = static_cast<double>(bytes);
  const std::string b = format_with(v, binary, binary.size(), false);
  const std::string d = format_with(v, decimal, decimal.size(), false);
  return d.size() < b.size() ? d : b;
}

std::string format_rate(double bps) {
  constexpr std::array units{rate_units[0], rate_units[1], rate_units[2], rate_units[3], rate_units[4]};
  if (bps <= 0) return "0bps";
  return format_with(bps, units, units.size(), true);
}

std::string format_duration(std::int64_t ns) {
  constexpr std::array units{duration_units[0], duration_units[1], duration_units[3], duration_units[4]};
  if (ns <= 0) return std::to_string(ns) + "ns";
  return format_with(static_cast<double>(ns), units, units.size(), false);
}

std::string readable_duration(double ns) {
  if (!std::isfinite(ns)) return "-";
  if (ns == 0) return "0 ns";
  // Round to three significant digits first, so 999.7 us reads "1.00 ms", not "1000 us".
  const double digits = std::floor(std::log10(std::fabs(ns)));
  const double step = std::pow(10.0, digits - 2);
  const double rounded = std::round(ns / step) * step;
  const double magnitude = std::fabs(rounded);
  const char* unit = "ns";
  double value = rounded;
  if (magnitude >= 1e9) unit = "s", value = rounded / 1e9;
  else if (magnitude >= 1e6) unit = "ms", value = rounded / 1e6;
  else if (magnitude >= 1e3) unit = "us", value = rounded / 1e3;
  const double v = std::fabs(value);
  const int decimals = v >= 100 || magnitude < 1e3 ? 0 : v >= 10 ? 1 : 2;
  char b[48];
  std::snprintf(b, sizeof b, "%.*f %s", decimals, value, unit);
  return b;
}

}  // namespace rocelab
