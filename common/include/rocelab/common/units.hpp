#pragma once
// Text <-> quantities for spec files, `--set` and reports: sizes, rates and durations.
//
// Grammar: a decimal number (digits, optional fraction, optional exponent) followed
// directly or after spaces by a unit. Units are case-sensitive, because "Mb" (megabits)
// and "MB" (megabytes) differ by 8x and a silent guess is worse than an error.
//
//   size      B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024);
//             a plain number is bytes. The result must be a whole number of bytes
//             ("1.5KiB" is 1536; "0.5B" is an error).
//   rate      bps, Kbps, Mbps, Gbps, Tbps, also written b/s, Kb/s, Mb/s, Gb/s, Tb/s (bits
//             per second, powers of 1000); a plain number is bits per second. A bare "G"
//             ("400G") is rejected: it does not say bits or bytes. Byte rates (GB/s) are
//             rejected too, for the same reason: link speeds are quoted in bits.
//   duration  ns, us, ms, s (also "µs"); a plain number is nanoseconds. The result must be
//             a whole number of nanoseconds.
//
// Errors (invalid_argument) quote the text and say what was expected. Pure functions: no
// locale, no globals.

#include <cstdint>
#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"

namespace rocelab {

[[nodiscard]] result<std::int64_t> parse_size_bytes(std::string_view text);
[[nodiscard]] result<double> parse_rate_bps(std::string_view text);
[[nodiscard]] result<std::int64_t> parse_duration_ns(std::string_view text);

// The shortest exact spelling with the largest unit that divides the value:
// 65536 -> "64KiB", 20000 -> "20KB", 1000 -> "1KB", 1500 -> "1500B".
[[nodiscard]] std::string format_size(std::int64_t bytes);
// 100e9 -> "100Gbps", 2.5e10 -> "25Gbps", 1.5e9 -> "1.5Gbps".
[[nodiscard]] std::string format_rate(double bps);
// 1000 -> "1us", 1500 -> "1500ns", 2'000'000 -> "2ms".
[[nodiscard]] std::string format_duration(std::int64_t ns);

// A measured time as a reader takes it in: three significant digits in the largest unit
// that keeps the number at least 1: 295779981 -> "296 ms", 1311 -> "1.31 us",
// 850 -> "850 ns", 0 -> "0 ns". Not for round-tripping (format_duration is exact).
[[nodiscard]] std::string readable_duration(double ns);

}  // namespace rocelab
