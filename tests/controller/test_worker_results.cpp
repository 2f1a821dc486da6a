#include "rocelab/controller/trial_result_check.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <limits>
#include <string>
#include <vector>

#include "controller_test_support.hpp"

// A worker holds the token, not the controller's trust: its results are checked like any
// input from the network. A fake worker (the protocol spoken by hand over real TLS to a
// real controller) answers a trial wrongly; the controller drops it, and with no other
// worker connected the trial fails at once, naming why, instead of waiting for anyone.

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using namespace rocelab::protocol;
using test::authenticated_peer;

const std::string trial_yaml = "name: fake\nbackend: twin\nseed: 5\nrepeats: 1\n";

// One repeat as a sound twin run of seed `seed` would report it: two hosts, `flows` flows
// of 10 us each (ideal 8 us).
trial_repeat sound_repeat(std::uint32_t index, std::uint64_t seed, std::size_t flows = 1) {
  trial_repeat r{index, seed, {}};
  r.records.backend = "twin";
  r.records.hosts = {"h0", "h1"};
  r.records.devices = {"sw0"};
  r.records.simulated_ns = 1'000'000;
  for (std::size_t i = 0; i < flows; ++i) {
    flow_record f;
    f.src = 1;
    f.dst = 0;
    f.qp = static_cast<std::uint32_t>(i + 1);
    f.bytes = 100'000;
    f.start_ns = 1000;
    f.end_ns = 11'000;
    f.fct_ns = 10'000;
    f.ideal_fct_ns = 8'000;
    r.records.flows.push_back(f);
  }
  return r;
}

class worker_results : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }
  void start(const std::function<void(controller_options&)>& adjust) {
    controller_.reset();
    auto o = test::quick_controller_options(dir_);
    o.agent_timeout = 5s;  // the fake worker heartbeats by hand, slowly
    if (adjust) adjust(o);
    auto c = controller::start(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    controller_ = std::move(*c);
  }

  // A fake worker registered and holding the trial it was given (its assignment returned).
  std::unique_ptr<authenticated_peer> fake_worker_with_trial(trial_assignment& given) {
    auto w = std::make_unique<authenticated_peer>(io_, controller_->port());
    EXPECT_TRUE(w->ok());
    EXPECT_TRUE(w->send(register_worker{"fake", "fakehost", 1, {"twin"}, 1, "", "", ""}));
    pending_ = std::async(std::launch::async, [this] {
      return controller_->run_trial({trial_yaml, "fake.yaml", 5, 1});
    });
    for (int i = 0; i < 50; ++i) {
      auto m = w->read();
      if (!m) break;
      if (auto* a = std::get_if<trial_assignment>(&*m)) {
        given = *a;
        return w;
      }
    }
    ADD_FAILURE() << "the fake worker was never given the trial";
    return w;
  }

  // True when the controller closed the fake worker's connection within ~3 s (the worker
  // heartbeating meanwhile, so only what it sent can be why).
  static bool dropped(authenticated_peer& w) {
    for (int i = 0; i < 30; ++i) {
      if (!w.send(heartbeat{static_cast<std::uint64_t>(i + 1)})) return true;
      for (int j = 0; j < 50; ++j) {
        auto m = w.read();
        if (!m) {
          if (m.error().code() != error_code::cancelled) return true;
          break;
        }
        if (std::holds_alternative<heartbeat>(*m)) break;
      }
    }
    return false;
  }

  // The trial's outcome; a trial still waiting after 20 s is a failure, ended by stopping
  // the controller.
  remote_trial outcome() {
    if (pending_.wait_for(20s) != std::future_status::ready) {
      ADD_FAILURE() << "the trial was still waiting 20 s after its worker was dropped";
      controller_.reset();
    }
    return pending_.get();
  }

  test::temp_dir dir_{"wres"};
  boost::asio::io_context io_;
  std::unique_ptr<controller> controller_;
  std::future<remote_trial> pending_;
};

struct bad_result_case {
  const char* name;
  std::function<void(trial_result&)> spoil;
  const char* reason;  // in the trial's error
};

class worker_results_refused : public worker_results, public ::testing::WithParamInterface<bad_result_case> {};

TEST_P(worker_results_refused, drop_the_worker_and_fail_the_trial_naming_why) {
  trial_assignment given;
  auto w = fake_worker_with_trial(given);
  trial_result r{given.trial, given.attempt, "", {sound_repeat(0, 5)}, true};
  GetParam().spoil(r);
  ASSERT_TRUE(w->send(r));
  EXPECT_TRUE(dropped(*w)) << "the controller kept the worker";
  const remote_trial t = outcome();
  EXPECT_FALSE(t.completed) << "the result counted";
  EXPECT_TRUE(t.repeats.empty());
  EXPECT_NE(t.error.find(GetParam().reason), std::string::npos) << t.error;
  EXPECT_NE(t.error.find("no other worker is connected"), std::string::npos) << t.error;
}

