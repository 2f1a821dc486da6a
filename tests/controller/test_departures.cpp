// Names are forgotten when their peer leaves: the registry holds only agents and workers
// that are connected, so thousands of names passing through cost nothing later, and a
// run stores an agent lost only when it was one of that run's agents.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "controller_test_support.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using namespace rocelab::protocol;
using test::agent_pool;
using test::eventually;

experiments::experiment_spec twin_spec(std::uint32_t repeats) {
  auto spec = experiments::load_spec("name: departures\nbackend: twin\nseed: 3\nrepeats: " + std::to_string(repeats) +
                                         "\ntopology: {hosts: 5, link_gbps: 100}\n"
                                         "workload: {incast: {receiver: 0, senders: 4, flow_bytes: 64KiB}}\n",
                                     "departures.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return *spec;
}

std::map<std::string, std::string> stored_agents(const controller& c, std::int64_t run) {
  auto db = store::run_store::open(c.db_path(), store::open_mode::read_only);
  EXPECT_TRUE(db.ok()) << db.error().message();
  std::map<std::string, std::string> out;
  if (!db) return out;
  auto agents = db->agents(run);
  EXPECT_TRUE(agents.ok()) << agents.error().message();
  if (agents)
    for (const auto& a : *agents) out[a.name] = a.state;
  return out;
}

TEST(departures, agents_that_left_are_forgotten_and_later_runs_list_only_the_agents_there) {
  test::temp_dir dir("dep-agents");
  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();
  agent_pool pool;
  std::vector<std::shared_ptr<agents::agent::agent>> passing;
  for (int i = 0; i < 40; ++i) passing.push_back(pool.add((*c)->address(), "passing-" + std::to_string(i)));
  ASSERT_TRUE(pool.add((*c)->address(), "keeper"));
  ASSERT_TRUE((*c)->wait_for_agent_count(41, 20s));
  for (auto& a : passing) a->stop();
  ASSERT_TRUE(eventually([&] { return (*c)->agents().size() == 1; }, 20s))
      << (*c)->agents().size() << " agents still listed after 40 of 41 left";
  EXPECT_EQ((*c)->agents()[0].name, "keeper");
  auto out = (*c)->run_spec(twin_spec(1), {"departures.yaml", {}, {}, {}, {}, {}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(stored_agents(**c, out->run), (std::map<std::string, std::string>{{"keeper", "ok"}}));
}

TEST(departures, an_agent_that_leaves_during_a_run_is_stored_lost_for_that_run_only) {
  test::temp_dir dir("dep-run");
  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();
  agent_pool pool;
  auto leaving = pool.add((*c)->address(), "leaving");
  ASSERT_TRUE(pool.add((*c)->address(), "staying"));
  ASSERT_TRUE((*c)->wait_for_agents({"leaving", "staying"}, 10s, 1));
  run_request during;
  during.source_name = "departures.yaml";
  // After the first of two repeats: the agent goes, and the run sees it gone.
  during.on_repeat = [&](std::uint32_t i, std::uint64_t) {
    if (i != 1) return;
    leaving->stop();
    EXPECT_TRUE(eventually([&] { return (*c)->agents().size() == 1; }, 10s));
  };
  auto first = (*c)->run_spec(twin_spec(2), during);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_EQ(stored_agents(**c, first->run),
            (std::map<std::string, std::string>{{"leaving", "lost"}, {"staying", "ok"}}));
  auto second = (*c)->run_spec(twin_spec(1), {"departures.yaml", {}, {}, {}, {}, {}});
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_EQ(stored_agents(**c, second->run), (std::map<std::string, std::string>{{"staying", "ok"}}));
}

TEST(departures, workers_that_left_are_forgotten) {
  test::temp_dir dir("dep-workers");
  auto o = test::quick_controller_options(dir);
  o.agent_timeout = 60s;  // the staying worker does not heartbeat
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  boost::asio::io_context io;
  test::authenticated_peer staying(io, (*c)->port());
  ASSERT_TRUE(staying.send(register_worker{"staying", "h", 1, {"twin"}, 1, "", "", ""}));
  for (int i = 0; i < 100; ++i) {
    test::authenticated_peer w(io, (*c)->port());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w.send(register_worker{"passing-" + std::to_string(i), "h", 1, {"twin"}, 1, "", "", ""}));
    auto welcomed = w.read();
    ASSERT_TRUE(welcomed.ok()) << welcomed.error().message();
  }  // each closes as it goes
  ASSERT_TRUE(eventually([&] { return (*c)->workers().size() == 1; }, 20s))
      << (*c)->workers().size() << " workers still listed after 100 of 101 left";
  EXPECT_EQ((*c)->workers()[0].name, "staying");
}

}  // namespace
}  // namespace rocelab::controller
