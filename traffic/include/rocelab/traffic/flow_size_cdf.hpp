#pragma once
// A flow-size distribution given as points of its CDF (size in bytes, cumulative
// probability), sampled by inverse transform with linear interpolation between points,
// which is how the published data-centre CDFs are used in simulation (pFabric, HPCC).
//
// File format (traffic/cdf/*.cdf): one "flow_size_bytes cumulative_probability" pair per
// line; '#' starts a comment; blank lines are ignored. Sizes and probabilities never
// decrease and the last probability is 1. A file whose last probability is 100 is read
// as percent (the HPCC traffic generator's format). A first point with probability p > 0
// is an atom: that size with probability p.
//
// Built in: websearch (DCTCP paper) and hadoop (Facebook, SIGCOMM 2015); see the data
// files for their sources.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::traffic {

struct cdf_point {
  double bytes = 0;
  double probability = 0;  // 0..1
};

class flow_size_cdf {
 public:
  // Validates the points (at least one, non-decreasing, last probability 1).
  [[nodiscard]] static result<flow_size_cdf> from_points(std::vector<cdf_point> points);
  // Parses the file format above; errors name `source` and the line.
  [[nodiscard]] static result<flow_size_cdf> parse(std::string_view text, const std::string& source);
  [[nodiscard]] static result<flow_size_cdf> load_file(const std::string& path);
  // "websearch" or "hadoop"; not_found otherwise.
  [[nodiscard]] static result<flow_size_cdf> builtin(std::string_view name);
  [[nodiscard]] static std::vector<std::string> builtin_names();

  // The size at cumulative probability p (0..1), linear between points.
  [[nodiscard]] double quantile(double p) const;
  // A flow size for a uniform draw u in [0, 1): at least 1 byte, rounded to whole bytes.
  [[nodiscard]] std::uint64_t sample(double u) const;
  // The mean of the interpolated distribution (before rounding).
  [[nodiscard]] double mean_bytes() const;
  [[nodiscard]] const std::vector<cdf_point>& points() const { return points_; }
  // Where it came from: a built-in name or a file path (for reports).
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::vector<cdf_point> points_;
  std::string name_;
};

// The text of a built-in CDF file (compiled in from traffic/cdf/), empty if unknown.
[[nodiscard]] std::string_view builtin_cdf_text(std::string_view name);

}  // namespace rocelab::traffic