INSTANTIATE_TEST_SUITE_P(
    cases, worker_results_refused,
    ::testing::Values(
        bad_result_case{"another_attempt", [](trial_result& r) { r.attempt += 1; }, "but was given trial"},
        bad_result_case{"another_trial", [](trial_result& r) { r.trial += 7; }, "but was given trial"},
        bad_result_case{"no_repeats", [](trial_result& r) { r.repeats.clear(); }, "0 repeats for a spec of repeats: 1"},
        bad_result_case{"two_hundred_repeats",
                        [](trial_result& r) {
                          for (std::uint32_t i = 1; i < 200; ++i) r.repeats.push_back(sound_repeat(i, 5 + i));
                        },
                        "200 repeats for a spec of repeats: 1"},
        bad_result_case{"another_seed", [](trial_result& r) { r.repeats[0].seed = 6; }, "the spec's is seed 5"},
        bad_result_case{"fct_int64_max",
                        [](trial_result& r) {
                          auto& f = r.repeats[0].records.flows[0];
                          f.fct_ns = std::numeric_limits<std::int64_t>::max();
                          f.end_ns = std::numeric_limits<std::int64_t>::max();
                        },
                        "end_ns"},
        bad_result_case{"negative_ideal", [](trial_result& r) { r.repeats[0].records.flows[0].ideal_fct_ns = -5; },
                        "ideal_fct_ns -5 out of range"},
        bad_result_case{"fct_below_ideal", [](trial_result& r) { r.repeats[0].records.flows[0].ideal_fct_ns = 50'000; },
                        "below half its ideal"},
        bad_result_case{"negative_start", [](trial_result& r) { r.repeats[0].records.flows[0].start_ns = -1; },
                        "start_ns -1 out of range"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(worker_results, a_sound_result_from_the_same_fake_counts) {
  trial_assignment given;
  auto w = fake_worker_with_trial(given);
  ASSERT_TRUE(w->send(trial_result{given.trial, given.attempt, "", {sound_repeat(0, 5)}, true}));
  const remote_trial t = outcome();
  EXPECT_TRUE(t.completed) << t.error;
  EXPECT_EQ(t.error, "");
  ASSERT_EQ(t.repeats.size(), 1u);
  EXPECT_EQ(t.worker.name, "fake");
}

struct piece_cap_case {
  const char* name;
  std::size_t max_pieces;
  std::size_t max_bytes;
  std::size_t flows_per_piece;
  const char* reason;
};

class worker_results_pieces : public worker_results, public ::testing::WithParamInterface<piece_cap_case> {};

// Pieces without an end (done=false) are held up to the caps, then the worker is dropped
// and what it sent goes with its connection.
TEST_P(worker_results_pieces, past_the_cap_drop_the_worker_and_what_it_sent) {
  const auto& c = GetParam();
  start([&](controller_options& o) {
    o.max_trial_result_pieces = c.max_pieces;
    o.max_partial_result_bytes = c.max_bytes;
  });
  trial_assignment given;
  auto w = fake_worker_with_trial(given);
  std::size_t sent = 0;
  bool closed = false;
  for (; sent < 200 && !closed; ++sent)
    closed = !w->send(trial_result{given.trial, given.attempt, "", {sound_repeat(0, 5, c.flows_per_piece)}, false});
  closed = closed || dropped(*w);
  EXPECT_TRUE(closed) << "still connected after " << sent << " unfinished pieces";
  const remote_trial t = outcome();
  EXPECT_FALSE(t.completed);
  EXPECT_NE(t.error.find(c.reason), std::string::npos) << t.error;
}

INSTANTIATE_TEST_SUITE_P(
    cases, worker_results_pieces,
    ::testing::Values(piece_cap_case{"per_trial_pieces", 16, 256u << 20, 1, "did not end within 16 pieces"},
                      piece_cap_case{"per_connection_bytes", 4096, 1u << 20, 2048, "limit 1048576"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(trial_result_check, a_failed_trial_carries_no_repeats) {
  trial_result r{1, 1, "spec invalid", {sound_repeat(0, 5)}, true};
  EXPECT_FALSE(check_trial_result(r, {"", "", 5, 1}).ok());
  r.repeats.clear();
  EXPECT_TRUE(check_trial_result(r, {"", "", 5, 1}).ok());
}

TEST(trial_result_check, held_bytes_grow_with_the_records) {
  const trial_result small{1, 1, "", {sound_repeat(0, 5, 1)}, true};
  const trial_result large{1, 1, "", {sound_repeat(0, 5, 1000)}, true};
  EXPECT_GE(held_bytes(large) - held_bytes(small), 999 * sizeof(flow_record));
}

}  // namespace
}  // namespace rocelab::controller
