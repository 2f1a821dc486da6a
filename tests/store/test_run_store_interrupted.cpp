#include "rocelab/store/run_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::temp_dir;

// Begins a run in a child process that then exits without finishing it (as a controller
// that crashed would), and returns the child's pid after reaping it.
pid_t begin_run_in_child(const std::string& path, std::int64_t& run_id) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto store = run_store::open(path);
    std::int64_t id = -1;
    if (store.ok()) {
      run_records r;
      r.hosts = {"h1", "h2"};
      r.flows = testing::make_flows(3, 0, 2);
      if (auto begun = store->begin_run({"child", "twin", 1, "", {}, std::nullopt}); begun.ok() &&
                                                                                    store->append(*begun, r).ok())
        id = *begun;
    }
    (void)!::write(fds[1], &id, sizeof id);
    ::_exit(0);
  }
  ::close(fds[1]);
  run_id = -1;
  EXPECT_EQ(::read(fds[0], &run_id, sizeof run_id), static_cast<ssize_t>(sizeof run_id));
  ::close(fds[0]);
  int wstatus = 0;
  EXPECT_EQ(::waitpid(pid, &wstatus, 0), pid);
  return pid;
}

TEST(run_store_interrupted, a_run_whose_owner_is_gone_is_marked_interrupted_and_keeps_its_records) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t id = 0;
  const pid_t child = begin_run_in_child(path, id);
  ASSERT_GT(id, 0);

  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto info = store->run(id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, run_status::interrupted);
  EXPECT_NE(info->error.find("owner process " + std::to_string(child)), std::string::npos) << info->error;
  auto records = store->load(id);
  ASSERT_TRUE(records.ok());
  EXPECT_EQ(records->flows.size(), 3u);
}

TEST(run_store_interrupted, a_read_only_open_marks_nothing) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t id = 0;
  begin_run_in_child(path, id);
  ASSERT_GT(id, 0);
  auto reader = run_store::open(path, open_mode::read_only);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->run(id)->status, run_status::running);
}

TEST(run_store_interrupted, live_owners_and_other_hosts_runs_stay_running) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t mine = 0;
  std::int64_t remote = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
    mine = *store->begin_run({"mine", "twin", 1, "", {}, std::nullopt});
    remote = *store->begin_run({"remote", "lab", 1, "", {}, std::nullopt});
  }
  // The remote run's owner is a process on another host, which this host cannot judge.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE runs SET owner_host = 'some-other-host', owner_pid = 1 WHERE id = " +
                          std::to_string(remote);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->run(mine)->status, run_status::running);
  EXPECT_EQ(store->run(remote)->status, run_status::running);
}

TEST(run_store_interrupted, a_reused_pid_is_not_taken_for_the_owner) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t id = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
    id = *store->begin_run({"x", "twin", 1, "", {}, std::nullopt});
  }
  // Our own pid, but a start time that is not ours: the owner was an earlier process
  // that had this pid.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql = "UPDATE runs SET owner_start_ticks = owner_start_ticks + 12345 WHERE id = " + std::to_string(id);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->run(id)->status, run_status::interrupted);
}

}  // namespace
}  // namespace rocelab::store
