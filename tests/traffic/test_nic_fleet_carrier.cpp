// nic_fleet over a carrier of its own (nic_links.hpp): the orchestration a run through
// agents depends on, pinned without a lab. The carrier here plays the NICs' protocol
// (nic_process.hpp): ready, a "sent" for each post the sender acknowledges and a "recv"
// at the receiver, counters on stop; one host can be lost, as a killed agent is.
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <set>

#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/incast.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

using json = nlohmann::json;

class played_nics final : public nic_links {
 public:
  struct shared {
    std::vector<std::string> config_lines;  // what each host got first
    std::vector<std::string> commands;      // "host: line" in order
    std::uint32_t lose_on_first_post = UINT32_MAX;
    std::uint32_t armed_posts = 0;
    bool lose_before_ready = false;
    bool stopped = false;
    // Plays hardware NICs (the verbs job): per-flow retransmits and CNPs null, and the
    // port's tx_cnps in the final counters only when `port_cnps`.
    bool hardware = false;
    bool port_cnps = false;
    // A soft NIC's first data packet leaves after its release: host h's at release + h
    // times this ("first_tx_ns"; a hardware NIC's job does not report it).
    std::int64_t first_tx_step_ns = 0;
    // This host's "sent" lines carry a ref that is no number (a NIC speaking another schema).
    std::uint32_t garbled_host = UINT32_MAX;
  };
  played_nics(std::size_t hosts, std::shared_ptr<shared> s) : lost_(hosts), s_(std::move(s)) {
    for (std::uint32_t h = 0; h < hosts; ++h) {
      if (s_->lose_before_ready && h == s_->lose_on_first_post) {
        lost_[h] = "agent h" + std::to_string(h) + " lost: connection closed";
        continue;
      }
      events_.emplace_back(h, json{{"ev", "ready"}, {"t_ns", fabric::soft_switch::monotonic_ns()}}.dump());
    }
  }

  bool send(std::uint32_t host, const std::string& line) override {
    if (!lost_.at(host).empty()) return false;
    s_->commands.push_back(std::to_string(host) + ": " + line);
    const json c = json::parse(line);
    if (c["op"] == "post") {
      if (host == s_->lose_on_first_post) {
        lost_[host] = "agent h" + std::to_string(host) + " lost: connection closed";
        return true;  // the line went out; the NIC died with it
      }
      const auto dst = c["qpn"].get<std::uint32_t>() - 0x100;
      // A NIC holds an armed post until its instant (nic_process.hpp): it starts then.
      const std::int64_t now = std::max(fabric::soft_switch::monotonic_ns(), c.value("at_ns", std::int64_t{0}));
      if (c.contains("at_ns")) ++s_->armed_posts;
      events_.emplace_back(dst, json{{"ev", "recv"}, {"qpn", receive_qpn(host)}, {"peer", host}, {"msn", 1},
                                     {"bytes", c["bytes"]}, {"ce", 2}, {"end_ns", now + 900}}
                                    .dump());
      json sent{{"ev", "sent"}, {"ref", c["ref"]}, {"qpn", c["qpn"]}, {"peer", dst},
                {"bytes", c["bytes"]}, {"start_ns", now}, {"end_ns", now + 1000},
                {"retransmits", s_->hardware ? json(nullptr) : json(0)},
                {"cnps", s_->hardware ? json(nullptr) : json(1)}};
      if (!s_->hardware) sent["first_tx_ns"] = now + s_->first_tx_step_ns * host;
      if (host == s_->garbled_host) sent["ref"] = "first";
      events_.emplace_back(host, sent.dump());
    }
    return true;
  }
  void receive(int, const nic_line_fn& on_line) override {
    auto batch = std::move(events_);
    events_.clear();
    for (const auto& [h, line] : batch) on_line(h, line);
  }
  [[nodiscard]] std::string lost(std::uint32_t host) const override { return lost_.at(host); }
  void stop(const nic_line_fn& on_line) override {
    if (s_->stopped) return;
    s_->stopped = true;
    for (std::uint32_t h = 0; h < lost_.size(); ++h)
      if (lost_[h].empty() && on_line)
        on_line(h, (s_->hardware && !s_->port_cnps ? json{{"ev", "counters"}} : json{{"ev", "counters"}, {"tx_cnps", 5}})
                       .dump());
  }

 private:
  std::vector<std::string> lost_;
  std::deque<std::pair<std::uint32_t, std::string>> events_;
  std::shared_ptr<shared> s_;
};

std::vector<fleet_host> four_hosts() {
  std::vector<fleet_host> out;
  for (std::uint8_t i = 0; i < 4; ++i) {
    fleet_host h;
    h.name = "h" + std::to_string(i);
    h.netns = "unused";
    h.address.mac = {0x02, 0x52, 0x4c, 0, 0, i};
    h.address.ip = {198, 18, 0, i};
    out.push_back(h);
  }
  return out;
}

