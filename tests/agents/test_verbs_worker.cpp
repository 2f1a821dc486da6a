#include "../../agents/src/agent/verbs_worker.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace rocelab::agents::agent {
namespace {

using json = nlohmann::json;

// A transport whose write holds until the test lets it go (or the job stops), so the test
// decides who drops the job's last reference while its worker thread is still running.
struct gated_transport final : verbs_transport {
  std::atomic<bool>* writing;
  std::atomic<bool>* release;
  gated_transport(std::atomic<bool>* w, std::atomic<bool>* r) : writing(w), release(r) {}

  std::string device_name() const override { return "fake0"; }
  json connections() const override { return {{"1", {{"qpn", 7}}}}; }
  status connect(const json&) override { return status::success(); }
  bool has_peer(std::uint32_t peer) const override { return peer == 1; }
  status write_message(std::uint32_t, std::uint64_t, const std::function<bool()>& stopping) override {
    *writing = true;
    // Bounded: 10 s at most, whatever happens to the test.
    for (int i = 0; i < 10'000 && !*release && !stopping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return stopping() ? status(error_code::cancelled, "stopped") : status::success();
  }
  json port_counters() override { return {{"tx_cnps", 5}}; }
};

struct harness {
  asio::io_context io;
  // Keeps run_for() waiting for the worker's posts instead of returning at once.
  asio::executor_work_guard<asio::io_context::executor_type> busy = asio::make_work_guard(io);
  std::vector<std::string> lines;
  std::vector<protocol::job_report> reports;

  // Runs the executor until the job's final report arrived (10 s at most).
  void run_until_reported(const std::function<void()>& after_each = {}) {
    for (int i = 0; i < 10'000 && reports.empty(); ++i) {
      io.run_for(std::chrono::milliseconds(1));
      if (after_each) after_each();
    }
    io.poll();
  }

  job_context context() {
    job_context c;
    c.executor = io.get_executor();
    c.report = [this](protocol::job_report r) { reports.push_back(std::move(r)); };
    c.events = [this](std::vector<std::string> l) { lines.insert(lines.end(), l.begin(), l.end()); };
    return c;
  }
};

const std::vector<std::string> connect_post_stop = {
    R"({"op":"connect","peers":{"1":{}}})", R"({"op":"post","qpn":257,"bytes":4096,"ref":3})", R"({"op":"stop"})"};

// The agent drops a job when its report arrives, which can be before the worker thread has
// returned: the job's destructor must then never run on (and join) that thread. Exits 0
// when the job finished and reported; a join of the worker from itself terminates.
[[noreturn]] void drop_the_job_while_its_worker_runs() {
  harness h;
  std::atomic<bool> writing{false};
  std::atomic<bool> release{false};
  auto job = make_verbs_worker_job(h.context(), std::make_unique<gated_transport>(&writing, &release));
  job->start();
  job->command(connect_post_stop);
  for (int i = 0; i < 10'000 && !writing; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  job.reset();
  release = true;
  h.run_until_reported();
  std::exit(h.reports.size() == 1 && h.reports[0].done ? 0 : 3);
}

TEST(verbs_worker_job, survives_its_last_reference_dropped_while_the_worker_runs) {
  EXPECT_EXIT(drop_the_job_while_its_worker_runs(), ::testing::ExitedWithCode(0), "");
}

TEST(verbs_worker_job, may_be_dropped_by_its_own_report_on_the_executor) {
  harness h;
  std::atomic<bool> writing{false}, release{true};
  std::shared_ptr<agent::job> held = make_verbs_worker_job(h.context(), std::make_unique<gated_transport>(&writing, &release));
  held->start();
  held->command(connect_post_stop);
  // As the agent does: the report's arrival drops the job, on the executor's thread.
  h.run_until_reported([&] {
    if (!h.reports.empty()) held.reset();
  });
  ASSERT_EQ(h.reports.size(), 1u);
  EXPECT_TRUE(h.reports[0].done);
  EXPECT_EQ(h.reports[0].error, "");
}

TEST(verbs_worker_job, reports_per_flow_counts_as_not_measured_and_port_counts_at_the_end) {
  harness h;
  std::atomic<bool> writing{false}, release{true};
  auto job = make_verbs_worker_job(h.context(), std::make_unique<gated_transport>(&writing, &release));
  job->start();
  job->command(connect_post_stop);
  h.run_until_reported();
  ASSERT_EQ(h.reports.size(), 1u);
  json sent, counters;
  for (const auto& l : h.lines) {
    const json j = json::parse(l);
    if (j.value("ev", "") == "sent") sent = j;
    if (j.value("ev", "") == "counters") counters = j;
  }
  ASSERT_TRUE(sent.is_object());
  EXPECT_EQ(sent.at("ref"), 3);
  EXPECT_TRUE(sent.at("retransmits").is_null());
  EXPECT_TRUE(sent.at("cnps").is_null());
  ASSERT_TRUE(counters.is_object());
  EXPECT_EQ(counters.value("tx_cnps", 0), 5);
}

// A path MTU that is no IB MTU (a netdev MTU such as 1500 or 9000) is refused by name
// before anything is opened, instead of silently becoming 1024.
TEST(verbs_job, refuses_a_path_mtu_that_is_no_ib_mtu) {
  harness h;
  for (const int mtu : {1500, 9000, 3000}) {
    protocol::start_job spec;
    spec.kind = protocol::job_kind::verbs;
    spec.transport_config =
        json{{"host", 0}, {"hosts", 2}, {"local_ip", "198.18.0.1"}, {"mtu", mtu}}.dump();
    auto job = make_job(spec, h.context());
    ASSERT_FALSE(job.ok()) << mtu;
    if (job.error().message().find("built without rdma-core") != std::string::npos)
      GTEST_SKIP() << "this agent is built without the verbs transport";
    EXPECT_EQ(job.error().code(), error_code::invalid_argument) << job.error().message();
    EXPECT_NE(job.error().message().find("path MTU " + std::to_string(mtu)), std::string::npos) << job.error().message();
    EXPECT_NE(job.error().message().find("256, 512, 1024, 2048 or 4096"), std::string::npos) << job.error().message();
  }
}

}  // namespace
}  // namespace rocelab::agents::agent
