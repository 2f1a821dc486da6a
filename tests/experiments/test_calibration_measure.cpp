// The calibration's plan and arithmetic (experiments/calibration/calibration_measure.hpp):
// what is sent and in which order (the plan carried out on the twin), and the numbers a
// calibration takes from recorded stamps, computed by hand here.
#include "rocelab/experiments/calibration/calibration_measure.hpp"

#include <gtest/gtest.h>

#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

TEST(CalibrationPlan, ALineRateFlowIsAtLeastTwoMebibytesAndAtLeastThirtyMillisecondsOnTheLink) {
  EXPECT_EQ(line_rate_flow_bytes(0.5), 2u << 20);                    // 1.875 MB in 30 ms
  EXPECT_EQ(line_rate_flow_bytes(1.0), 3'750'000u);                  // 30 ms at 1 Gb/s
  EXPECT_EQ(line_rate_flow_bytes(100.0), 375'000'000u);
}

TEST(CalibrationPlan, PingsEachHostToTheReceiverAndBackThenOneLineRateFlowPerHost) {
  const calibration_plan p = make_calibration_plan(3, 4, 0.5);
  ASSERT_EQ(p.messages.size(), 2u * 2 * 4 + 3);
  ASSERT_EQ(p.purposes.size(), p.messages.size());
  const std::pair<std::uint32_t, std::uint32_t> pings[] = {{1, 0}, {0, 1}, {2, 0}, {0, 2}};
  for (std::size_t k = 0; k < 16; ++k) {
    EXPECT_EQ(p.purposes[k], calibration_purpose::ping);
    EXPECT_EQ(p.messages[k].bytes, calibration_ping_bytes);
    EXPECT_EQ(std::make_pair(p.messages[k].src, p.messages[k].dst), pings[k / 4]) << k;
  }
  const std::pair<std::uint32_t, std::uint32_t> flows[] = {{0, 1}, {1, 0}, {2, 0}};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(p.purposes[16 + k], calibration_purpose::line_rate);
    EXPECT_EQ(p.messages[16 + k].bytes, line_rate_flow_bytes(0.5));
    EXPECT_EQ(std::make_pair(p.messages[16 + k].src, p.messages[16 + k].dst), flows[k]);
  }
  for (std::size_t k = 0; k < p.messages.size(); ++k) EXPECT_EQ(p.messages[k].tag, k);
}

TEST(CalibrationPlan, TheIncastNeedsThreeHosts) {
  EXPECT_TRUE(make_incast_plan(2, 1 << 20).messages.empty());
  const calibration_plan p = make_incast_plan(4, 1 << 20);
  ASSERT_EQ(p.messages.size(), 2u);
  EXPECT_EQ(p.messages[0].src, 1u);
  EXPECT_EQ(p.messages[1].src, 2u);
  EXPECT_EQ(p.messages[0].dst, 0u);
  EXPECT_EQ(p.messages[1].dst, 0u);
}

// The plan carried out on the twin: a virtual-lab-sized fabric of 3 hosts.
result<run_records> on_the_twin(const calibration_plan& plan) {
  experiment_spec spec;
  spec.topology.hosts = 3;
  spec.topology.link_gbps = 0.5;
  auto cfg = to_twin_config(spec, 1);
  if (!cfg) return cfg.error();
  calibration_workload load(plan);
  return fabric::twin::run_twin(*cfg, load);
}

TEST(CalibrationWorkload, SendsThePlanOneMessageAtATimeEachAfterThePreviousCompleted) {
  const calibration_plan plan = make_calibration_plan(3, 3, 0.5);
  auto r = on_the_twin(plan);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->flows.size(), plan.messages.size());
  for (std::size_t i = 0; i < r->flows.size(); ++i) {
    const flow_record& f = r->flows[i];
    EXPECT_EQ(f.tag, i);
    EXPECT_EQ(f.src, plan.messages[i].src);
    EXPECT_EQ(f.dst, plan.messages[i].dst);
    ASSERT_TRUE(f.completed()) << i;
    if (i > 0) {
      EXPECT_GE(f.start_ns, r->flows[i - 1].end_ns) << "message " << i << " overlapped the one before";
    }
  }
}

TEST(CalibrationWorkload, StartsTheIncastsSendersTogether) {
  auto r = on_the_twin(make_incast_plan(3, 256 << 10));
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->flows.size(), 2u);
  EXPECT_EQ(r->flows[0].start_ns, r->flows[1].start_ns);
}

