// The backend seam (run/backend.hpp): the registry picks a backend by the spec's name,
// names the registered ones when it has none, takes backends registered from outside the
// library, and the twin backend's repeat loop (seeds, on_repeat, cancel).
#include "rocelab/experiments/run/backend.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/run/twin_backend.hpp"

namespace rocelab::experiments {
namespace {

const std::string examples = std::string(ROCELAB_SOURCE_DIR) + "/examples";

experiment_spec small_incast(std::uint32_t repeats) {
  auto spec = load_spec_file(examples + "/incast-16to1.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  for (const std::string& set : std::vector<std::string>{"workload.incast.senders=4", "topology.hosts=5",
                                                          "repeats=" + std::to_string(repeats)})
    EXPECT_TRUE(apply_override(*spec, set).ok()) << set;
  return *spec;
}

// A backend registered from outside the library, as the controller registers `lab`: it
// answers with the seeds it was asked for and counts its calls.
class counting_backend final : public backend {
 public:
  explicit counting_backend(int* calls) : calls_(calls) {}
  result<experiment_result> run(const experiment_spec& spec, const run_hooks&) const override {
    ++*calls_;
    experiment_result out;
    out.seeds.push_back(spec.seed);
    out.repeats.emplace_back();
    return out;
  }
  experiment_spec as_run_here(const experiment_spec& spec) const override {
    experiment_spec s = spec;
    s.seed += 1000;
    return s;
  }

 private:
  int* calls_;
};

TEST(backend_registry, core_backends_hold_the_twin) {
  const backend_registry r = core_backends();
  EXPECT_EQ(r.names(), std::vector<std::string>{"twin"});
  ASSERT_TRUE(r.find("twin").ok());
}

TEST(backend_registry, an_unregistered_backend_is_unsupported_and_names_the_registered_ones) {
  experiment_spec spec = small_incast(1);
  spec.backend = "lab";
  auto ran = core_backends().run(spec);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), error_code::unsupported);
  EXPECT_NE(ran.error().message().find("'lab'"), std::string::npos) << ran.error().message();
  EXPECT_NE(ran.error().message().find("registered: twin"), std::string::npos) << ran.error().message();
  // run_experiment is the core registry: the same answer.
  auto direct = run_experiment(spec);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error().message(), ran.error().message());
}

TEST(backend_registry, add_refuses_a_taken_name_an_empty_name_and_no_backend) {
  backend_registry r = core_backends();
  int calls = 0;
  EXPECT_EQ(r.add("twin", std::make_shared<counting_backend>(&calls)).code(), error_code::invalid_argument);
  EXPECT_EQ(r.add("", std::make_shared<counting_backend>(&calls)).code(), error_code::invalid_argument);
  EXPECT_EQ(r.add("lab", nullptr).code(), error_code::invalid_argument);
  EXPECT_EQ(r.names(), std::vector<std::string>{"twin"});
}

TEST(backend_registry, runs_the_backend_the_spec_names_including_one_added_from_outside) {
  backend_registry r = core_backends();
  int calls = 0;
  ASSERT_TRUE(r.add("lab", std::make_shared<counting_backend>(&calls)).ok());
  EXPECT_EQ(r.names(), (std::vector<std::string>{"lab", "twin"}));
  experiment_spec spec = small_incast(1);
  spec.backend = "lab";
  auto ran = r.run(spec);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran->seeds, std::vector<std::uint64_t>{spec.seed});
  auto lab = r.find("lab");
  ASSERT_TRUE(lab.ok());
  EXPECT_EQ((*lab)->as_run_here(spec).seed, spec.seed + 1000);
  // The registry answers for the backend a spec names, and leaves a spec it cannot run as is.
  EXPECT_EQ(r.as_run_here(spec).seed, spec.seed + 1000);
  experiment_spec elsewhere = spec;
  elsewhere.backend = "nowhere";
  EXPECT_EQ(to_yaml(r.as_run_here(elsewhere)), to_yaml(elsewhere));
  // A copy of the registry shares the backends.
  const backend_registry copy = r;
  ASSERT_TRUE(copy.run(spec).ok());
  EXPECT_EQ(calls, 2);
}

