#include "rocelab/agents/nic/ethtool_stats.hpp"

#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <cstring>
#include <string>
#include <vector>

namespace rocelab::agents::nic {
namespace {

// A driver behind SIOCETHTOOL whose statistics set has counts[k] entries at its k-th
// request (the last count holds after that). In a set of n, entry i is named "s<n>_<i>"
// and holds n * 1000 + i: a name paired with a value of another set, or of another entry,
// shows (as mlx5 inserts its per-priority counters among the others). As the kernel does, it writes the
// set's current size into the reply, whatever the request's count; a reply that would not
// fit the caller's buffer is recorded as an overflow (and cut, so the test itself stays
// in bounds).
struct changing_driver {
  explicit changing_driver(std::vector<std::uint32_t> c) : counts(std::move(c)) {}
  std::vector<std::uint32_t> counts;
  std::size_t calls = 0;
  std::vector<std::string> overflows;

  std::uint32_t count_now() { return counts[std::min(calls++, counts.size() - 1)]; }

  status operator()(std::span<std::uint64_t> request, const char* what) {
    const std::size_t capacity = request.size() * sizeof(std::uint64_t);
    auto* bytes = reinterpret_cast<std::uint8_t*>(request.data());
    std::uint32_t cmd = 0;
    std::memcpy(&cmd, bytes, sizeof(cmd));
    const std::uint32_t n = count_now();
    auto fits = [&](std::size_t needed) {
      if (needed <= capacity) return true;
      overflows.push_back(std::string(what) + ": " + std::to_string(needed) + " bytes into " + std::to_string(capacity));
      return false;
    };
    if (cmd == ETHTOOL_GSSET_INFO) {
      auto* info = reinterpret_cast<ethtool_sset_info*>(bytes);
      info->sset_mask = 1ULL << ETH_SS_STATS;
      info->data[0] = n;
    } else if (cmd == ETHTOOL_GSTRINGS) {
      auto* s = reinterpret_cast<ethtool_gstrings*>(bytes);
      s->len = n;
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::size_t at = sizeof(ethtool_gstrings) + std::size_t{i} * ETH_GSTRING_LEN;
        if (!fits(at + ETH_GSTRING_LEN)) break;
        const std::string name = "s" + std::to_string(n) + "_" + std::to_string(i);
        std::memset(bytes + at, 0, ETH_GSTRING_LEN);
        std::memcpy(bytes + at, name.data(), name.size());
      }
    } else if (cmd == ETHTOOL_GSTATS) {
      auto* s = reinterpret_cast<ethtool_stats*>(bytes);
      s->n_stats = n;
      for (std::uint32_t i = 0; i < n; ++i) {
        const std::size_t at = sizeof(ethtool_stats) + std::size_t{i} * sizeof(std::uint64_t);
        if (!fits(at + sizeof(std::uint64_t))) break;
        const std::uint64_t v = std::uint64_t{n} * 1000 + i;
        std::memcpy(bytes + at, &v, sizeof(v));
      }
    } else {
      return {error_code::internal, "unexpected ethtool command"};
    }
    return status::success();
  }
};

result<std::vector<nic_counter>> read_from(changing_driver& d) {
  return read_ethtool_stats("eth-test", [&](std::span<std::uint64_t> r, const char* what) { return d(r, what); });
}

void expect_consistent(const std::vector<nic_counter>& counters, std::size_t n) {
  ASSERT_EQ(counters.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(counters[i].name, "s" + std::to_string(n) + "_" + std::to_string(i));
    EXPECT_EQ(counters[i].value, n * 1000 + i) << counters[i].name;
  }
}

TEST(ethtool_stats_seam, a_steady_set_is_read_in_one_pass) {
  changing_driver d{{12}};
  auto c = read_from(d);
  ASSERT_TRUE(c.ok()) << c.error().message();
  expect_consistent(*c, 12);
  EXPECT_EQ(d.calls, 3u);
  EXPECT_TRUE(d.overflows.empty());
}

// PFC enabled between GSSET_INFO and GSTRINGS: mlx5's per-priority counters appear.
TEST(ethtool_stats_seam, a_set_that_grows_after_the_count_never_overflows_and_is_read_again) {
  changing_driver d{{8, 40}};
  auto c = read_from(d);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_TRUE(d.overflows.empty()) << d.overflows.front();
  expect_consistent(*c, 40);
}

// Names from one set, values from another: the pairs would not belong together.
TEST(ethtool_stats_seam, a_set_that_changes_between_names_and_values_is_read_again) {
  changing_driver d{{20, 20, 12, 12}};
  auto c = read_from(d);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_TRUE(d.overflows.empty());
  expect_consistent(*c, 12);
}

TEST(ethtool_stats_seam, a_set_that_never_holds_still_is_an_error_after_bounded_attempts) {
  changing_driver d{{}};
  for (std::uint32_t i = 0; i < 100; ++i) d.counts.push_back(10 + i);
  auto c = read_from(d);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), error_code::unavailable);
  EXPECT_NE(c.error().message().find("eth-test"), std::string::npos) << c.error().message();
  EXPECT_LT(d.calls, 100u);
  EXPECT_TRUE(d.overflows.empty());
}

TEST(ethtool_stats_seam, an_empty_set_is_empty) {
  changing_driver d{{0}};
  auto c = read_from(d);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->empty());
}

}  // namespace
}  // namespace rocelab::agents::nic
