#pragma once
// A 95% confidence interval as every tuning JSON writes it (level, method, n, mean,
// stddev, half_width, low, high).
#include <nlohmann/json.hpp>

#include "rocelab/experiments/tuning/tuning_answer.hpp"

namespace rocelab::experiments {

[[nodiscard]] nlohmann::json ci_json(const confidence_interval& ci);

}  // namespace rocelab::experiments
