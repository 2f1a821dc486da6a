// Idempotent submission: a controller that dies after storing a run but before answering
// does not make the client report a failure; the client asks the restarted controller by
// its submission id (or the store) and reports the stored outcome; a run is not run twice.
// Stopping a controller ends its runs interrupted and tells their clients.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <future>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/controller/stored_outcome.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::temp_dir;

const char* const tiny_spec =
    "name: ctl-resubmit\nbackend: twin\nseed: 4\ntopology: {hosts: 3, link_gbps: 100}\n"
    "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n";

// The child: a controller that ends itself once a run is stored, before it answers.
[[noreturn]] void dies_before_answering(const temp_dir& dir, int to_parent) {
  auto o = test::quick_controller_options(dir);
  o.after_run_stored = [](std::int64_t) { ::_exit(0); };
  auto c = controller::start(o);
  if (!c) ::_exit(10);
  const std::string port = std::to_string((*c)->port()) + "\n";
  if (::write(to_parent, port.data(), port.size()) < 0) ::_exit(11);
  while (true) ::pause();
}

struct dying_controller {
  pid_t pid = -1;
  std::string address;
};

// Forks dies_before_answering; its address once it listens.
dying_controller fork_dying_controller(const temp_dir& dir) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t child = ::fork();
  if (child < 0) return {};
  if (child == 0) {
    ::close(fds[0]);
    dies_before_answering(dir, fds[1]);
  }
  ::close(fds[1]);
  FILE* from_child = ::fdopen(fds[0], "r");
  char line[64] = {};
  const bool started = std::fgets(line, sizeof line, from_child) != nullptr;
  std::fclose(from_child);
  if (!started) return {child, ""};
  return {child, "127.0.0.1:" + std::to_string(std::atoi(line))};
}

bool exited(pid_t pid) {
  int wstatus = 0;
  return eventually([&] { return ::waitpid(pid, &wstatus, WNOHANG) == pid; }, 30s) && WIFEXITED(wstatus);
}

TEST(resubmit, a_controller_dying_after_storing_the_run_leaves_the_client_with_the_stored_outcome) {
  temp_dir dir("resubmit");
  const auto dying = fork_dying_controller(dir);
  ASSERT_GT(dying.pid, 0);
  ASSERT_FALSE(dying.address.empty()) << "controller did not start";

  submit_options o;
  o.controller = dying.address;
  o.token = test::test_token;
  o.reconnect_interval = 50ms;
  o.reconnect_window = 30s;
  o.submission = new_submission_id();
  auto client = std::async(std::launch::async, [&] { return submit_spec(o, tiny_spec, "tiny.yaml", {}); });

  // The controller ends itself after storing the run; another one takes its address.
  ASSERT_TRUE(exited(dying.pid));
  auto again = test::quick_controller_options(dir);
  again.listen = dying.address;
  auto c = controller::start(again);
  ASSERT_TRUE(c.ok()) << c.error().message();

  ASSERT_EQ(client.wait_for(30s), std::future_status::ready);
  auto done = client.get();
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  auto store = store::run_store::open((*c)->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto runs = store->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);  // answered from the store, not run again
  EXPECT_EQ(done->run, runs->at(0).id);
  EXPECT_EQ(runs->at(0).status, store::run_status::completed);
  EXPECT_EQ(runs->at(0).parameters.at(submission_parameter), o.submission);
  EXPECT_NE(done->summary_json.find("\"flows\""), std::string::npos) << done->summary_json;
}

TEST(resubmit, when_the_controller_does_not_come_back_the_client_reads_the_outcome_from_the_store) {
  temp_dir dir("resubmit-store");
  const auto dying = fork_dying_controller(dir);
  ASSERT_GT(dying.pid, 0);
  ASSERT_FALSE(dying.address.empty()) << "controller did not start";
  submit_options o;
  o.controller = dying.address;
  o.token = test::test_token;
  o.reconnect_interval = 50ms;
  o.reconnect_window = 300ms;
  o.submission = new_submission_id();
  o.store_path = (dir.path / "runs.db").string();
  auto done = submit_spec(o, tiny_spec, "tiny.yaml", {});
  EXPECT_TRUE(exited(dying.pid));
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  EXPECT_GT(done->run, 0);

  // What the client read: the store's run for that id (an unknown id has none).
  auto store = store::run_store::open(o.store_path, store::open_mode::read_only);
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE(stored_outcome(*store, "s-unknown")->has_value());
  EXPECT_EQ((*stored_outcome(*store, o.submission))->run, done->run);
}

TEST(resubmit, stopping_the_controller_ends_a_run_in_flight_interrupted_and_tells_its_client) {
  temp_dir dir("resubmit-stop");
  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();
  submit_options o;
  o.controller = (*c)->address();
  o.token = test::test_token;
  o.reconnect_window = 0ms;
  // 16 x 1 GiB into one port: tens of seconds of work, ended here long before.
  const std::string long_spec =
      "name: ctl-long\nbackend: twin\nseed: 5\ntopology: {hosts: 17, link_gbps: 100}\n"
      "workload: {incast: {receiver: 0, senders: 16, flow_bytes: 1GiB}}\n";
  auto client = std::async(std::launch::async, [&] { return submit_spec(o, long_spec, "long.yaml", {}); });
  const std::string db = (*c)->db_path();
  ASSERT_TRUE(eventually([&] {
    auto s = store::run_store::open(db, store::open_mode::read_only);
    if (!s) return false;
    auto runs = s->runs();
    return runs && !runs->empty() && runs->back().status == store::run_status::running;
  }, 30s));
  (*c)->cancel_runs();
  c->reset();  // waits for the run to end
  ASSERT_EQ(client.wait_for(30s), std::future_status::ready);
  auto done = client.get();
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "interrupted") << done->error;
  auto store = store::run_store::open(db, store::open_mode::read_only);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->runs()->back().status, store::run_status::interrupted);
  EXPECT_TRUE(store->check_integrity().ok());
}

}  // namespace
}  // namespace rocelab::controller