struct fleet_run {
  std::shared_ptr<played_nics::shared> nics = std::make_shared<played_nics::shared>();
  fleet_options options() {
    fleet_options o;
    o.nic.line_rate_bps = 1'000'000'000;
    o.links = [s = nics](const std::vector<fleet_host>& hosts, const std::vector<nic_process_config>& configs)
        -> result<std::unique_ptr<nic_links>> {
      for (const auto& c : configs) s->config_lines.push_back(to_json(c).dump());
      return std::unique_ptr<nic_links>(std::make_unique<played_nics>(hosts.size(), s));
    };
    return o;
  }
};

std::unique_ptr<fabric::twin::workload> incast_three_to_one(std::uint32_t rounds) {
  incast_config cfg;
  cfg.receiver = 0;
  cfg.senders = {1, 2, 3};
  cfg.flow_bytes = 64 * 1024;
  cfg.rounds = rounds;
  auto w = make_incast(cfg, 4, 1);
  EXPECT_TRUE(w.ok()) << w.error().message();
  return std::move(*w);
}

TEST(NicFleetCarrier, EveryHostGetsItsConfigAndAllFlowsCompleteWithTheirCountersAndMarks) {
  fleet_run f;
  auto fleet = nic_fleet::start(four_hosts(), f.options());
  ASSERT_TRUE(fleet.ok()) << fleet.error().message();
  ASSERT_EQ(f.nics->config_lines.size(), 4u);
  // Host 1's config: its own address and one QP per peer in each direction.
  const json c1 = json::parse(f.nics->config_lines[1]);
  EXPECT_EQ(c1["qps"].size(), 6u);
  auto load = incast_three_to_one(2);
  auto ran = (*fleet)->run(*load, std::chrono::seconds(60));
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_TRUE(ran->completed);
  EXPECT_TRUE(ran->lost_hosts.empty());
  ASSERT_EQ(ran->records.flows.size(), 6u);
  for (const auto& r : ran->records.flows) {
    EXPECT_TRUE(r.completed());
    EXPECT_EQ(r.fct_ns, 1000);
    EXPECT_EQ(r.ce_marked, 2u) << "the receiver's CE count lands on the sender's flow";
  }
  // Both rounds go out armed: the first with the opening schedule, the second as the
  // burst the first round's last completion posts; each sender starts on the instant.
  EXPECT_EQ(f.nics->armed_posts, 6u);
  EXPECT_EQ(ran->records.start_offsets_ns.size(), 3u);
  for (const auto& [host, ns] : ran->records.start_offsets_ns) EXPECT_EQ(ns, 0) << host;
  EXPECT_EQ(ran->records.start_source, "nic");
  EXPECT_TRUE(f.nics->stopped);
  EXPECT_EQ(ran->records.totals.cnps, 20u) << "tx_cnps of the four NICs' final counters";
}