TEST(AchievedRate, IsTheBytesBeforeTheLastPacketOverFirstToLastPacket) {
  // 10 packets of 1000 wire bytes paced at 1 Gb/s: the last starts 9 x 8 us after the first.
  EXPECT_DOUBLE_EQ(achieved_gbps({1'000, 1'000 + 72'000, 10'000, 1'000}), 1.0);
  EXPECT_DOUBLE_EQ(achieved_gbps({0, 144'000, 10'000, 1'000}), 0.5);
}

TEST(AchievedRate, IsNotMeasuredForOnePacketOrStampsOutOfOrder) {
  EXPECT_EQ(achieved_gbps({500, 500, 1'000, 1'000}), 0.0);
  EXPECT_EQ(achieved_gbps({900, 500, 10'000, 1'000}), 0.0);
}

loop_frame frame(std::int64_t t_ns, bool cnp, std::uint8_t src, std::uint8_t dst, std::uint32_t wire_bytes) {
  loop_frame f;
  f.t_ns = t_ns;
  f.cnp = cnp;
  f.ip_src[15] = src;
  f.ip_dst[15] = dst;
  f.wire_bytes = wire_bytes;
  return f;
}

// 0.5 Gb/s: a 4120-byte wire frame is 65.92 us, a 84-byte CNP 1.344 us.
constexpr std::int64_t link_bps = 500'000'000;

struct loop_case {
  const char* name;
  std::vector<loop_frame> frames;
  std::vector<std::int64_t> loops_ns;
};

TEST(CnpLoop, PairsEachCnpWithTheMarkedPacketThatSetItOff) {
  const loop_case cases[] = {
      {"one mark, one CNP", {frame(0, false, 2, 1, 4120), frame(120'000, true, 1, 2, 84)}, {120'000}},
      {"the next packet's copy precedes the CNP: the CNP cannot be its",
       {frame(0, false, 2, 1, 4120), frame(66'000, false, 2, 1, 4120), frame(100'000, true, 1, 2, 84)},
       {100'000}},
      {"marks the notification point did not answer are passed over",
       {frame(0, false, 2, 1, 4120), frame(66'000, false, 2, 1, 4120), frame(132'000, false, 2, 1, 4120),
        frame(250'000, true, 1, 2, 84)},
       {118'000}},
      {"each flow pairs with its own CNPs",
       {frame(0, false, 2, 1, 4120), frame(10'000, false, 3, 1, 4120), frame(100'000, true, 1, 3, 84),
        frame(130'000, true, 1, 2, 84)},
       {90'000, 130'000}},
      {"a CNP without a mark before it, or after its mark was paired, pairs with nothing",
       {frame(0, true, 1, 2, 84), frame(10'000, false, 2, 1, 4120), frame(110'000, true, 1, 2, 84),
        frame(120'000, true, 1, 2, 84)},
       {100'000}},
  };
  for (const auto& c : cases) EXPECT_EQ(cnp_loop_samples(c.frames, link_bps), c.loops_ns) << c.name;
}

TEST(MeasureCalibration, TakesEachNumberFromTheStampsOfItsOwnMessages) {
  // 2 hosts, 2 pings a direction: messages 0-1 h2->h1, 2-3 h1->h2, 4 and 5 the line-rate flows.
  const calibration_plan plan = make_calibration_plan(2, 2, 0.5);
  ASSERT_EQ(plan.messages.size(), 6u);
  calibration_stamps s;
  s.hosts = {"h1", "h2"};
  auto msg = [](std::int64_t start, std::int64_t first_tx, std::int64_t end, std::int64_t last_tx = 0,
                std::int64_t wire_bytes = 0, std::int64_t last_wire_bytes = 0) {
    measured_message m;
    m.start_ns = start;
    m.end_ns = end;
    m.wire_reported = true;
    m.wire = {first_tx, last_tx == 0 ? first_tx : last_tx, wire_bytes, last_wire_bytes};
    return m;
  };
  s.messages = {msg(0, 500, 90'000),          msg(100'000, 100'700, 180'000),
                msg(200'000, 200'400, 300'000), msg(400'000, 400'600, 480'000),
                msg(500'000, 501'000, 40'000'000, 33'501'000, 2'062'500 + 4'120, 4'120),
                msg(50'000'000, 50'002'000, 90'000'000, 83'002'000, 2'000'000 + 4'120, 4'120)};
  s.messages[3].wire_reported = false;  // a NIC that did not say: no send processing sample
  s.rx_processing.resize(2);
  for (std::int64_t v : {30'000, 31'000, 90'000}) s.rx_processing[0].record(v);
  s.forwarding.resize(2);
  s.forwarding[1].record(20'000);
  s.cnp_loop_ns = {110'000, 120'000};

  const calibration c = measure_calibration(plan, s);
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.hosts[0].name, "h1");
  // h1 sent messages 2, 3 (not reported) and 4: 400, 1000 ns.
  EXPECT_EQ(c.hosts[0].send_processing.samples, 2u);
  EXPECT_EQ(c.hosts[0].send_processing.ns.front(), 400);
  EXPECT_EQ(c.hosts[0].send_processing.ns.back(), 1'000);
  // h2 sent 0, 1 and 5: 500, 700, 2000.
  EXPECT_EQ(c.hosts[1].send_processing.samples, 3u);
  EXPECT_EQ(c.hosts[1].send_processing.median(), 700);
  EXPECT_DOUBLE_EQ(c.hosts[0].achieved_gbps, 2'062'500.0 * 8 / 33'000'000);
  EXPECT_DOUBLE_EQ(c.hosts[1].achieved_gbps, 2'000'000.0 * 8 / 33'000'000);
  EXPECT_EQ(c.hosts[0].receive_processing, s.rx_processing[0].quantiles());
  EXPECT_TRUE(c.hosts[1].receive_processing.empty()) << "nothing recorded: not measured";
  ASSERT_EQ(c.pairs.size(), 2u);
  EXPECT_EQ(c.pairs[0].src, "h2");
  EXPECT_EQ(c.pairs[0].dst, "h1");
  EXPECT_EQ(c.pairs[0].base_rtt.samples, 2u);
  EXPECT_EQ(c.pairs[0].base_rtt.ns.front(), 80'000);
  EXPECT_EQ(c.pairs[0].base_rtt.ns.back(), 90'000);
  EXPECT_EQ(c.pairs[1].base_rtt.ns.front(), 80'000);
  EXPECT_EQ(c.pairs[1].base_rtt.ns.back(), 100'000);
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_TRUE(c.ports[0].forwarding.empty());
  EXPECT_EQ(c.ports[1].port, 1u);
  EXPECT_EQ(c.ports[1].forwarding.median(), 20'000);
  EXPECT_EQ(c.cnp_loop.samples, 2u);
}

TEST(MeasureCalibration, APingThatNeverCompletedIsNoRttSample) {
  const calibration_plan plan = make_calibration_plan(2, 2, 0.5);
  calibration_stamps s;
  s.messages.resize(plan.messages.size());
  s.messages[0] = {0, 50'000, false, {}};
  s.messages[1] = {60'000, -1, false, {}};
  const calibration c = measure_calibration(plan, s);
  EXPECT_EQ(c.pairs.at(0).base_rtt.samples, 1u);
  EXPECT_EQ(c.pairs.at(0).base_rtt.median(), 50'000);
}

TEST(CalibrationRefusal, RunsOnTheVirtualLabAndSaysWhyNotElsewhere) {
  experiment_spec spec;
  spec.backend = "virtual";
  EXPECT_TRUE(calibration_refusal(spec).ok());
  spec.backend = "twin";
  EXPECT_NE(calibration_refusal(spec).message().find("a twin is what a calibration is for"), std::string::npos);
  spec.backend = "lab";
  const status lab = calibration_refusal(spec);
  EXPECT_EQ(lab.code(), error_code::unsupported);
  EXPECT_NE(lab.message().find("agents"), std::string::npos);
  EXPECT_NE(lab.message().find("forwarding latency"), std::string::npos);
}


// Under load: the send processing of messages posted onto an idle QP only (the second on
// a busy QP waited for the first, which is no processing) and the run's receive
// processing, each from at least min_samples_under_load samples; what the loaded run did
// not sample enough keeps the idle value, and forwarding stays idle.
TEST(MeasureCalibration, UnderLoadTakesSendProcessingOnlyFromMessagesPostedOntoAnIdleQp) {
  calibration c;
  c.hosts = {{"h1", fabric::delay_quantiles::of(std::vector<std::int64_t>{1'000}),
              fabric::delay_quantiles::of(std::vector<std::int64_t>{20'000}), 0.5},
             {"h2", fabric::delay_quantiles::of(std::vector<std::int64_t>{2'000}),
              fabric::delay_quantiles::of(std::vector<std::int64_t>{30'000}), 0.49}};
  c.ports = {{0, fabric::delay_quantiles::of(std::vector<std::int64_t>{25'000})}};
  c.cnp_loop = fabric::delay_quantiles::of(std::vector<std::int64_t>{300'000});
  const calibration idle = c;

  auto msg = [](std::uint32_t src, std::uint32_t dst, std::uint32_t qp, std::int64_t start, std::int64_t first_tx,
                std::int64_t end) {
    measured_message m;
    m.src = src;
    m.dst = dst;
    m.qp = qp;
    m.start_ns = start;
    m.end_ns = end;
    m.wire_reported = true;
    m.wire = {first_tx, first_tx, 4'000, 4'000};
    return m;
  };
  calibration_stamps loaded;
  // h1 on QP 7 to h2: 20 messages each posted when the one before had ended, 300 us each,
  // and between them 20 posted behind a busy QP, 5 ms each: not samples.
  for (std::int64_t i = 0; i < 20; ++i) {
    const std::int64_t t = i * 100'000'000;
    loaded.messages.push_back(msg(0, 1, 7, t, t + 300'000, t + 40'000'000));
    loaded.messages.push_back(msg(0, 1, 7, t + 1'000'000, t + 6'000'000, t + 50'000'000));
  }
  // h1 to another host on QP 8: one that never ends, then 30 behind it: not samples.
  loaded.messages.push_back(msg(0, 2, 8, 0, 100'000, -1));
  for (std::int64_t i = 1; i <= 30; ++i) loaded.messages.push_back(msg(0, 2, 8, i * 1'000'000, i * 1'000'000 + 9'000'000, -1));
  // h2: 19 messages on an idle QP, one short of enough.
  for (std::int64_t i = 0; i < 19; ++i) loaded.messages.push_back(msg(1, 0, 3, i * 10'000'000, i * 10'000'000 + 800'000, i * 10'000'000 + 1'000'000));
  loaded.rx_processing.resize(2);
  for (int i = 0; i < 20; ++i) loaded.rx_processing[0].record(900'000 + i * 10'000);
  for (int i = 0; i < 19; ++i) loaded.rx_processing[1].record(700'000);
  loaded.forwarding.resize(1);
  for (int i = 0; i < 50; ++i) loaded.forwarding[0].record(3'000'000);

  take_delays_under_load(c, loaded);
  EXPECT_EQ(c.load, calibration_load_workload);
  EXPECT_EQ(c.hosts[0].send_processing.samples, 21u) << "20 on QP 7 and the first on QP 8";
  EXPECT_EQ(c.hosts[0].send_processing.ns.front(), 100'000);
  EXPECT_EQ(c.hosts[0].send_processing.median(), 300'000);
  EXPECT_EQ(c.hosts[0].send_processing.ns.back(), 300'000);
  EXPECT_EQ(c.hosts[0].receive_processing, loaded.rx_processing[0].quantiles());
  EXPECT_EQ(c.hosts[1].send_processing, idle.hosts[1].send_processing) << "19 samples: not enough, idle stays";
  EXPECT_EQ(c.hosts[1].receive_processing, idle.hosts[1].receive_processing);
  EXPECT_EQ(c.ports[0].forwarding, idle.ports[0].forwarding) << "the switch's forwarding stays idle";
  EXPECT_DOUBLE_EQ(c.hosts[1].achieved_gbps, 0.49) << "no message long enough: the idle rate stays";
  EXPECT_EQ(c.cnp_loop, idle.cnp_loop) << "the CNP loop stays the idle plan's";
}

}  // namespace
// Under load the pacing lateness is the loaded run's, from 20 packets at least; the
// achieved rate stays the idle one (the lateness is what costs the loaded NIC its rate).
TEST(MeasureCalibration, UnderLoadTakesThePacingLatenessAndKeepsTheIdleRate) {
  calibration c;
  c.hosts = {{"h1", {}, {}, 0.5}, {"h2", {}, {}, 0.49}};
  c.hosts[1].pacing_lateness = fabric::delay_quantiles::of(std::vector<std::int64_t>{5'000});
  calibration_stamps loaded;
  loaded.tx_lateness.resize(2);
  for (int i = 0; i < 20; ++i) loaded.tx_lateness[0].record(100'000 + i * 20'000);
  for (int i = 0; i < 19; ++i) loaded.tx_lateness[1].record(400'000);
  take_delays_under_load(c, loaded);
  EXPECT_EQ(c.hosts[0].pacing_lateness, loaded.tx_lateness[0].quantiles());
  EXPECT_EQ(c.hosts[0].pacing_lateness.samples, 20u);
  EXPECT_EQ(c.hosts[1].pacing_lateness.median(), 5'000) << "19 samples: not enough, idle stays";
  EXPECT_DOUBLE_EQ(c.hosts[0].achieved_gbps, 0.5);
  EXPECT_DOUBLE_EQ(c.hosts[1].achieved_gbps, 0.49);
}

}  // namespace rocelab::experiments
