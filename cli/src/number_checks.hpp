#pragma once
// Checks for numeric options: the number must parse whole, be finite and lie within a
// range that makes sense for it. CLI11's PositiveNumber and Range let NaN through
// (every comparison with NaN is false), and a rate of 1e30 or 1e-30 Gb/s overflows or
// rounds every derived time to zero.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <sstream>
#include <string>

namespace rocelab::cli {

[[nodiscard]] inline CLI::Validator finite_in(double lo, double hi, const std::string& unit) {
  const auto number = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  const std::string range = number(lo) + ".." + number(hi) + (unit.empty() ? "" : " " + unit);
  return CLI::Validator(
      [lo, hi, range](const std::string& text) -> std::string {
        double v = 0;
        const char* first = text.data();
        const char* last = text.data() + text.size();
        if (first != last && *first == '+') ++first;
        const auto [end, ec] = std::from_chars(first, last, v);
        if (ec != std::errc{} || end != last || !std::isfinite(v)) return "'" + text + "' is not a finite number";
        if (v < lo || v > hi) return text + " is outside " + range;
        return {};
      },
      range, "finite number");
}

}  // namespace rocelab::cli