// The start offsets are the NICs' first transmissions, not the instants the NICs released
// the posts; each sender's scheduled first start comes back for other witnesses (the
// capture) to be set against. A NIC that does not report first_tx_ns: its release stands.
TEST(NicFleetCarrier, StartOffsetsAreEachSendersFirstTransmitAgainstItsSchedule) {
  for (const bool hardware : {false, true}) {
    SCOPED_TRACE(hardware ? "hardware NICs" : "soft NICs");
    fleet_run f;
    f.nics->first_tx_step_ns = 7'000;
    f.nics->hardware = hardware;
    f.nics->port_cnps = true;
    auto fleet = nic_fleet::start(four_hosts(), f.options());
    ASSERT_TRUE(fleet.ok()) << fleet.error().message();
    EXPECT_EQ(json::parse(f.nics->config_lines[1])["start_rt_priority"], 60)
        << "every NIC takes a priority above the soft switch's (50) around its armed instant";
    auto load = incast_three_to_one(1);
    auto ran = (*fleet)->run(*load, std::chrono::seconds(60));
    ASSERT_TRUE(ran.ok()) << ran.error().message();
    ASSERT_EQ(ran->records.start_offsets_ns.size(), 3u);
    for (std::uint32_t h = 1; h <= 3; ++h) {
      const std::string name = "h" + std::to_string(h);
      EXPECT_EQ(ran->records.start_offsets_ns.at(name), hardware ? 0 : 7'000 * h) << name;
      EXPECT_EQ(ran->first_scheduled_ns.at(name), 0) << name;
    }
    EXPECT_EQ(ran->first_scheduled_ns.count("h0"), 0u) << "the receiver sends nothing";
  }
}

TEST(NicFleetCarrier, AHostLostMidRunLeavesItsFlowsUnfinishedAndTheOthersComplete) {
  fleet_run f;
  f.nics->lose_on_first_post = 2;
  auto fleet = nic_fleet::start(four_hosts(), f.options());
  ASSERT_TRUE(fleet.ok()) << fleet.error().message();
  auto load = incast_three_to_one(2);
  // The run ends once every message between live hosts is acknowledged; it does not wait
  // out its limit for the lost host's (the cancel hook counts the loop's turns).
  int turns = 0;
  auto ran = (*fleet)->run(*load, std::chrono::seconds(60), [&] { return ++turns > 1000; });
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_FALSE(ran->cancelled) << "ran " << turns << " turns: it waited for the lost host";
  EXPECT_FALSE(ran->completed);
  ASSERT_EQ(ran->lost_hosts.size(), 1u);
  EXPECT_EQ(ran->lost_hosts[0], "h2: agent h2 lost: connection closed");
  std::size_t done = 0;
  for (const auto& r : ran->records.flows) {
    if (r.src == 2) {
      EXPECT_FALSE(r.completed());
    } else {
      EXPECT_TRUE(r.completed()) << "flow from h" << r.src;
      ++done;
    }
  }
  // Round 2 waits for every flow of round 1, so only round 1's two other flows complete.
  EXPECT_EQ(done, 2u);
  ASSERT_EQ(ran->nic_counters.size(), 4u);
  EXPECT_TRUE(ran->nic_counters[2].is_null()) << "no final counters from a lost NIC";
  EXPECT_EQ(ran->records.totals.cnps, 15u);
  EXPECT_FALSE(ran->records.totals.cnps_measured) << "the lost NIC's CNPs are unknown, so is the total";
}

// A line the channel cannot read (nic_channel.hpp) ends the run with an error naming the
// NIC and the line, instead of a flow completed from made-up fields.
TEST(NicFleetCarrier, AnEventLineTheChannelCannotReadFailsTheRunNamingTheNicAndTheLine) {
  fleet_run f;
  f.nics->garbled_host = 2;
  auto fleet = nic_fleet::start(four_hosts(), f.options());
  ASSERT_TRUE(fleet.ok()) << fleet.error().message();
  auto load = incast_three_to_one(1);
  auto ran = (*fleet)->run(*load, std::chrono::seconds(60));
  ASSERT_FALSE(ran.ok());
  const std::string msg = ran.error().message();
  EXPECT_NE(msg.find("NIC of h2"), std::string::npos) << msg;
  EXPECT_NE(msg.find(R"(NIC event line {"bytes":65536)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("field ref: expected an integer"), std::string::npos) << msg;
}

// A hardware NIC counts retransmits and CNPs per port, not per QP: its flows say "not
// measured" instead of 0, and so do the totals unless the port's counters give them.
TEST(NicFleetCarrier, AHardwareNicsPerFlowCountsAreNotMeasuredRatherThanZero) {
  for (const bool port_cnps : {false, true}) {
    SCOPED_TRACE(port_cnps ? "with the port's np_cnp_sent" : "without port counters");
    fleet_run f;
    f.nics->hardware = true;
    f.nics->port_cnps = port_cnps;
    auto fleet = nic_fleet::start(four_hosts(), f.options());
    ASSERT_TRUE(fleet.ok()) << fleet.error().message();
    auto load = incast_three_to_one(1);
    auto ran = (*fleet)->run(*load, std::chrono::seconds(60));
    ASSERT_TRUE(ran.ok()) << ran.error().message();
    ASSERT_EQ(ran->records.flows.size(), 3u);
    for (const auto& r : ran->records.flows) {
      EXPECT_TRUE(r.completed());
      EXPECT_FALSE(r.retransmits_measured);
      EXPECT_FALSE(r.cnps_measured);
      EXPECT_EQ(r.ce_marked, 2u) << "the receiver's CE count is still per flow";
    }
    EXPECT_FALSE(ran->records.totals.retransmits_measured);
    EXPECT_EQ(ran->records.totals.cnps_measured, port_cnps);
    EXPECT_EQ(ran->records.totals.cnps, port_cnps ? 20u : 0u);
  }
}

TEST(NicFleetCarrier, SoftNicsCountEverythingPerFlow) {
  fleet_run f;
  auto fleet = nic_fleet::start(four_hosts(), f.options());
  ASSERT_TRUE(fleet.ok()) << fleet.error().message();
  auto load = incast_three_to_one(1);
  auto ran = (*fleet)->run(*load, std::chrono::seconds(60));
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  for (const auto& r : ran->records.flows) {
    EXPECT_TRUE(r.retransmits_measured);
    EXPECT_TRUE(r.cnps_measured);
    EXPECT_EQ(r.cnps, 1u);
  }
  EXPECT_TRUE(ran->records.totals.retransmits_measured);
  EXPECT_TRUE(ran->records.totals.cnps_measured);
}

TEST(NicFleetCarrier, ANicLostBeforeItIsReadyFailsTheStartNamingIt) {
  fleet_run f;
  f.nics->lose_on_first_post = 3;
  f.nics->lose_before_ready = true;
  auto fleet = nic_fleet::start(four_hosts(), f.options());
  ASSERT_FALSE(fleet.ok());
  EXPECT_NE(fleet.error().message().find("the NIC of h3 ended before it was ready: agent h3 lost"), std::string::npos)
      << fleet.error().message();
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic
