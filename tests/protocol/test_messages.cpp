#include "rocelab/protocol/messages.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace rocelab::protocol {
namespace {

std::vector<std::uint8_t> frame_of(std::uint16_t version, std::uint16_t type, const std::string& body,
                                   std::int64_t declared = -1) {
  const auto n = static_cast<std::uint32_t>(declared >= 0 ? declared : static_cast<std::int64_t>(body.size()));
  std::vector<std::uint8_t> f = {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
                                 static_cast<std::uint8_t>(n >> 8),  static_cast<std::uint8_t>(n),
                                 static_cast<std::uint8_t>(version >> 8), static_cast<std::uint8_t>(version),
                                 static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type)};
  for (char c : body) f.push_back(static_cast<std::uint8_t>(c));
  return f;
}

template <typename T>
T round_trip(const T& in) {
  auto frame = encode(in);
  EXPECT_TRUE(frame.ok()) << frame.error().message();
  auto out = decode_frame(*frame);
  EXPECT_TRUE(out.ok()) << out.error().message();
  EXPECT_TRUE(std::holds_alternative<T>(*out));
  return std::get<T>(*out);
}

TEST(protocol, header_is_eight_big_endian_bytes) {
  auto frame = encode(heartbeat{7});
  ASSERT_TRUE(frame.ok());
  const std::uint32_t body = static_cast<std::uint32_t>(frame->size() - frame_header_bytes);
  EXPECT_EQ((*frame)[0], body >> 24);
  EXPECT_EQ((*frame)[3], body & 0xff);
  EXPECT_EQ((*frame)[4], 0);
  EXPECT_EQ((*frame)[5], protocol_version);
  EXPECT_EQ((*frame)[7], static_cast<std::uint8_t>(message_type::heartbeat));
}

