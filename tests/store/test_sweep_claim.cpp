// One writer per sweep: the claim's lock file beside a real store, held by this process,
// by another live process, and by one killed with SIGKILL (taken over).
#include "rocelab/store/sweep_claim.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::temp_dir;

TEST(sweep_claim, a_second_claim_is_refused_naming_the_holder_and_released_claims_leave_no_file) {
  temp_dir dir;
  const auto db = dir.file("runs.db");
  auto first = sweep_claim::take(db, 3);
  ASSERT_TRUE(first.ok()) << first.error().message();
  auto second = sweep_claim::take(db, 3);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code(), error_code::unavailable);
  EXPECT_NE(second.error().message().find("sweep 3 is being run by process " + std::to_string(::getpid())),
            std::string::npos)
      << second.error().message();
  EXPECT_TRUE(sweep_claim::take(db, 4).ok()) << "another sweep is another claim";
  *first = sweep_claim();
  EXPECT_FALSE(std::filesystem::exists(sweep_claim::lock_path(db, 3)));
  EXPECT_TRUE(sweep_claim::take(db, 3).ok());
}

TEST(sweep_claim, another_processs_claim_is_refused_while_it_lives_and_taken_over_once_it_is_killed) {
  temp_dir dir;
  const auto db = dir.file("runs.db");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    auto claim = sweep_claim::take(db, 7);
    const char c = claim.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto refused = sweep_claim::take(db, 7);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("process " + std::to_string(child)), std::string::npos)
      << refused.error().message();
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  auto taken = sweep_claim::take(db, 7);
  EXPECT_TRUE(taken.ok()) << "a killed holder's claim is taken over: " << taken.error().message();
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace rocelab::store
