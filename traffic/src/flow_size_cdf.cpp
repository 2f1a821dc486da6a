#include "rocelab/traffic/flow_size_cdf.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "rocelab/common/bounded_file.hpp"

namespace rocelab::traffic {
namespace {

status bad(const std::string& what) { return {error_code::malformed_input, what}; }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

bool parse_double(std::string_view s, double& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && std::isfinite(out);
}

}  // namespace

result<flow_size_cdf> flow_size_cdf::from_points(std::vector<cdf_point> points) {
  if (points.empty()) return bad("a CDF needs at least one point");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const cdf_point& p = points[i];
    const std::string where = "point " + std::to_string(i + 1);
    if (!(p.bytes >= 0)) return bad(where + ": negative size");
    if (!(p.probability >= 0 && p.probability <= 1)) return bad(where + ": probability outside 0..1");
    if (i > 0 && p.bytes < points[i - 1].bytes) return bad(where + ": sizes must not decrease");
    if (i > 0 && p.probability < points[i - 1].probability) return bad(where + ": probabilities must not decrease");
  }
  if (std::fabs(points.back().probability - 1.0) > 1e-9) return bad("the last probability must be 1");
  points.back().probability = 1.0;
  flow_size_cdf cdf;
  cdf.points_ = std::move(points);
  return cdf;
}

result<flow_size_cdf> flow_size_cdf::parse(std::string_view text, const std::string& source) {
  std::vector<cdf_point> points;
  std::vector<int> lines;
  int line_no = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto gap = line.find_first_of(" \t,");
    cdf_point p;
    if (gap == std::string_view::npos || !parse_double(trim(line.substr(0, gap)), p.bytes) ||
        !parse_double(trim(line.substr(gap + 1)), p.probability))
      // The line itself is not quoted: an error may travel to another host than the file's.
      return bad(source + ":" + std::to_string(line_no) +
                 ": expected 'flow_size_bytes cumulative_probability' (two numbers)");
    points.push_back(p);
    lines.push_back(line_no);
  }
  if (points.empty()) return bad(source + ": no CDF points");
  // The HPCC traffic generator's files give percent (last value 100).
  if (points.back().probability > 1.0 + 1e-9)
    for (cdf_point& p : points) p.probability /= 100.0;
  auto cdf = from_points(points);
  if (!cdf) {
    // Name the line of the offending point where the message names one.
    std::string msg = cdf.error().message();
    if (msg.rfind("point ", 0) == 0) {
      const std::size_t index = std::stoul(msg.substr(6)) - 1;
      msg = std::to_string(lines[index]) + msg.substr(msg.find(':'));
      return bad(source + ":" + msg);
    }
    return bad(source + ": " + msg);
  }
  cdf->name_ = source;
  return cdf;
}

result<flow_size_cdf> flow_size_cdf::load_file(const std::string& path) {
  auto text = read_bounded_file(path, max_cdf_file_bytes, "CDF file");
  if (!text) return text.error();
  return parse(*text, path);
}

result<flow_size_cdf> flow_size_cdf::builtin(std::string_view name) {
  const std::string_view text = builtin_cdf_text(name);
  if (text.empty()) return status(error_code::not_found, "no built-in CDF '" + std::string(name) + "'");
  auto cdf = parse(text, std::string(name));
  if (!cdf) return cdf.error().with_context("built-in CDF");
  return cdf;
}

std::vector<std::string> flow_size_cdf::builtin_names() { return {"websearch", "hadoop"}; }

double flow_size_cdf::quantile(double p) const {
  p = std::clamp(p, 0.0, 1.0);
  if (p <= points_.front().probability) return points_.front().bytes;
  // First point whose probability reaches p; interpolate from its predecessor.
  const auto it = std::lower_bound(points_.begin(), points_.end(), p,
                                   [](const cdf_point& a, double v) { return a.probability < v; });
  if (it == points_.end()) return points_.back().bytes;
  const cdf_point& hi = *it;
  const cdf_point& lo = *(it - 1);
  const double span = hi.probability - lo.probability;
  if (span <= 0) return hi.bytes;
  return lo.bytes + (p - lo.probability) / span * (hi.bytes - lo.bytes);
}

std::uint64_t flow_size_cdf::sample(double u) const {
  const double bytes = std::round(quantile(u));
  return bytes < 1 ? 1 : static_cast<std::uint64_t>(bytes);
}

double flow_size_cdf::mean_bytes() const {
  // The atom at the first point, then each segment's uniform part (its midpoint).
  double mean = points_.front().probability * points_.front().bytes;
  for (std::size_t i = 1; i < points_.size(); ++i)
    mean += (points_[i].probability - points_[i - 1].probability) * (points_[i].bytes + points_[i - 1].bytes) / 2;
  return mean;
}

}  // namespace rocelab::traffic