TEST(protocol, every_message_round_trips) {
  hello h{peer_role::agent, "h3", {"soft", "verbs"}, 4242};
  auto h2 = round_trip(h);
  EXPECT_EQ(h2.name, "h3");
  EXPECT_EQ(h2.transports, h.transports);
  EXPECT_EQ(h2.pid, 4242);

  auto w = round_trip(welcome{"s-1", 250, 3000, 7100, std::numeric_limits<std::uint64_t>::max()});
  EXPECT_EQ(w.deadman_ms, 3000);
  EXPECT_EQ(w.clock_port, 7100);
  EXPECT_EQ(w.clock_cookie, std::numeric_limits<std::uint64_t>::max());

  auto x = round_trip(clock_exchange{-1, 2, 3, std::numeric_limits<std::int64_t>::max()});
  EXPECT_EQ(x.t1_ns, -1);
  EXPECT_EQ(x.t2_ns, 2);
  EXPECT_EQ(x.t3_ns, 3);
  EXPECT_EQ(x.t4_ns, std::numeric_limits<std::int64_t>::max());

  auto c = round_trip(clock_reply{9, -5, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(), {}});
  EXPECT_EQ(c.t1_ns, -5);
  EXPECT_EQ(c.t2_ns, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(c.t3_ns, std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(c.host_clock) << "a reply without a host clock stays without one";
  auto ch = round_trip(clock_reply{1, 2, 3, 4, host_clock_reading{"ptp", 1310, -1'700'000'000'123'456'789, "ptp4l: gm"}});
  ASSERT_TRUE(ch.host_clock);
  EXPECT_EQ(ch.host_clock->source, "ptp");
  EXPECT_EQ(ch.host_clock->error_bound_ns, 1310);
  EXPECT_EQ(ch.host_clock->realtime_minus_clock_ns, -1'700'000'000'123'456'789);
  EXPECT_EQ(ch.host_clock->detail, "ptp4l: gm");

  auto a = round_trip(apply_settings{3, "files", {{"eth0", "roce_np/min_time_between_cnps", "4"}}});
  ASSERT_EQ(a.settings.size(), 1u);
  EXPECT_EQ(a.settings[0].name, "roce_np/min_time_between_cnps");

  start_job j;
  j.job = 11;
  j.run = 5;
  j.kind = job_kind::soft;
  j.start_at_ns = 123456789;
  j.timeout_ms = 5000;
  j.host = 1;
  j.hosts = {"h1", "h2"};
  j.messages = {{0, 65536, 10, 77}};
  j.transport_config = "{\"ifname\":\"eth0\"}";
  auto j2 = round_trip(j);
  EXPECT_EQ(j2.kind, job_kind::soft);
  EXPECT_EQ(j2.messages.at(0).bytes, 65536u);
  EXPECT_EQ(j2.messages.at(0).tag, 77u);
  EXPECT_EQ(j2.transport_config, j.transport_config);

  job_report r;
  r.job = 11;
  r.started_ns = 42;
  flow_record f;
  f.src = 1;
  f.dst = 0;
  f.qp = 0x100;
  f.kind = workload_kind::incast;
  f.bytes = 1 << 20;
  f.start_ns = 10;
  f.end_ns = 20;
  f.fct_ns = 10;
  f.ce_marked = 3;
  r.flows = {f};
  r.counters = {{1, 0, "rx_pfc", 99, 12}};
  r.done = true;
  auto r2 = round_trip(r);
  ASSERT_EQ(r2.flows.size(), 1u);
  EXPECT_EQ(r2.flows[0].kind, workload_kind::incast);
  EXPECT_EQ(r2.flows[0].ce_marked, 3u);
  EXPECT_EQ(r2.counters.at(0).name, "rx_pfc");
  EXPECT_TRUE(r2.done);

  auto s = round_trip(submit_run{1, "backend: twin\n", "x.yaml", {"seed=3"}, "s-7f3a_9", true});
  EXPECT_EQ(s.sets.at(0), "seed=3");
  EXPECT_EQ(s.submission, "s-7f3a_9");
  EXPECT_TRUE(s.retry);
  auto e = round_trip(error_message{2, "invalid argument", "spec.yaml:3: ..."});
  EXPECT_EQ(e.message, "spec.yaml:3: ...");

  // The soft NIC's lines, relayed through the agent unchanged and in order.
  auto nc = round_trip(nic_command{9, {R"({"op":"post","qpn":257,"verb":"write","bytes":4096,"ref":0})", R"({"op":"stop"})"}});
  EXPECT_EQ(nc.job, 9u);
  ASSERT_EQ(nc.lines.size(), 2u);
  EXPECT_EQ(nc.lines[1], R"({"op":"stop"})");
  auto ne = round_trip(nic_event{9, {R"({"ev":"ready","t_ns":5})"}});
  EXPECT_EQ(ne.lines.at(0), R"({"ev":"ready","t_ns":5})");
}

TEST(protocol, worker_messages_round_trip_with_every_record_kind) {
  auto w = round_trip(register_worker{"node1-7", "node1", 7, {"twin"}, 2, "41", "1", "node1"});
  EXPECT_EQ(w.name, "node1-7");
  EXPECT_EQ(w.threads, 2u);
  EXPECT_EQ(w.slurm_job_id, "41");
  EXPECT_EQ(w.slurm_array_task_id, "1");
  EXPECT_EQ(w.slurm_node, "node1");
  auto a = round_trip(trial_assignment{5, 2, "backend: twin\n", "x.yaml"});
  EXPECT_EQ(a.trial, 5u);
  EXPECT_EQ(a.attempt, 2u);
  EXPECT_EQ(a.spec_yaml, "backend: twin\n");

  run_records r;
  r.backend = "twin";
  r.hosts = {"h1", "h2"};
  r.devices = {"sw0"};
  flow_record f;
  f.src = 1;
  f.kind = workload_kind::victim;
  f.bytes = 4096;
  f.end_ns = 99;
  r.flows = {f};
  r.pauses = {{0, 1, 3, 10, 20, pause_source::counter}};
  r.counters = {{0, 1, "rx_pfc", 5, 2}};
  r.queues = {{0, 2, 3, 5, 4096}};
  r.allreduce = {{"ring", 4, 1 << 20, 1000, 8.5, 12.75}};
  r.events = {{event_kind::drop, 0, 1, 3, 7, 1, 0, 2, pause_source::capture}};
  r.totals = {1, 2, 10, 3, 4, 5, 6, 100};
  r.simulated_ns = 1234;
  r.lost_hosts = {"h2: lost"};
  r.degraded = {"overran"};
  auto t = round_trip(trial_result{5, 2, "", {trial_repeat{0, 9, r}, trial_repeat{1, 10, run_records{}}}, false});
  EXPECT_FALSE(t.done);
  EXPECT_EQ(t.repeats[1].index, 1u);
  ASSERT_EQ(t.repeats.size(), 2u);
  EXPECT_EQ(t.repeats[0].seed, 9u);
  const run_records& b = t.repeats[0].records;
  EXPECT_EQ(b.backend, "twin");
  EXPECT_EQ(b.hosts, r.hosts);
  ASSERT_EQ(b.flows.size(), 1u);
  EXPECT_EQ(b.flows[0].kind, workload_kind::victim);
  EXPECT_EQ(b.flows[0].end_ns, 99);
  EXPECT_TRUE(b.flows[0].retransmits_measured);
  EXPECT_TRUE(b.totals.cnps_measured);
  ASSERT_EQ(b.pauses.size(), 1u);
  EXPECT_EQ(b.pauses[0].source, pause_source::counter);
  EXPECT_EQ(b.pauses[0].end_ns, 20);
  ASSERT_EQ(b.queues.size(), 1u);
  EXPECT_EQ(b.queues[0].bytes, 4096u);
  ASSERT_EQ(b.allreduce.size(), 1u);
  EXPECT_DOUBLE_EQ(b.allreduce[0].busbw_gbps, 12.75);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].kind, event_kind::drop);
  EXPECT_EQ(b.events[0].source, pause_source::capture);
  EXPECT_EQ(b.totals.packets_forwarded, 100u);
  EXPECT_EQ(b.totals.cnps, 4u);
  EXPECT_EQ(b.simulated_ns, 1234);
  EXPECT_EQ(b.lost_hosts, r.lost_hosts);
  EXPECT_EQ(b.degraded, r.degraded);
  EXPECT_TRUE(t.repeats[1].records.flows.empty());
}

// A hardware NIC's flows: the counts not measured survive the trip (and are only on the
// wire when false, so a soft NIC's messages are as before).
TEST(protocol, counts_not_measured_round_trip) {
  run_records r;
  r.hosts = {"h1", "h2"};
  flow_record f;
  f.dst = 1;
  f.retransmits_measured = false;
  f.cnps_measured = false;
  r.flows = {f, flow_record{}};
  r.totals.retransmits_measured = false;
  auto t = round_trip(trial_result{1, 0, "", {trial_repeat{0, 1, r}}, true});
  ASSERT_EQ(t.repeats.size(), 1u);
  const run_records& b = t.repeats[0].records;
  ASSERT_EQ(b.flows.size(), 2u);
  EXPECT_FALSE(b.flows[0].retransmits_measured);
  EXPECT_FALSE(b.flows[0].cnps_measured);
  EXPECT_TRUE(b.flows[1].retransmits_measured);
  EXPECT_FALSE(b.totals.retransmits_measured);
  EXPECT_TRUE(b.totals.cnps_measured);
}

TEST(protocol, a_trial_result_with_a_bad_nested_record_names_it) {
  const std::string body =
      "{\"trial\":1,\"attempt\":1,\"error\":\"\",\"done\":true,\"repeats\":[{\"index\":0,\"seed\":1,\"records\":{\"backend\":\"twin\","
      "\"hosts\":[],\"devices\":[],\"flows\":[],\"pauses\":[],\"counters\":[],\"queues\":[],\"allreduce\":[],"
      "\"events\":[{\"kind\":9,\"device\":0,\"port\":0,\"priority\":0,\"t_ns\":0,\"src\":0,\"dst\":0,\"qp\":0,"
      "\"source\":0}],\"totals\":{},\"simulated_ns\":0,\"lost_hosts\":[],\"degraded\":[]}}]}";
  auto m = decode_frame(frame_of(protocol_version, static_cast<std::uint16_t>(message_type::trial_result), body));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("field kind: unknown event kind"), std::string::npos) << m.error().message();
}

TEST(protocol, a_large_trial_result_splits_into_frames_and_joins_back_in_order) {
  trial_result big{3, 1, "", {}, true};
  for (std::uint32_t rep = 0; rep < 2; ++rep) {
    trial_repeat t;
    t.index = rep;
    t.seed = 100 + rep;
    t.records.backend = "twin";
    t.records.hosts = {"h1", "h2"};
    t.records.simulated_ns = 77 + rep;
    t.records.totals.drops = 5;
    for (std::uint64_t i = 0; i < 25; ++i) {
      flow_record f;
      f.tag = i;
      t.records.flows.push_back(f);
    }
    for (std::int64_t i = 0; i < 7; ++i) t.records.events.push_back({event_kind::cnp, 0, 0, 3, i, 0, 1, 2, pause_source::model});
    big.repeats.push_back(t);
  }
  auto pieces = split_trial_result(big, 10);
  ASSERT_EQ(pieces.size(), 6u) << "3 pieces per repeat of 25 flows";
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(pieces[i].done, i + 1 == pieces.size());
    EXPECT_TRUE(encode(pieces[i]).ok());
  }
  EXPECT_TRUE(pieces[1].repeats[0].records.hosts.empty()) << "scalars go with the first piece only";
  trial_result joined = round_trip(pieces[0]);
  for (std::size_t i = 1; i < pieces.size(); ++i) append_trial_piece(joined, round_trip(pieces[i]));
  EXPECT_TRUE(joined.done);
  ASSERT_EQ(joined.repeats.size(), 2u);
  for (std::uint32_t rep = 0; rep < 2; ++rep) {
    const run_records& r = joined.repeats[rep].records;
    EXPECT_EQ(joined.repeats[rep].seed, 100u + rep);
    EXPECT_EQ(r.hosts, big.repeats[rep].records.hosts);
    EXPECT_EQ(r.simulated_ns, 77 + rep);
    EXPECT_EQ(r.totals.drops, 5u);
    ASSERT_EQ(r.flows.size(), 25u);
    for (std::uint64_t i = 0; i < 25; ++i) EXPECT_EQ(r.flows[i].tag, i);
    ASSERT_EQ(r.events.size(), 7u);
    EXPECT_EQ(r.events[6].t_ns, 6);
  }
  auto failed = split_trial_result(trial_result{4, 2, "spec invalid", {}, true});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].error, "spec invalid");
  EXPECT_TRUE(failed[0].done);
}

TEST(protocol, a_worker_without_a_name_is_refused) {
  auto m = decode_frame(frame_of(protocol_version, static_cast<std::uint16_t>(message_type::register_worker),
                                 "{\"name\":\"\",\"host\":\"h\",\"pid\":1,\"capabilities\":[],\"threads\":1,"
                                 "\"slurm_job_id\":\"\",\"slurm_array_task_id\":\"\",\"slurm_node\":\"\"}"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("field name: expected 1 to 128 characters"), std::string::npos) << m.error().message();
}

TEST(protocol, a_relay_of_more_lines_than_the_limit_is_refused) {
  nic_event big{1, std::vector<std::string>(max_lines_per_relay + 1, "{}")};
  auto frame = encode(big);
  ASSERT_TRUE(frame.ok());
  auto m = decode_frame(*frame);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("field lines: 1025 lines exceed the limit of 1024"), std::string::npos)
      << m.error().message();
}

struct rejection_case {
  const char* name;
  std::vector<std::uint8_t> frame;
  const char* expected;  // part of the error message
};

class protocol_rejects : public ::testing::TestWithParam<rejection_case> {};

TEST_P(protocol_rejects, with_an_error_naming_the_problem) {
  auto m = decode_frame(GetParam().frame);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find(GetParam().expected), std::string::npos) << m.error().message();
}

constexpr auto hb = static_cast<std::uint16_t>(message_type::heartbeat);
constexpr auto cr = static_cast<std::uint16_t>(message_type::clock_reply);
constexpr auto hl = static_cast<std::uint16_t>(message_type::hello);

