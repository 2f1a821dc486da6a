#include "rocelab/controller/trial_queue.hpp"

#include <gtest/gtest.h>

// The trial queue's rules: one trial per idle worker, a lost worker's trial re-queued at
// most twice and then failed with every reason, a second result for a trial dropped.

namespace rocelab::controller {
namespace {

TEST(trial_queue, assigns_in_order_one_trial_per_idle_worker) {
  trial_queue q;
  const auto a = q.add({"spec a", "a.yaml"});
  const auto b = q.add({"spec b", "b.yaml"});
  auto first = q.assign("w1");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->trial, a);
  EXPECT_EQ(first->attempt, 1u);
  EXPECT_FALSE(q.assign("w1")) << "a busy worker gets nothing more";
  auto second = q.assign("w2");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->trial, b);
  EXPECT_FALSE(q.assign("w3")) << "nothing left";
  EXPECT_EQ(q.running(), 2u);
  ASSERT_NE(q.work(b), nullptr);
  EXPECT_EQ(q.work(b)->spec_yaml, "spec b");
}

TEST(trial_queue, a_result_finishes_the_trial_and_frees_the_worker) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  q.add({"b", ""});
  ASSERT_TRUE(q.assign("w1"));
  auto done = q.complete("w1", a);
  ASSERT_TRUE(done);
  EXPECT_TRUE(done->completed);
  EXPECT_EQ(done->worker, "w1");
  EXPECT_EQ(done->attempts, 1u);
  EXPECT_TRUE(q.finished(a));
  EXPECT_TRUE(q.assign("w1")) << "idle again";
}

TEST(trial_queue, a_lost_worker_s_trial_goes_to_the_front_of_the_queue) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  const auto b = q.add({"b", ""});
  ASSERT_TRUE(q.assign("w1"));
  EXPECT_FALSE(q.worker_lost("w1", "heartbeat missed")) << "re-queued, not finished";
  auto again = q.assign("w2");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial, a) << "before b, which waited less";
  EXPECT_EQ(again->attempt, 2u);
  auto next = q.assign("w3");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->trial, b);
}

TEST(trial_queue, a_trial_lost_three_times_fails_with_every_reason) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  const char* why[] = {"connection closed", "heartbeat missed", "killed"};
  std::optional<trial_finish> failed;
  for (int i = 0; i < 3; ++i) {
    auto p = q.assign("w" + std::to_string(i));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->attempt, static_cast<std::uint32_t>(i + 1));
    failed = q.worker_lost("w" + std::to_string(i), why[i]);
    if (i < 2) {
      EXPECT_FALSE(failed) << "re-queue " << i + 1 << " of 2";
    }
  }
  ASSERT_TRUE(failed);
  EXPECT_FALSE(failed->completed);
  EXPECT_EQ(failed->trial, a);
  EXPECT_EQ(failed->attempts, 3u);
  for (const char* w : why) EXPECT_NE(failed->error.find(w), std::string::npos) << failed->error;
  EXPECT_NE(failed->error.find("worker w0 lost"), std::string::npos) << failed->error;
  EXPECT_FALSE(q.assign("w9")) << "a failed trial is not queued again";
  EXPECT_TRUE(q.finished(a));
}

TEST(trial_queue, a_second_result_for_a_trial_is_dropped) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  ASSERT_TRUE(q.assign("w1"));
  ASSERT_TRUE(q.worker_lost("w1", "heartbeat missed") == std::nullopt);
  ASSERT_TRUE(q.assign("w2"));
  // w1 was given up on but answers after all: the first result counts ...
  auto first = q.complete("w1", a);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->worker, "w1");
  // ... and w2's answer for the same trial is dropped, never landing twice.
  EXPECT_FALSE(q.complete("w2", a));
  EXPECT_FALSE(q.complete("w1", a));
}

TEST(trial_queue, a_result_from_a_worker_never_given_the_trial_is_dropped) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  ASSERT_TRUE(q.assign("w1"));
  EXPECT_FALSE(q.complete("w2", a));
  EXPECT_FALSE(q.complete("w1", a + 100)) << "unknown trial";
  EXPECT_TRUE(q.complete("w1", a));
}

TEST(trial_queue, a_lost_idle_worker_changes_nothing) {
  trial_queue q;
  q.add({"a", ""});
  EXPECT_FALSE(q.worker_lost("w1", "closed"));
  EXPECT_EQ(q.queued(), 1u);
}

TEST(trial_queue, a_cancelled_trial_leaves_the_queue_and_its_result_is_dropped) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  const auto b = q.add({"b", ""});
  ASSERT_TRUE(q.assign("w1"));
  auto c = q.cancel(a, "sweep interrupted");
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->completed);
  EXPECT_EQ(c->error, "sweep interrupted");
  EXPECT_FALSE(q.complete("w1", a));
  auto next = q.assign("w1");
  ASSERT_TRUE(next) << "w1 is idle once its trial was cancelled";
  EXPECT_EQ(next->trial, b);
  EXPECT_FALSE(q.cancel(a, "again"));
}

TEST(trial_queue, a_trial_lost_with_no_other_worker_connected_fails_at_once) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  ASSERT_TRUE(q.assign("w1"));
  auto failed = q.worker_lost("w1", "killed", false);
  ASSERT_TRUE(failed) << "nobody could run it again";
  EXPECT_EQ(failed->trial, a);
  EXPECT_FALSE(failed->completed);
  EXPECT_EQ(failed->error, "lost 1 time (worker w1 lost: killed); no other worker is connected");
  EXPECT_EQ(q.queued(), 0u);
}

TEST(trial_queue, when_no_worker_is_left_retried_trials_fail_and_untaken_ones_wait) {
  trial_queue q;
  const auto a = q.add({"a", ""});
  const auto b = q.add({"b", ""});
  ASSERT_TRUE(q.assign("w1"));
  EXPECT_FALSE(q.worker_lost("w1", "killed")) << "w2 was still there: re-queued";
  auto failed = q.no_worker_left("no worker is connected");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].trial, a);
  EXPECT_EQ(failed[0].error, "lost 1 time (worker w1 lost: killed); no worker is connected");
  EXPECT_EQ(q.queued(), 1u) << "b, never taken, waits for workers to come";
  auto next = q.assign("w3");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->trial, b);
}

}  // namespace
}  // namespace rocelab::controller
