#include "rocelab/store/run_store.hpp"

#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::make_flows;
using testing::temp_dir;

run_records sample_records() {
  run_records r;
  r.backend = "virtual";
  r.hosts = {"h1", "h2", "h3", "h4"};
  r.devices = {"sw0", "h1", "h2"};
  r.flows = make_flows(20);
  r.pauses = {{0, 3, 3, 100, 900, pause_source::capture}, {1, 1, 5, 200, 250, pause_source::counter}};
  r.counters = {{1, 1, "np_cnp_sent", 1000, 42}, {2, 1, "rp_cnp_handled", 2000, 7},
                {0, 4, "rx_prio3_pause", 3000, 0xFFFF'FFFF'FFFFull}};
  r.queues = {{0, 2, 3, 500, 65536}, {0, 2, 3, 600, 1024}};
  r.allreduce = {{"ring", 8, 1 << 20, 123456, 68.2, 119.35}};
  r.events = {{event_kind::ce_mark, 0, 2, 3, 777, 0, 1, 0x101, pause_source::capture},
              {event_kind::cnp, 1, 1, 6, 888, 1, 0, 0x102, pause_source::model},
              {event_kind::drop, 0, 3, 3, 999, 2, 3, 0x103, pause_source::counter}};
  r.totals = {10, 9, 12345, 300, 200, 1, 4, 100000};
  r.simulated_ns = 5'000'000;
  return r;
}

void expect_flows_equal(const std::vector<flow_record>& a, const std::vector<flow_record>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
    EXPECT_EQ(a[i].qp, b[i].qp);
    EXPECT_EQ(a[i].priority, b[i].priority);
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(a[i].start_ns, b[i].start_ns);
    EXPECT_EQ(a[i].end_ns, b[i].end_ns);
    EXPECT_EQ(a[i].fct_ns, b[i].fct_ns);
    EXPECT_EQ(a[i].ideal_fct_ns, b[i].ideal_fct_ns);
    EXPECT_EQ(a[i].retransmits, b[i].retransmits);
    EXPECT_EQ(a[i].ce_marked, b[i].ce_marked);
    EXPECT_EQ(a[i].cnps, b[i].cnps);
    EXPECT_EQ(a[i].tag, b[i].tag);
  }
}

TEST(run_store, round_trips_every_record_type) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok()) << store.error().message();
  new_run nr{"incast-16to1", "virtual", 7, "name: incast-16to1\n", {{"switch.ecn.kmin_bytes", "20480"}}, std::nullopt};
  auto id = store->begin_run(nr);
  ASSERT_TRUE(id.ok()) << id.error().message();
  const run_records in = sample_records();
  ASSERT_TRUE(store->append(*id, in).ok());

  auto out = store->load(*id);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->backend, "virtual");
  EXPECT_EQ(out->hosts, in.hosts);
  EXPECT_EQ(out->devices, in.devices);
  expect_flows_equal(out->flows, in.flows);
  ASSERT_EQ(out->pauses.size(), in.pauses.size());
  for (std::size_t i = 0; i < in.pauses.size(); ++i) {
    EXPECT_EQ(out->pauses[i].device, in.pauses[i].device);
    EXPECT_EQ(out->pauses[i].port, in.pauses[i].port);
    EXPECT_EQ(out->pauses[i].priority, in.pauses[i].priority);
    EXPECT_EQ(out->pauses[i].start_ns, in.pauses[i].start_ns);
    EXPECT_EQ(out->pauses[i].end_ns, in.pauses[i].end_ns);
    EXPECT_EQ(out->pauses[i].source, in.pauses[i].source);
  }
  ASSERT_EQ(out->counters.size(), in.counters.size());
  for (std::size_t i = 0; i < in.counters.size(); ++i) {
    EXPECT_EQ(out->counters[i].device, in.counters[i].device);
    EXPECT_EQ(out->counters[i].port, in.counters[i].port);
    EXPECT_EQ(out->counters[i].name, in.counters[i].name);
    EXPECT_EQ(out->counters[i].t_ns, in.counters[i].t_ns);
    EXPECT_EQ(out->counters[i].value, in.counters[i].value);
  }
  ASSERT_EQ(out->queues.size(), in.queues.size());
  for (std::size_t i = 0; i < in.queues.size(); ++i) {
    EXPECT_EQ(out->queues[i].device, in.queues[i].device);
    EXPECT_EQ(out->queues[i].port, in.queues[i].port);
    EXPECT_EQ(out->queues[i].queue, in.queues[i].queue);
    EXPECT_EQ(out->queues[i].t_ns, in.queues[i].t_ns);
    EXPECT_EQ(out->queues[i].bytes, in.queues[i].bytes);
  }
  ASSERT_EQ(out->allreduce.size(), 1u);
  EXPECT_EQ(out->allreduce[0].algorithm, "ring");
  EXPECT_EQ(out->allreduce[0].ranks, 8u);
  EXPECT_EQ(out->allreduce[0].bytes, 1u << 20);
  EXPECT_EQ(out->allreduce[0].time_ns, 123456);
  EXPECT_DOUBLE_EQ(out->allreduce[0].algbw_gbps, 68.2);
  EXPECT_DOUBLE_EQ(out->allreduce[0].busbw_gbps, 119.35);
  ASSERT_EQ(out->events.size(), in.events.size());
  for (std::size_t i = 0; i < in.events.size(); ++i) {
    EXPECT_EQ(out->events[i].kind, in.events[i].kind);
    EXPECT_EQ(out->events[i].device, in.events[i].device);
    EXPECT_EQ(out->events[i].port, in.events[i].port);
    EXPECT_EQ(out->events[i].priority, in.events[i].priority);
    EXPECT_EQ(out->events[i].t_ns, in.events[i].t_ns);
    EXPECT_EQ(out->events[i].src, in.events[i].src);
    EXPECT_EQ(out->events[i].dst, in.events[i].dst);
    EXPECT_EQ(out->events[i].qp, in.events[i].qp);
    EXPECT_EQ(out->events[i].source, in.events[i].source);
  }
  EXPECT_EQ(out->totals.pfc_pause_frames, 10u);
  EXPECT_EQ(out->totals.pfc_resume_frames, 9u);
  EXPECT_EQ(out->totals.paused_ns, 12345);
  EXPECT_EQ(out->totals.ce_marked, 300u);
  EXPECT_EQ(out->totals.cnps, 200u);
  EXPECT_EQ(out->totals.drops, 1u);
  EXPECT_EQ(out->totals.retransmits, 4u);
  EXPECT_EQ(out->totals.packets_forwarded, 100000u);
  EXPECT_EQ(out->simulated_ns, 5'000'000);

  auto info = store->run(*id);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->name, "incast-16to1");
  EXPECT_EQ(info->backend, "virtual");
  EXPECT_EQ(info->seed, 7u);
  EXPECT_EQ(info->status, run_status::running);
  EXPECT_EQ(info->spec_yaml, "name: incast-16to1\n");
  EXPECT_EQ(info->parameters.at("switch.ecn.kmin_bytes"), "20480");
  EXPECT_GT(info->started_unix_ns, 0);
  EXPECT_EQ(info->ended_unix_ns, 0);
}

TEST(run_store, appends_map_local_names_onto_the_runs_tables_and_add_totals) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"a", "lab", 1, "", {}, std::nullopt});
  ASSERT_TRUE(id.ok());

  run_records first;
  first.hosts = {"h1", "h2"};
  first.flows = make_flows(2, 0, 2);  // h1->h2, h2->h1
  first.totals.cnps = 5;
  first.simulated_ns = 100;
  ASSERT_TRUE(store->append(*id, first).ok());

  // A second agent numbers its hosts differently: its 0 is h3 (new), its 1 is h1 (known).
  run_records second;
  second.hosts = {"h3", "h1"};
  second.devices = {"h3"};
  second.flows = make_flows(1, 100, 2);  // local 0 -> local 1 = h3 -> h1
  second.counters = {{0, 1, "np_cnp_sent", 5, 9}};
  second.totals.cnps = 2;
  second.simulated_ns = 50;
  ASSERT_TRUE(store->append(*id, second).ok());

  auto out = store->load(*id);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->hosts, (std::vector<std::string>{"h1", "h2", "h3"}));
  ASSERT_EQ(out->flows.size(), 3u);
  EXPECT_EQ(out->flows[2].src, 2u);  // h3
  EXPECT_EQ(out->flows[2].dst, 0u);  // h1
  EXPECT_EQ(out->flows[2].tag, 100u);
  EXPECT_EQ(out->devices, std::vector<std::string>{"h3"});
  EXPECT_EQ(out->totals.cnps, 7u);
  EXPECT_EQ(out->simulated_ns, 100);
}

// A hardware NIC's flows carry retransmits and CNPs as not measured; the store keeps that
// apart from a measured 0, per flow and for the run (one unmeasured append makes the
// run's total unmeasured).
TEST(run_store, keeps_not_measured_apart_from_zero) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"a", "lab", 1, "", {}, std::nullopt});
  ASSERT_TRUE(id.ok());
  run_records soft;
  soft.hosts = {"h1", "h2"};
  soft.flows = make_flows(1, 0, 2);
  ASSERT_TRUE(store->append(*id, soft).ok());
  run_records hw;
  hw.hosts = {"h1", "h2"};
  hw.flows = make_flows(1, 10, 2);
  hw.flows[0].retransmits_measured = false;
  hw.flows[0].cnps_measured = false;
  hw.totals.retransmits_measured = false;
  hw.totals.cnps = 4;  // the port's np_cnp_sent
  ASSERT_TRUE(store->append(*id, hw).ok());

  auto out = store->load(*id);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->flows.size(), 2u);
  EXPECT_TRUE(out->flows[0].retransmits_measured);
  EXPECT_TRUE(out->flows[0].cnps_measured);
  EXPECT_FALSE(out->flows[1].retransmits_measured);
  EXPECT_FALSE(out->flows[1].cnps_measured);
  EXPECT_FALSE(out->totals.retransmits_measured);
  EXPECT_TRUE(out->totals.cnps_measured);
  EXPECT_EQ(out->totals.cnps, 4u);
}

TEST(run_store, a_bad_record_rolls_back_the_whole_append) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  ASSERT_TRUE(id.ok());
  run_records bad;
  bad.hosts = {"h1", "h2"};
  bad.flows = make_flows(10, 0, 2);
  bad.flows[9].dst = 5;  // beyond the 2 names given
  bad.counters = {{0, 0, "fresh_counter_name", 1, 1}};
  auto st = store->append(*id, bad);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), error_code::invalid_argument);
  EXPECT_NE(st.message().find("record 9"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("run " + std::to_string(*id)), std::string::npos) << st.message();

  auto out = store->load(*id);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->flows.empty());
  EXPECT_TRUE(out->hosts.empty());

  // The interned counter name was rolled back with it; a later append interns it again.
  run_records good;
  good.devices = {"sw"};
  good.counters = {{0, 0, "fresh_counter_name", 1, 1}};
  ASSERT_TRUE(store->append(*id, good).ok());
  out = store->load(*id);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->counters.size(), 1u);
  EXPECT_EQ(out->counters[0].name, "fresh_counter_name");
}

TEST(run_store, load_parts_reads_only_the_tables_asked_for) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"parts", "twin", 1, "name: parts\n", {}, std::nullopt});
  ASSERT_TRUE(id.ok());
  const run_records in = sample_records();
  ASSERT_TRUE(store->append(*id, in).ok());
  auto out = store->load(*id, load_parts::summary());
  ASSERT_TRUE(out.ok()) << out.error().message();
  expect_flows_equal(out->flows, in.flows);
  EXPECT_EQ(out->allreduce.size(), in.allreduce.size());
  EXPECT_TRUE(out->queues.empty());
  EXPECT_TRUE(out->counters.empty());
  EXPECT_TRUE(out->pauses.empty());
  EXPECT_TRUE(out->events.empty());
  EXPECT_EQ(out->totals.paused_ns, in.totals.paused_ns) << "totals come with every load";
  EXPECT_EQ(out->hosts, in.hosts);
  EXPECT_EQ(store->load(*id + 1, load_parts::summary()).error().code(), error_code::not_found);
}

TEST(run_store, an_empty_file_name_is_refused_not_opened_as_a_temporary_database) {
  for (auto mode : {open_mode::read_write, open_mode::read_only}) {
    auto store = run_store::open("", mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().code(), error_code::invalid_argument);
    EXPECT_NE(store.error().message().find("file name"), std::string::npos) << store.error().message();
  }
}

TEST(run_store, appending_to_a_missing_run_is_not_found) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto st = store->append(42, run_records{});
  EXPECT_EQ(st.code(), error_code::not_found);
  EXPECT_EQ(store->finish(42, run_status::completed).code(), error_code::not_found);
  EXPECT_EQ(store->load(42).error().code(), error_code::not_found);
  EXPECT_EQ(store->run(42).error().code(), error_code::not_found);
}

TEST(run_store, finish_records_status_error_and_end_time) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto a = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  auto b = store->begin_run({"b", "virtual", 2, "", {{"x", "1"}}, std::nullopt});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(store->finish(*a, run_status::completed).ok());
  ASSERT_TRUE(store->finish(*b, run_status::partial, "agent h3 lost").ok());
  EXPECT_EQ(store->finish(*a, run_status::running).code(), error_code::invalid_argument);

  auto all = store->runs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].status, run_status::completed);
  EXPECT_GE((*all)[0].ended_unix_ns, (*all)[0].started_unix_ns);
  EXPECT_EQ((*all)[1].status, run_status::partial);
  EXPECT_EQ((*all)[1].error, "agent h3 lost");
  EXPECT_EQ((*all)[1].parameters.at("x"), "1");
  EXPECT_TRUE((*all)[0].parameters.empty());
}

// A listing reads each run's spec only when asked: everything else is the same.
TEST(run_store, runs_leaves_the_spec_out_unless_asked) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(store->begin_run({"a", "twin", 7, "name: a\nseed: 7\n", {{"x", "1"}}, std::nullopt}).ok());
  auto with = store->runs();
  auto without = store->runs(with_spec_yaml::no);
  ASSERT_TRUE(with.ok() && without.ok());
  ASSERT_EQ(with->size(), 1u);
  ASSERT_EQ(without->size(), 1u);
  EXPECT_EQ((*with)[0].spec_yaml, "name: a\nseed: 7\n");
  EXPECT_EQ((*without)[0].spec_yaml, "");
  EXPECT_EQ((*without)[0].name, "a");
  EXPECT_EQ((*without)[0].seed, 7u);
  EXPECT_EQ((*without)[0].parameters.at("x"), "1");
}

TEST(run_store, a_parameter_known_after_the_run_is_added_or_replaced) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"m", "virtual", 1, "", {{"x", "1"}}, std::nullopt});
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->set_parameter(*id, "sim_to_real.predicted", "{\"a\":1}").ok());
  ASSERT_TRUE(store->set_parameter(*id, "x", "2").ok());
  auto r = store->run(*id);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->parameters.at("sim_to_real.predicted"), "{\"a\":1}");
  EXPECT_EQ(r->parameters.at("x"), "2");
  EXPECT_EQ(r->parameters.size(), 2u);
  EXPECT_EQ(store->set_parameter(*id + 7, "x", "3").code(), error_code::not_found);
}

TEST(run_store, a_calibration_is_kept_once_and_runs_name_the_one_they_modelled) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t first = 0, run = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
    const std::string yaml = "rocelab_calibration: 1\nlab: virtual\n";
    auto a = store->add_calibration("virtual", "2026-11-29T04:00:00Z", yaml);
    auto b = store->add_calibration("virtual", "2026-11-29T04:00:00Z", yaml);  // the same file again
    auto c = store->add_calibration("lab1", "2026-11-30T10:00:00Z", "rocelab_calibration: 1\nlab: lab1\n");
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_EQ(*a, *b);
    EXPECT_NE(*a, *c);
    first = *a;
    auto id = store->begin_run({"calibrated", "twin", 1, "", {}, std::nullopt});
    ASSERT_TRUE(id.ok());
    run = *id;
    ASSERT_TRUE(store->set_calibration(run, *a).ok());
    EXPECT_EQ(store->set_calibration(run, *c + 5).code(), error_code::not_found);
    EXPECT_EQ(store->set_calibration(run + 5, *a).code(), error_code::not_found);
    ASSERT_TRUE(store->begin_run({"plain", "twin", 1, "", {}, std::nullopt}).ok());
  }
  auto store = run_store::open(path, open_mode::read_only);
  ASSERT_TRUE(store.ok());
  auto all = store->calibrations();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  auto r = store->run(run);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->calibration, first);
  auto cal = store->calibration(*r->calibration);
  ASSERT_TRUE(cal.ok());
  EXPECT_EQ(cal->lab, "virtual");
  EXPECT_EQ(cal->taken_at, "2026-11-29T04:00:00Z");
  EXPECT_EQ(cal->yaml, "rocelab_calibration: 1\nlab: virtual\n");
  EXPECT_EQ(cal->sha256.size(), 64u);
  auto runs = store->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].calibration, first);
  EXPECT_FALSE((*runs)[1].calibration.has_value());
  EXPECT_EQ(store->calibration(first + 9).error().code(), error_code::not_found);
}

