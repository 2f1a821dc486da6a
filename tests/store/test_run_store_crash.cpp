#include "rocelab/store/run_store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::make_flows;
using testing::temp_dir;

constexpr std::size_t batch_flows = 300;
constexpr std::uint64_t tag_stride = 1'000'000;

// The child: opens the store, begins a run, reports its id, then appends batches in a
// loop and reports each batch number after append() returned ok. It never finishes: the
// parent kills it with SIGKILL.
[[noreturn]] void appending_child(const std::string& path, int report_fd) {
  auto store = run_store::open(path);
  if (!store.ok()) ::_exit(2);
  auto id = store->begin_run({"crash", "twin", 1, "", {}, std::nullopt});
  if (!id.ok()) ::_exit(3);
  std::int64_t message = *id;
  if (::write(report_fd, &message, sizeof message) != sizeof message) ::_exit(4);
  for (std::int64_t b = 0; b < 100000; ++b) {
    run_records r;
    r.hosts = {"h1", "h2", "h3", "h4"};
    r.devices = {"sw0"};
    r.flows = make_flows(batch_flows, static_cast<std::uint64_t>(b) * tag_stride);
    r.counters = {{0, 1, "tx_prio3_pause", b, static_cast<std::uint64_t>(b)}};
    if (!store->append(*id, r).ok()) ::_exit(5);
    if (::write(report_fd, &b, sizeof b) != sizeof b) ::_exit(6);
  }
  ::_exit(0);
}

// kill -9 of a writer at random moments (during open, begin_run and appends): afterwards
// the file passes integrity_check, the run is interrupted, every append the child saw
// succeed is there in full, and no append is there in part.
TEST(run_store_crash, kill_9_at_random_points_loses_nothing_committed) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<int> delay_us(0, 200'000);
  constexpr int kills = 8;
  std::size_t batches_checked = 0;

  for (int k = 0; k < kills; ++k) {
    SCOPED_TRACE("kill " + std::to_string(k));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      appending_child(path, fds[1]);
    }
    ::close(fds[1]);
    // The first kill comes early (often inside open or the schema migration); later ones
    // at random points of the append loop.
    std::this_thread::sleep_for(std::chrono::microseconds(k == 0 ? 300 : delay_us(rng)));
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(::waitpid(pid, &wstatus, 0), pid);

    std::vector<std::int64_t> reported;
    std::int64_t value = 0;
    while (::read(fds[0], &value, sizeof value) == sizeof value) reported.push_back(value);
    ::close(fds[0]);
    if (WIFEXITED(wstatus)) FAIL() << "the child ended by itself with status " << WEXITSTATUS(wstatus);

    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message();
    ASSERT_TRUE(store->check_integrity().ok()) << store->check_integrity().message();
    if (reported.empty()) continue;  // killed before its run began (or before reporting it)

    const std::int64_t run = reported.front();
    const std::vector<std::int64_t> batches(reported.begin() + 1, reported.end());
    auto info = store->run(run);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->status, run_status::interrupted);
    auto records = store->load(run);
    ASSERT_TRUE(records.ok());

    std::map<std::uint64_t, std::size_t> flows_per_batch;
    for (const auto& f : records->flows) ++flows_per_batch[f.tag / tag_stride];
    for (const auto& [b, n] : flows_per_batch) EXPECT_EQ(n, batch_flows) << "batch " << b << " is there in part";
    for (auto b : batches) EXPECT_EQ(flows_per_batch.count(static_cast<std::uint64_t>(b)), 1u) << "batch " << b << " lost";
    // At most one batch more than reported: the one committed just before the kill, whose
    // report the child did not get to write.
    EXPECT_LE(flows_per_batch.size(), batches.size() + 1);
    EXPECT_EQ(records->counters.size(), flows_per_batch.size());
    batches_checked += batches.size();
  }
  EXPECT_GT(batches_checked, 0u) << "no kill landed in the append loop: the test checked nothing";
  std::printf("kill -9 test: %zu committed batches checked over %d kills\n", batches_checked, kills);
}

}  // namespace
}  // namespace rocelab::store
