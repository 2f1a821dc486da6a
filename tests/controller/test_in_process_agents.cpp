#include "rocelab/cli/in_process_agents.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "controller_test_support.hpp"

namespace rocelab::cli {
namespace {

using namespace std::chrono_literals;

controller::agent_launch launch_of(const controller::controller& c, const std::string& name) {
  controller::agent_launch l;
  l.controller = c.address();
  l.name = name;
  l.token = test::test_token;
  l.log = false;
  return l;
}

// Gone from the registry (it forgets agents that left).
bool lost(const controller::controller& c, const std::string& name) {
  for (const auto& a : c.agents())
    if (a.name == name) return !a.alive;
  return true;
}

class in_process_agents_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto o = test::quick_controller_options(dir_);
    o.launcher = nullptr;  // the agents under test are the only ones
    auto c = controller::controller::start(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    controller_ = std::move(*c);
  }

  test::temp_dir dir_{"ipa"};
  std::unique_ptr<controller::controller> controller_;
};

TEST_F(in_process_agents_test, an_agent_it_starts_registers_and_is_lost_once_stopped) {
  in_process_agents agents;
  ASSERT_TRUE(agents.start(launch_of(*controller_, "h1")).ok());
  ASSERT_TRUE(agents.start(launch_of(*controller_, "h2")).ok());
  ASSERT_TRUE(controller_->wait_for_agents({"h1", "h2"}, 10s, 1));
  agents.stop("h1");
  EXPECT_TRUE(test::eventually([&] { return lost(*controller_, "h1"); }));
  EXPECT_FALSE(lost(*controller_, "h2"));
  agents.stop("h9");  // not one of its agents: ignored
  EXPECT_FALSE(lost(*controller_, "h2"));
}

TEST_F(in_process_agents_test, destroying_the_launcher_stops_its_agents) {
  {
    in_process_agents agents;
    ASSERT_TRUE(agents.start(launch_of(*controller_, "h1")).ok());
    ASSERT_TRUE(controller_->wait_for_agents({"h1"}, 10s, 1));
  }
  EXPECT_TRUE(test::eventually([&] { return lost(*controller_, "h1"); }));
}

TEST_F(in_process_agents_test, an_agent_that_cannot_be_made_is_refused_with_the_reason) {
  in_process_agents agents;
  auto unnamed = launch_of(*controller_, "");
  const auto st = agents.start(unnamed);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("a name is required"), std::string::npos) << st.message();
  EXPECT_TRUE(controller_->agents().empty());
}

}  // namespace
}  // namespace rocelab::cli