// The identity of a stored calibration is the SHA-256 of its text: FIPS 180-4's examples
// (one block, two blocks, the padding falling in a second block) and an empty text.
TEST(run_store, a_calibrations_identity_is_the_sha256_of_its_text) {
  struct digest_case {
    std::string text;
    const char* sha256;
  };
  const digest_case cases[] = {
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {std::string(1000, 'a'), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
  };
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  for (const auto& c : cases) {
    auto id = store->add_calibration("lab", "t", c.text);
    ASSERT_TRUE(id.ok());
    auto cal = store->calibration(*id);
    ASSERT_TRUE(cal.ok());
    EXPECT_EQ(cal->sha256, c.sha256) << c.text.size() << " bytes";
  }
}

TEST(run_store, agents_are_kept_per_run_and_updated_by_name) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"a", "lab", 1, "", {}, std::nullopt});
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store->add_agent(*id, {"h1", "198.18.0.1:7000", 1500.5, 20.25, "ok"}).ok());
  ASSERT_TRUE(store->add_agent(*id, {"h2", "198.18.0.2:7000", -300, 15, "ok"}).ok());
  ASSERT_TRUE(store->add_agent(*id, {"h2", "198.18.0.2:7000", -300, 15, "lost"}).ok());
  auto agents = store->agents(*id);
  ASSERT_TRUE(agents.ok());
  ASSERT_EQ(agents->size(), 2u);
  EXPECT_EQ((*agents)[0].name, "h1");
  EXPECT_DOUBLE_EQ((*agents)[0].clock_offset_ns, 1500.5);
  EXPECT_DOUBLE_EQ((*agents)[0].clock_uncertainty_ns, 20.25);
  EXPECT_EQ((*agents)[0].address, "198.18.0.1:7000");
  EXPECT_EQ((*agents)[1].state, "lost");
}

TEST(run_store, sweeps_and_trials_round_trip_and_link_runs) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto sweep = store->begin_sweep({0, "tune-incast", "bayes", "spec: 1\n", 40, 0});
  ASSERT_TRUE(sweep.ok());
  auto run = store->begin_run({"trial-0", "twin", 3, "", {}, *sweep});
  ASSERT_TRUE(run.ok());
  trial_record t0{*sweep, 0, {{"switch.ecn.kmin_bytes", 20480}, {"nic.dcqcn.rpg_time_reset", 300}}, 1.75, true, *run,
                  R"({"fct_ns":{"p99":1}})"};
  trial_record t1{*sweep, 1, {{"switch.ecn.kmin_bytes", 40960}}, 9.5, false, std::nullopt, "{}"};
  ASSERT_TRUE(store->add_trial(t0).ok());
  ASSERT_TRUE(store->add_trial(t1).ok());
  EXPECT_FALSE(store->add_trial(t1).ok()) << "the same index twice";
  trial_record orphan{*sweep + 1, 0, {}, 1, true, std::nullopt, "{}"};
  EXPECT_FALSE(store->add_trial(orphan).ok()) << "a trial of a sweep that does not exist";

  auto sweeps = store->sweeps();
  ASSERT_TRUE(sweeps.ok());
  ASSERT_EQ(sweeps->size(), 1u);
  EXPECT_EQ((*sweeps)[0].name, "tune-incast");
  EXPECT_EQ((*sweeps)[0].method, "bayes");
  EXPECT_EQ((*sweeps)[0].budget, 40u);
  EXPECT_EQ((*sweeps)[0].spec_yaml, "spec: 1\n");
  EXPECT_GT((*sweeps)[0].started_unix_ns, 0);

  auto trials = store->trials(*sweep);
  ASSERT_TRUE(trials.ok());
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].params, t0.params);
  EXPECT_DOUBLE_EQ((*trials)[0].objective, 1.75);
  EXPECT_TRUE((*trials)[0].feasible);
  EXPECT_EQ((*trials)[0].run, *run);
  EXPECT_EQ((*trials)[0].metrics_json, t0.metrics_json);
  EXPECT_FALSE((*trials)[1].feasible);
  EXPECT_FALSE((*trials)[1].run.has_value());
  EXPECT_EQ((*trials)[1].params, t1.params);

  auto info = store->run(*run);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->sweep, *sweep);
}

TEST(run_store, run_status_names_round_trip) {
  for (auto s : {run_status::running, run_status::completed, run_status::partial, run_status::interrupted,
                 run_status::failed}) {
    auto parsed = parse_run_status(to_string(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ(parse_run_status("done").error().code(), error_code::malformed_input);
}

TEST(run_store, a_read_only_store_cannot_write_and_a_missing_file_is_an_error) {
  temp_dir dir;
  auto missing = run_store::open(dir.file("nothing.db"), open_mode::read_only);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("nothing.db"), std::string::npos);
  {
    auto rw = run_store::open(dir.file("runs.db"));
    ASSERT_TRUE(rw.ok());
  }
  auto ro = run_store::open(dir.file("runs.db"), open_mode::read_only);
  ASSERT_TRUE(ro.ok()) << ro.error().message();
  auto id = ro->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  EXPECT_FALSE(id.ok());
  EXPECT_TRUE(ro->check_integrity().ok());
}

}  // namespace
}  // namespace rocelab::store
