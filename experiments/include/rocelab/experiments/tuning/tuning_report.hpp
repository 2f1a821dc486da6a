#pragma once
// The HTML page of a tuning (`rocelab tune` writes it as tuning.html beside the exports):
// the verdict in words, the recommendation beside the baselines (objective on the search
// seeds, mean and 95% confidence interval on the fresh seeds, the paired difference), the
// values at the edge of their ranges, and the trade-off the objective weighs as an SVG
// scatter of every trial and baseline with the Pareto front highlighted.
// Pure: text in, text out; one self-contained HTML file (svg.hpp).

#include <string>

#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"

namespace rocelab::experiments {

// `title`: the sweep's name and id, for the heading.
[[nodiscard]] std::string tuning_report_html(const std::string& title, const tuning_settings& settings,
                                             const tuning_answer& answer);

// The trade-off scatter alone (<svg id="pareto">): every point grey, the front's points
// and the line through them in colour, the baselines labelled.
[[nodiscard]] std::string pareto_svg(const tuning_answer& answer);

}  // namespace rocelab::experiments
