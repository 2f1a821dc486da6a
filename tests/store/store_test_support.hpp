#pragma once
// A temporary directory per test, removed afterwards, and record builders.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "rocelab/common/records.hpp"

#include "../support/temp_dir.hpp"

namespace rocelab::store::testing {

// Each test's directory is named after its folder, so leftovers say whose they are.
class temp_dir : public rocelab::testing::temp_dir {
 public:
  temp_dir() : rocelab::testing::temp_dir("rocelab-store") {}
};

// `n` flows from h<i % hosts> to h<(i+1) % hosts>, every field distinct per record so a
// swapped column shows.
inline std::vector<flow_record> make_flows(std::size_t n, std::uint64_t tag_base = 0, std::uint32_t hosts = 4) {
  std::vector<flow_record> flows(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& f = flows[i];
    f.src = static_cast<std::uint32_t>(i % hosts);
    f.dst = static_cast<std::uint32_t>((i + 1) % hosts);
    f.qp = static_cast<std::uint32_t>(0x100 + i);
    f.priority = static_cast<std::uint8_t>(i % 8);
    f.kind = static_cast<workload_kind>(i % 4);
    f.bytes = 1000 + i;
    f.start_ns = static_cast<std::int64_t>(10 * i);
    f.end_ns = i % 7 == 0 ? -1 : static_cast<std::int64_t>(10 * i + 5000);
    f.fct_ns = f.end_ns < 0 ? -1 : 5000;
    f.ideal_fct_ns = 1234 + static_cast<std::int64_t>(i);
    f.retransmits = i % 3;
    f.ce_marked = i % 5;
    f.cnps = i % 11;
    f.tag = tag_base + i;
  }
  return flows;
}

}  // namespace rocelab::store::testing