INSTANTIATE_TEST_SUITE_P(
    cases, protocol_rejects,
    ::testing::Values(
        rejection_case{"short_header", {0, 0, 0}, "3 of 8 bytes"},
        rejection_case{"other_version", frame_of(protocol_version + 1, hb, "{\"seq\":1}"), "protocol version 7 (this side speaks 6)"},
        rejection_case{"unknown_type", frame_of(protocol_version, 999, "{}"), "unknown message type 999"},
        rejection_case{"empty_body", frame_of(protocol_version, hb, ""), "empty body"},
        rejection_case{"oversize", frame_of(protocol_version, hb, "", std::int64_t{max_body_bytes} + 1), "exceeds the limit"},
        rejection_case{"truncated_body", frame_of(protocol_version, hb, "{\"seq\":1}", 20), "truncated"},
        rejection_case{"trailing_bytes", [] { auto f = frame_of(protocol_version, hb, "{\"seq\":1}"); f.push_back('x'); return f; }(),
                       "after the body"},
        rejection_case{"not_json", frame_of(protocol_version, hb, "{seq:1"), "not valid JSON"},
        rejection_case{"not_an_object", frame_of(protocol_version, hb, "[1]"), "expected a JSON object"},
        rejection_case{"missing_field", frame_of(protocol_version, cr, "{\"seq\":1,\"t1_ns\":1,\"t2_ns\":2}"), "field t3_ns: missing"},
        rejection_case{"wrong_type", frame_of(protocol_version, cr, "{\"seq\":1,\"t1_ns\":1,\"t2_ns\":\"2\",\"t3_ns\":3}"),
                       "field t2_ns: expected an integer"},
        rejection_case{"host_clock_unknown_source",
                       frame_of(protocol_version, cr,
                                "{\"seq\":1,\"t1_ns\":1,\"t2_ns\":2,\"t3_ns\":3,\"host_clock\":{\"source\":\"gps\","
                                "\"error_bound_ns\":1,\"realtime_minus_clock_ns\":0,\"detail\":\"\"}}"),
                       "field host_clock: field source: unknown value 'gps'"},
        rejection_case{"host_clock_missing_bound",
                       frame_of(protocol_version, cr,
                                "{\"seq\":1,\"t1_ns\":1,\"t2_ns\":2,\"t3_ns\":3,\"host_clock\":{\"source\":\"ntp\","
                                "\"realtime_minus_clock_ns\":0,\"detail\":\"\"}}"),
                       "field error_bound_ns: missing"},
        rejection_case{"negative_unsigned", frame_of(protocol_version, hb, "{\"seq\":-1}"), "must not be negative"},
        rejection_case{"unknown_field", frame_of(protocol_version, hb, "{\"seq\":1,\"cmd\":\"rm -rf /\"}"), "field cmd: unknown field"},
        rejection_case{"bad_enum", frame_of(protocol_version, hl, "{\"role\":\"root\",\"name\":\"x\",\"transports\":[],\"pid\":1}"),
                       "field role: unknown value 'root'"},
        rejection_case{"agent_without_name", frame_of(protocol_version, hl, "{\"role\":\"agent\",\"name\":\"\",\"transports\":[],\"pid\":1}"),
                       "an agent needs a name"},
        rejection_case{"job_dst_out_of_range",
                       frame_of(protocol_version, static_cast<std::uint16_t>(message_type::start_job),
                                "{\"job\":1,\"run\":1,\"kind\":\"soft\",\"start_at_ns\":0,\"timeout_ms\":10,\"host\":0,"
                                "\"hosts\":[\"h1\"],\"messages\":[{\"dst\":4,\"bytes\":1,\"offset_ns\":0,\"tag\":0}],"
                                "\"transport_config\":\"\"}"),
                       "dst 4 is not an index"},
        rejection_case{"submission_id_with_a_path",
                       frame_of(protocol_version, static_cast<std::uint16_t>(message_type::submit_run),
                                "{\"request\":1,\"spec_yaml\":\"x\",\"source_name\":\"\",\"sets\":[],"
                                "\"submission\":\"../etc\",\"retry\":false}"),
                       "field submission: expected up to 64 of [A-Za-z0-9_-]"},
        rejection_case{"relay_line_not_a_string",
                       frame_of(protocol_version, static_cast<std::uint16_t>(message_type::nic_command),
                                "{\"job\":1,\"lines\":[{\"op\":\"stop\"}]}"),
                       "field lines: expected an array of strings"},
        rejection_case{"nested_wrong_type",
                       frame_of(protocol_version, static_cast<std::uint16_t>(message_type::apply_settings),
                                "{\"request\":1,\"driver\":\"files\",\"settings\":[{\"device\":\"e\",\"name\":1,\"value\":\"v\"}]}"),
                       "settings[0]: field name: expected a string"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(protocol, oversize_is_refused_from_the_header_alone) {
  // Only the 8 header bytes: a reader learns the frame is too big before buffering it.
  auto f = frame_of(protocol_version, hb, "", std::int64_t{max_body_bytes} + 1);
  auto h = parse_header(f);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code(), error_code::resource_exhausted);
}

TEST(protocol, encoder_refuses_a_body_over_the_limit) {
  submit_run big;
  big.spec_yaml.assign(max_body_bytes + 1, 'x');
  auto f = encode(big);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code(), error_code::resource_exhausted);
}

TEST(protocol, a_report_of_max_flows_fits_in_one_frame) {
  job_report r;
  flow_record f;
  f.bytes = std::numeric_limits<std::uint64_t>::max();
  f.start_ns = std::numeric_limits<std::int64_t>::min();
  f.end_ns = std::numeric_limits<std::int64_t>::max();
  r.flows.assign(max_flows_per_report, f);
  EXPECT_TRUE(encode(r).ok());
}

}  // namespace
}  // namespace rocelab::protocol
