// Unit tests of the soft switch's pure pieces: the real-time clock's ordering, control
// request parsing, settings by name, the ECN rewrite with its RFC 1624 checksum update,
// the DSCP/PCP map and the ERSPAN mirror framing.
#include "rocelab/fabric/soft_switch/control_api.hpp"

#include <gtest/gtest.h>

#include "rocelab/captures/congestion_analyzer.hpp"

#include <vector>

#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/fabric/soft_switch/frame_ops.hpp"
#include "rocelab/fabric/soft_switch/mirror.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/fabric/soft_switch/switch_settings.hpp"
#include "rocelab/fabric/switch_model.hpp"

namespace rocelab::fabric::soft_switch {
namespace {

namespace cap = captures;

// ---- realtime_clock ----

struct recorder final : timer_client {
  std::vector<std::pair<std::int64_t, std::uint64_t>> fired;
  void on_timer(std::int64_t now_ns, std::uint64_t cookie) override { fired.emplace_back(now_ns, cookie); }
};

TEST(RealtimeClock, NowIsMonotonicNanoseconds) {
  realtime_clock c;
  const std::int64_t a = c.now_ns();
  const std::int64_t b = c.now_ns();
  EXPECT_LE(a, b);
  EXPECT_GT(a, 0);
}

TEST(RealtimeClock, FiresDueTimersInTimeThenSchedulingOrderAndNothingEarly) {
  realtime_clock c;
  recorder r;
  const std::int64_t t0 = c.now_ns();
  c.schedule(t0 + 3000, r, 3);
  c.schedule(t0 + 1000, r, 1);
  c.schedule(t0 + 1000, r, 2);  // same time: after cookie 1
  const timer_id cancelled = c.schedule(t0 + 2000, r, 99);
  c.schedule(t0 + 1'000'000'000, r, 4);  // far future
  EXPECT_TRUE(c.cancel(cancelled));
  EXPECT_EQ(c.run_due(t0 + 500), 0u);
  EXPECT_EQ(c.next_due_ns(), t0 + 1000);
  EXPECT_EQ(c.run_due(t0 + 5000), 3u);
  ASSERT_EQ(r.fired.size(), 3u);
  EXPECT_EQ(r.fired[0], std::make_pair(t0 + 1000, std::uint64_t{1}));
  EXPECT_EQ(r.fired[1], std::make_pair(t0 + 1000, std::uint64_t{2}));
  EXPECT_EQ(r.fired[2], std::make_pair(t0 + 3000, std::uint64_t{3}));
  EXPECT_EQ(c.pending(), 1u);
  EXPECT_FALSE(c.cancel(cancelled));
}

TEST(RealtimeClock, ATimerInThePastFiresAtTheNextRun) {
  realtime_clock c;
  recorder r;
  c.schedule(c.now_ns() - 1'000'000, r, 7);
  EXPECT_EQ(c.run_due(c.now_ns()), 1u);
  ASSERT_EQ(r.fired.size(), 1u);
}

TEST(RealtimeClock, DrivesTheSwitchModelsPfcRefresh) {
  // The model registers PFC refresh timers with the clock; a real-time clock must take
  // them like the virtual one.
  realtime_clock c;
  switch_config cfg;
  cfg.ports.resize(2);
  auto m = switch_model::create(cfg, c);
  ASSERT_TRUE(m.ok()) << m.error().message();
}

// ---- control API parsing ----

struct parse_case {
  const char* name;
  const char* line;
  bool ok;
  const char* field;  // expected "field" of the error
};

class ControlParse : public ::testing::TestWithParam<parse_case> {};

TEST_P(ControlParse, AcceptsTypedOperationsAndNamesTheWrongMember) {
  const parse_case& c = GetParam();
  auto r = parse_request(c.line);
  EXPECT_EQ(r.ok(), c.ok) << (r.ok() ? "" : r.error().message());
  if (!r.ok()) {
    const auto j = error_response(r.error());
    EXPECT_FALSE(j["ok"].get<bool>());
    EXPECT_EQ(j.value("field", ""), c.field) << j.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ControlParse,
    ::testing::Values(
        parse_case{"ping", R"({"op":"ping"})", true, ""},
        parse_case{"counters", R"({"op":"counters"})", true, ""},
        parse_case{"get_with_selectors", R"({"op":"get","field":"queue.ecn.kmin_bytes","port":"p1","priority":3})", true, ""},
        parse_case{"set_one", R"({"op":"set","field":"pfc.pause_quanta","value":100})", true, ""},
        parse_case{"set_many", R"({"op":"set","fields":[{"field":"buffer_bytes","value":65536},{"field":"lossless_priorities","value":0}]})", true, ""},
        parse_case{"mirror", R"({"op":"mirror","enabled":true,"direction":"egress","truncate_bytes":128,"erspan":3})", true, ""},
        parse_case{"mirror_arrivals", R"({"op":"mirror","enabled":true,"arrivals":true})", true, ""},
        parse_case{"mirror_arrivals_not_bool", R"({"op":"mirror","arrivals":1})", false, "arrivals"},
        parse_case{"fault_drop", R"({"op":"fault","kind":"drop","dest_qp":17,"nth":5})", true, ""},
        parse_case{"fault_storm", R"({"op":"fault","kind":"pfc_storm","port":0,"priority":3,"count":10})", true, ""},
        parse_case{"not_json", R"({"op":)", false, "request"},
        parse_case{"no_op", R"({"field":"x"})", false, "op"},
        parse_case{"unknown_op", R"({"op":"reboot"})", false, "op"},
        parse_case{"get_without_field", R"({"op":"get"})", false, "field"},
        parse_case{"set_without_value", R"({"op":"set","field":"buffer_bytes"})", false, "value"},
        parse_case{"priority_out_of_range", R"({"op":"get","field":"pg.headroom_bytes","priority":8})", false, "priority"},
        parse_case{"bad_direction", R"({"op":"mirror","direction":"sideways"})", false, "direction"},
        parse_case{"bad_erspan_type", R"({"op":"mirror","erspan":1})", false, "erspan"},
        parse_case{"truncate_below_header", R"({"op":"mirror","truncate_bytes":8})", false, "truncate_bytes"},
        parse_case{"fault_nth_zero", R"({"op":"fault","kind":"drop","dest_qp":17,"nth":0})", false, "nth"},
        parse_case{"fault_qp_too_wide", R"({"op":"fault","kind":"mark","dest_qp":16777216,"nth":1})", false, "dest_qp"},
        parse_case{"delay_without_port", R"({"op":"fault","kind":"delay","delay_ns":1000})", false, "port"},
        parse_case{"fault_kind", R"({"op":"fault","kind":"melt"})", false, "kind"}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- settings by name ----

TEST(SwitchSettings, GetAndSetByNameWithScopes) {
  switch_settings s = lab_default_settings(3, 1'000'000'000, 1 << 20, 4200);
  EXPECT_TRUE(validate(s.model).ok());
  auto v = get_field(s, "queue.ecn.enabled", 1, 3);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->get<bool>());
  ASSERT_TRUE(set_field(s, "queue.ecn.enabled", false, -1, 3).ok());
  for (int p = 0; p < 3; ++p) EXPECT_FALSE(s.model.ports[p].queues[3].ecn.enabled);
  ASSERT_TRUE(set_field(s, "pg.dynamic_th", -2, 0, 3).ok());
  EXPECT_EQ(s.model.ports[0].pgs[3].shared.mode, buffer_threshold::kind::dynamic);
  EXPECT_EQ(s.model.ports[0].pgs[3].shared.alpha_log2, -2);
  ASSERT_TRUE(set_field(s, "rate_bps", 2'000'000'000, -1, -1).ok());
  EXPECT_EQ(s.model.ports[2].rate_bps, 2'000'000'000);
  auto all = get_field(s, "rate_bps", -1, -1);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  ASSERT_TRUE(set_field(s, "dscp_to_tc", nlohmann::json{{"10", 5}}, -1, -1).ok());
  EXPECT_EQ(s.classes.dscp_to_tc[10], 5);
  const status bad = set_field(s, "pg.dynamic_th", 9, 0, 3);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(error_response(bad)["field"], "pg.dynamic_th");
  EXPECT_FALSE(set_field(s, "no.such", 1, -1, -1).ok());
  EXPECT_FALSE(get_field(s, "rate_bps", 5, -1).ok());
  EXPECT_TRUE(to_json(s).contains("queue.ecn.kmax_bytes"));
}

// ---- ECN rewrite ----

std::uint16_t ipv4_header_checksum(const std::uint8_t* ip) {
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += (std::uint32_t{ip[i]} << 8) | ip[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

std::vector<std::uint8_t> roce(std::uint8_t version, std::uint8_t dscp, cap::wire::ecn_codepoint ecn) {
  cap::roce_frame_spec spec;
  spec.ip.version = version;
  spec.ip.src = version == 4 ? cap::ipv4_mapped(198, 18, 0, 1) : std::array<std::uint8_t, 16>{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  spec.ip.dst = version == 4 ? cap::ipv4_mapped(198, 18, 0, 2) : std::array<std::uint8_t, 16>{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  spec.ip.dscp = dscp;
  spec.ip.ecn = ecn;
  spec.ip.ipv4_identification = 0x1234;
  spec.dest_qp = 0x42;
  spec.psn = 7;
  static const std::array<std::uint8_t, 32> payload{};
  spec.payload = payload;
  std::vector<std::uint8_t> f;
  cap::append_roce_frame(spec, f);
  return f;
}

TEST(EcnRewrite, Rfc1624UpdateMatchesARecomputedChecksumForEveryTos) {
  for (int dscp = 0; dscp < 64; ++dscp) {
    for (auto ecn : {cap::wire::ecn_codepoint::ect0, cap::wire::ecn_codepoint::ect1, cap::wire::ecn_codepoint::not_ect}) {
      auto f = roce(4, static_cast<std::uint8_t>(dscp), ecn);
      frame_info info;
      parse_frame(f, info);
      ASSERT_EQ(info.ip_version, 4);
      ASSERT_TRUE(set_ce(f, info));
      cap::dissected_frame d;
      cap::dissect(cap::link_type::ethernet, f, d);
      EXPECT_EQ(d.ecn, 3);
      EXPECT_EQ(d.dscp, dscp);
      EXPECT_EQ(ipv4_header_checksum(f.data() + info.ip_offset), 0) << "dscp " << dscp;
      // The RoCEv2 ICRC masks the TOS: still valid after the rewrite.
    }
  }
}

TEST(EcnRewrite, ChecksumUpdateIsRfc1624Eqn3) {
  // RFC 1624 section 4's example: HC = 0xDD2F, m = 0x5555 -> m' = 0x3285 gives 0x0000,
  // where eqn. 2 would give 0xFFFF.
  EXPECT_EQ(checksum_update(0xDD2F, 0x5555, 0x3285), 0x0000);
}

TEST(EcnRewrite, Ipv6TrafficClassKeepsDscpAndFlowLabel) {
  auto f = roce(6, 26, cap::wire::ecn_codepoint::ect0);
  frame_info info;
  parse_frame(f, info);
  ASSERT_EQ(info.ip_version, 6);
  ASSERT_TRUE(set_ce(f, info));
  cap::dissected_frame d;
  cap::dissect(cap::link_type::ethernet, f, d);
  EXPECT_EQ(d.ecn, 3);
  EXPECT_EQ(d.dscp, 26);
  EXPECT_TRUE(d.is_roce);
  EXPECT_EQ(d.dest_qp, 0x42u);
}

TEST(EcnRewrite, NonIpIsLeftAlone) {
  std::vector<std::uint8_t> f(60, 0);
  f[12] = 0x88;
  f[13] = 0xB5;
  frame_info info;
  parse_frame(f, info);
  EXPECT_FALSE(set_ce(f, info));
}

// ---- classification ----

struct class_case {
  const char* name;
  std::uint8_t dscp;
  int pcp;  // -1: untagged
  std::uint8_t tc;
};

class Classify : public ::testing::TestWithParam<class_case> {};

TEST_P(Classify, RoceDefaultMap) {
  const class_case& c = GetParam();
  cap::roce_frame_spec spec;
  spec.ip.dscp = c.dscp;
  spec.ip.src = cap::ipv4_mapped(198, 18, 0, 1);
  spec.ip.dst = cap::ipv4_mapped(198, 18, 0, 2);
  if (c.pcp >= 0) {
    spec.eth.vlan_count = 1;
    spec.eth.vlans[0].pcp = static_cast<std::uint8_t>(c.pcp);
    spec.eth.vlans[0].vid = 100;
  }
  std::vector<std::uint8_t> f;
  cap::append_roce_frame(spec, f);
  frame_info info;
  parse_frame(f, info);
  EXPECT_EQ(priority_map::roce_default().classify(info), c.tc);
}

INSTANTIATE_TEST_SUITE_P(Table, Classify,
                         ::testing::Values(class_case{"roce_af31", 26, -1, 3}, class_case{"cs3", 24, -1, 3},
                                           class_case{"af33", 30, -1, 3}, class_case{"cnp_cs6", 48, -1, 6},
                                           class_case{"best_effort", 0, -1, 0}, class_case{"ef", 46, -1, 0},
                                           class_case{"tagged_trusts_pcp", 26, 5, 5},
                                           class_case{"tagged_pcp3", 0, 3, 3}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ParseFrame, PfcFrameFields) {
  cap::pfc_frame_spec spec;
  spec.class_enable = 0x08;
  spec.quanta[3] = 0xFFFF;
  std::vector<std::uint8_t> f;
  cap::append_pfc_frame(spec, f);
  frame_info info;
  parse_frame(f, info);
  EXPECT_TRUE(info.is_pfc);
  EXPECT_EQ(info.pfc_class_enable, 0x08);
  EXPECT_EQ(info.pfc_quanta[3], 0xFFFF);
}

TEST(ParseFrame, TruncatedFramesAreSafe) {
  auto f = roce(4, 26, cap::wire::ecn_codepoint::ect0);
  for (std::size_t n = 0; n <= f.size(); ++n) {
    frame_info info;
    parse_frame(std::span<const std::uint8_t>(f.data(), n), info);
    EXPECT_EQ(info.valid, n >= 14);
  }
}

// ---- mirror framing ----

TEST(MirrorCopy, PlainCopyTruncates) {
  auto f = roce(4, 26, cap::wire::ecn_codepoint::ect0);
  mirror_settings m;
  m.truncate_bytes = 64;
  std::vector<std::uint8_t> out(2048);
  bool truncated = false;
  const std::size_t n = build_mirror_copy(m, {}, f, out, truncated);
  EXPECT_EQ(n, 64u);
  EXPECT_TRUE(truncated);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 64, f.begin()));
}

class MirrorErspan : public ::testing::TestWithParam<int> {};

TEST_P(MirrorErspan, DissectsBackToTheMirroredFrame) {
  auto f = roce(4, 26, cap::wire::ecn_codepoint::ect0);
  mirror_settings m;
  m.erspan_type = static_cast<std::uint8_t>(GetParam());
  m.session_id = 77;
  m.truncate_bytes = 64;  // the frame is 90 bytes
  m.src_mac = {0x02, 0x52, 0x4c, 0x02, 0, 1};
  m.dst_mac = {0x02, 0x52, 0x4c, 0x03, 0, 1};
  std::vector<std::uint8_t> out(2048);
  bool truncated = false;
  const std::size_t n = build_mirror_copy(m, {.port = 2, .egress = true, .tc = 3, .now_ns = 12345, .sequence = 9}, f, out,
                                          truncated);
  EXPECT_TRUE(truncated);
  cap::dissected_frame d;
  cap::dissect(cap::link_type::ethernet, std::span<const std::uint8_t>(out.data(), n), d);
  EXPECT_EQ(d.erspan_type, GetParam());
  EXPECT_EQ(d.erspan_session, 77);
  EXPECT_TRUE(d.erspan_inner_parsed);
  // Outer Ethernet 14, IPv4 20, GRE with sequence number 8, ERSPAN II 8 / III 12.
  const std::size_t header = GetParam() == 2 ? 50 : 54;
  ASSERT_EQ(n, header + 64);
  EXPECT_TRUE(std::equal(out.begin() + static_cast<std::ptrdiff_t>(header), out.begin() + static_cast<std::ptrdiff_t>(n),
                         f.begin()));
  EXPECT_TRUE(d.is_roce);  // a truncated copy still carries the whole BTH
  EXPECT_EQ(d.dest_qp, 0x42u);
}

INSTANTIATE_TEST_SUITE_P(Types, MirrorErspan, ::testing::Values(2, 3));

// The arrival copy: ERSPAN III on the capture's arrivals session, an ingress copy stamped
// with the arrival time in 100 ns, cut to the headers; the analyzer takes it as the
// flow's arrival, not as a packet.
TEST(MirrorArrival, IsAnIngressErspanIiiCopyOnTheArrivalsSessionStampedWithTheArrival) {
  auto spec = [] {
    cap::roce_frame_spec r;
    r.ip.src = cap::ipv4_mapped(198, 18, 0, 3);
    r.ip.dst = cap::ipv4_mapped(198, 18, 0, 1);
    r.opcode = cap::wire::roce_opcode::rc_rdma_write_first;
    r.dest_qp = 0x203;
    static const std::array<std::uint8_t, 4096> payload{};
    r.payload = payload;
    return r;
  }();
  std::vector<std::uint8_t> f;
  cap::append_roce_frame(spec, f);
  frame_info info;
  parse_frame(f, info);
  EXPECT_EQ(info.bth_opcode, cap::wire::roce_opcode::rc_rdma_write_first);
  mirror_settings m;  // a plain egress session: the arrival copy is ERSPAN III anyway
  m.arrivals = true;
  const std::int64_t arrived = 1'795'000'000'123'456'700;
  std::vector<std::uint8_t> out(9216);
  const std::size_t n = build_arrival_copy(m, 3, 3, arrived, 11, f, out);
  ASSERT_EQ(n, 54 + arrival_copy_bytes);
  cap::dissected_frame d;
  cap::dissect(cap::link_type::ethernet, std::span<const std::uint8_t>(out.data(), n), d);
  EXPECT_EQ(d.erspan_type, 3);
  EXPECT_EQ(d.erspan_session, cap::arrivals_session);
  EXPECT_FALSE(d.erspan_egress);
  EXPECT_EQ(d.erspan_granularity, 1);
  EXPECT_EQ(d.erspan_timestamp, static_cast<std::uint32_t>(arrived / 100));
  EXPECT_TRUE(d.is_roce);
  EXPECT_EQ(d.dest_qp, 0x203u);
  cap::congestion_analyzer a;
  a.add(cap::packet_view{arrived + 2'000'000, 0, static_cast<std::uint32_t>(n), std::span<const std::uint8_t>(out.data(), n)});
  const auto seen = a.finish();
  ASSERT_EQ(seen.arrivals.size(), 1u);
  EXPECT_EQ(seen.arrivals[0].first_ns, arrived);
  EXPECT_TRUE(seen.flows.empty());
}

TEST(BeginsMessage, FirstAndOnlyRequestsButNotMiddlesLastsResponsesOrCnps) {
  namespace op = cap::wire::roce_opcode;
  for (const std::uint8_t o : {op::rc_send_first, op::rc_send_only, op::rc_send_only_with_immediate,
                               op::rc_rdma_write_first, op::rc_rdma_write_only, op::rc_rdma_write_only_with_immediate,
                               op::uc_send_only, op::uc_rdma_write_only, op::ud_send_only})
    EXPECT_TRUE(cap::wire::begins_message(o)) << int(o);
  for (const std::uint8_t o : {std::uint8_t{0x01}, std::uint8_t{0x02}, std::uint8_t{0x07}, std::uint8_t{0x08},
                               op::rc_rdma_read_response_first, op::rc_rdma_read_response_only, std::uint8_t{0x11},
                               op::cnp, std::uint8_t{0x1F}})
    EXPECT_FALSE(cap::wire::begins_message(o)) << int(o);
}

}  // namespace
}  // namespace rocelab::fabric::soft_switch
