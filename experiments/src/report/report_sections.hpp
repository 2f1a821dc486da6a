#pragma once
// The run report's sections that state the run's settings, set it beside other runs and
// the twin's prediction, and say in one sentence what each part of the page shows.
// Private to experiments/src (report.cpp assembles the page).

#include <string>
#include <vector>

#include "report/report_table.hpp"
#include "rocelab/experiments/report/report.hpp"

namespace rocelab::experiments::report_detail {

// Each returns an HTML fragment; empty when the analysis has nothing for it.
[[nodiscard]] std::string configuration_section(const run_analysis& a);
[[nodiscard]] std::string comparisons_section(const run_analysis& a);
[[nodiscard]] std::string sim_to_real_section(const run_analysis& a);
// Per-flow rates over time, this run's and the twin's replay of it (report_sharing.cpp).
[[nodiscard]] std::string sharing_section(const run_analysis& a);
[[nodiscard]] std::string files_section(const run_analysis& a);
// The run's all-reduce iterations with nccl-tests' algbw and busbw: the page's table and
// report.json's "allreduce".
[[nodiscard]] table allreduce_table(const run_analysis& a);
[[nodiscard]] std::string allreduce_section(const run_analysis& a);

// One sentence each (plain text, to be escaped by the caller).
[[nodiscard]] std::string summary_sentence(const run_analysis& a);
[[nodiscard]] std::string pauses_sentence(const run_analysis& a);
[[nodiscard]] std::string queues_sentence(const run_analysis& a);
[[nodiscard]] std::string attribution_sentence(const run_analysis& a);

}  // namespace rocelab::experiments::report_detail