TEST(twin_backend, runs_each_repeat_with_its_seed_and_says_so_first) {
  const experiment_spec spec = small_incast(3);
  std::vector<std::pair<std::uint32_t, std::uint64_t>> announced;
  run_hooks hooks;
  hooks.on_repeat = [&](std::uint32_t i, std::uint64_t seed) { announced.emplace_back(i, seed); };
  auto ran = twin_backend{}.run(spec, hooks);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  ASSERT_EQ(ran->seeds, (std::vector<std::uint64_t>{spec.seed, spec.seed + 1, spec.seed + 2}));
  ASSERT_EQ(announced.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(announced[i], std::make_pair(i, spec.seed + i));
  ASSERT_EQ(ran->repeats.size(), 3u);
  ASSERT_EQ(ran->repeats[0].flows.size(), 4u);  // one per sender
  // The backend through the registry and run_experiment make the same records.
  auto again = run_experiment(spec);
  ASSERT_TRUE(again.ok());
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(again->repeats[i].flows.size(), ran->repeats[i].flows.size());
    for (std::size_t f = 0; f < ran->repeats[i].flows.size(); ++f)
      EXPECT_EQ(again->repeats[i].flows[f].fct_ns, ran->repeats[i].flows[f].fct_ns);
  }
  // The twin runs a spec as written.
  EXPECT_EQ(to_yaml(twin_backend{}.as_run_here(spec)), to_yaml(spec));
}

// The twin starts every message on its schedule: its summary's start_skew_ns is 0 (the key
// is there, as on real-time runs), no sender has an offset, and the tightest
// timing.max_start_skew_ns does not mark it degraded.
TEST(twin_backend, starts_on_schedule_so_its_start_skew_is_0_under_any_limit) {
  experiment_spec spec = small_incast(2);
  ASSERT_TRUE(apply_override(spec, "timing.max_start_skew_ns=1").ok());
  auto ran = run_experiment(spec);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  for (const auto& r : ran->repeats) {
    EXPECT_TRUE(r.start_offsets_ns.empty());
    EXPECT_TRUE(r.degraded.empty());
  }
  std::vector<const run_records*> runs;
  for (const auto& r : ran->repeats) runs.push_back(&r);
  const run_summary s = summarize(runs, ran->seeds);
  EXPECT_EQ(s.start_skew_ns, 0);
  const auto j = nlohmann::json::parse(summary_json({"r", "twin", "x"}, s, {s}));
  ASSERT_TRUE(j.contains("start_skew_ns"));
  EXPECT_EQ(j["start_skew_ns"], 0);
}

TEST(twin_backend, a_cancel_ends_the_current_repeat_and_starts_no_further) {
  const experiment_spec spec = small_incast(3);
  int started = 0;
  run_hooks hooks;
  hooks.on_repeat = [&](std::uint32_t, std::uint64_t) { ++started; };
  hooks.cancel_requested = [&] { return started >= 2; };
  auto ran = twin_backend{}.run(spec, hooks);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_EQ(started, 2);
  EXPECT_EQ(ran->seeds.size(), 2u);
}

TEST(twin_backend, an_invalid_spec_runs_no_repeat) {
  experiment_spec spec = small_incast(2);
  spec.topology.hosts = 0;
  int started = 0;
  run_hooks hooks;
  hooks.on_repeat = [&](std::uint32_t, std::uint64_t) { ++started; };
  auto ran = twin_backend{}.run(spec, hooks);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), error_code::invalid_argument);
  EXPECT_EQ(started, 0);
}

// What a virtual run's record keeps: the spec as the lab runs it. At the lab's 0.5 Gb/s an
// 8 MiB buffer drains in 134 ms, so the lab's go-back-N waits twice that, not the file's
// 4 ms; a twin run from the record then waits as long (a twin at 4 ms resends what sits in
// the queue: 78k retransmits in five seeds of examples/tune-virtual-incast.yaml).
TEST(local_backends, a_virtual_spec_as_run_here_has_the_lab_s_timeout_and_a_twin_spec_is_as_written) {
  auto spec = load_spec_file(examples + "/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_EQ(spec->nic.retransmit_timeout_ns, 4'000'000);
  const backend_registry r = local_backends();
  const experiment_spec as_run = r.as_run_here(*spec);
  EXPECT_EQ(as_run.nic.retransmit_timeout_ns, 2 * (8ll << 20) * 8 * 2);  // twice 8 MiB at 0.5 Gb/s, in ns
  EXPECT_GT(as_run.sw.pfc.headroom_bytes, 0);
  EXPECT_FALSE(spec->nic.qp_per_peer);
  EXPECT_TRUE(as_run.nic.qp_per_peer) << "the soft NIC fleet connects one QP per peer";
  // The record's YAML reads back as the spec that ran.
  auto again = load_spec(to_yaml(as_run), "the record");
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->nic.retransmit_timeout_ns, as_run.nic.retransmit_timeout_ns);
  EXPECT_TRUE(again->nic.qp_per_peer);
  experiment_spec twin = *spec;
  twin.backend = "twin";
  EXPECT_EQ(to_yaml(r.as_run_here(twin)), to_yaml(twin));
}

}  // namespace
}  // namespace rocelab::experiments
