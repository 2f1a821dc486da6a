// Per-flow transmit timelines: binning, reading them back as rates, and the virtual lab's
// attribution of a capture's data packets to messages (experiments/run/flow_timeline.hpp).
#include "rocelab/experiments/run/flow_timeline.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "rocelab/captures/frame_builder.hpp"

namespace rocelab::experiments {
namespace {

namespace op = captures::wire::roce_opcode;

flow_record flow(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, std::int64_t start_ns) {
  flow_record f;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.start_ns = start_ns;
  return f;
}

std::uint64_t last_value(const std::vector<counter_sample>& s, std::uint32_t flow) {
  std::uint64_t v = 0;
  for (const auto& c : s)
    if (c.port == flow) v = c.value;
  return v;
}

TEST(flow_timeline, bins_each_flows_bytes_cumulatively_from_the_bin_before_its_first) {
  const std::vector<flow_record> flows{flow(1, 0, 12288, 0), flow(2, 0, 8192, 0)};
  // Flow 0: 4 KiB in bin 0, none in bin 1, 8 KiB in bin 2. Flow 1: 8 KiB in bin 3.
  const std::vector<flow_packet> packets{{0, 100, 4096}, {0, 2'000'000, 4096}, {1, 3'500'000, 4096},
                                         {0, 2'999'999, 4096}, {1, 3'000'000, 4096}};
  const auto s = flow_timeline_samples(flows, packets, 1'000'000, 10);
  struct expected {
    std::uint32_t flow;
    std::int64_t t_ns;
    std::uint64_t value;
  };
  const std::vector<expected> want{{0, 0, 0},         {0, 1'000'000, 4096}, {0, 2'000'000, 4096},
                                   {0, 3'000'000, 12288}, {1, 3'000'000, 0}, {1, 4'000'000, 8192}};
  ASSERT_EQ(s.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(s[i].name, flow_tx_bytes_counter);
    EXPECT_EQ(s[i].port, want[i].flow) << i;
    EXPECT_EQ(s[i].device, 10 + flows[want[i].flow].src) << "the sender's device";
    EXPECT_EQ(s[i].t_ns, want[i].t_ns) << i;
    EXPECT_EQ(s[i].value, want[i].value) << i;
  }
}

TEST(flow_timeline, early_packets_count_in_the_first_bin_and_unknown_flows_and_bad_bins_give_nothing) {
  const std::vector<flow_record> flows{flow(1, 0, 4096, 0)};
  const std::vector<flow_packet> packets{{0, -500, 1000}, {0, 10, 1000}, {7, 10, 1000}};
  const auto s = flow_timeline_samples(flows, packets, 1'000, 0);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].value, 2000u);
  EXPECT_TRUE(flow_timeline_samples(flows, packets, 0, 0).empty());
}

TEST(flow_timeline, reads_back_as_rates_per_interval_and_per_repeat) {
  const std::vector<counter_sample> c{{3, 1, "flow_tx_bytes", 0, 0},
                                      {3, 1, "flow_tx_bytes", 1'000'000, 4000},
                                      {3, 1, "flow_tx_bytes", 2'000'000, 6000},
                                      {3, 1, "flow_tx_bytes", 2'000'000, 6000},  // the twin's last may repeat an instant
                                      {3, 1, "tx_bytes", 1'000'000, 99},
                                      {5, 0, "flow_tx_bytes", 500, 0},
                                      {5, 0, "flow_tx_bytes", 1'500, 125},
                                      // the next repeat: flow 1 again, from its start
                                      {4, 1, "flow_tx_bytes", 0, 0},
                                      {4, 1, "flow_tx_bytes", 1'000'000, 1000}};
  const auto t = flow_timelines_of(c);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].repeat, 0u);
  EXPECT_EQ(t[0].flow, 0u);
  EXPECT_EQ(t[0].device, 5u);
  ASSERT_EQ(t[0].points.size(), 1u);
  EXPECT_DOUBLE_EQ(t[0].points[0].rate_bps, 1e9);  // 125 bytes in 1 us
  EXPECT_EQ(t[1].flow, 1u);
  EXPECT_EQ(t[1].bytes, 6000u);
  ASSERT_EQ(t[1].points.size(), 2u);
  EXPECT_EQ(t[1].points[0].from_ns, 0);
  EXPECT_EQ(t[1].points[0].to_ns, 1'000'000);
  EXPECT_DOUBLE_EQ(t[1].points[0].rate_bps, 32e6);
  EXPECT_DOUBLE_EQ(t[1].points[1].rate_bps, 16e6);
  EXPECT_EQ(t[2].repeat, 1u);
  EXPECT_EQ(t[2].device, 4u);
  EXPECT_EQ(t[2].bytes, 1000u);
}

TEST(flow_timeline, json_round_trip_keeps_every_sample_and_refuses_other_shapes) {
  const std::vector<counter_sample> c{{3, 1, "flow_tx_bytes", 0, 0}, {3, 1, "flow_tx_bytes", 1'000'000, 4000},
                                      {2, 0, "tx_bytes", 5, 5}};
  auto back = parse_flow_timeline_json(flow_timeline_json(c));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->size(), 2u) << "only the timeline's samples";
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ((*back)[i].device, c[i].device);
    EXPECT_EQ((*back)[i].port, c[i].port);
    EXPECT_EQ((*back)[i].name, c[i].name);
    EXPECT_EQ((*back)[i].t_ns, c[i].t_ns);
    EXPECT_EQ((*back)[i].value, c[i].value);
  }
  for (const char* bad : {"{}", "[[1,2,3]]", "[[1,2,3,-4]]", "[[1,\"a\",3,4]]", "not json", "[[4294967296,0,0,0]]"})
    EXPECT_FALSE(parse_flow_timeline_json(bad).ok()) << bad;
}

// 1 Gb/s: a 1000-byte wire frame takes 8 us. Port 0 sent three frames the capture read at
// once (stamped 100 us): they are spread back to 84, 92, 100 us; its earlier frame,
// stamped well before, keeps its stamp; port 1 is on its own.
TEST(flow_timeline, a_burst_read_late_is_spread_back_at_the_ports_rate) {
  std::vector<flow_packet> p{{0, 10'000, 900, 0, 1000},  {0, 100'000, 900, 0, 1000}, {1, 100'000, 900, 1, 1000},
                             {0, 100'000, 900, 0, 1000}, {1, 100'000, 900, 0, 1000}};
  fit_to_port_rate(p, 1e9);
  const std::vector<std::int64_t> want{10'000, 84'000, 100'000, 92'000, 100'000};
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i].t_ns, want[i]) << i;
  std::vector<flow_packet> spaced{{0, 0, 1, 0, 1000}, {0, 8'000, 1, 0, 1000}, {0, 50'000, 1, 0, 1000}};
  fit_to_port_rate(spaced, 1e9);
  EXPECT_EQ(spaced[0].t_ns, 0) << "stamps a port could have kept stay";
  EXPECT_EQ(spaced[1].t_ns, 8'000);
  EXPECT_EQ(spaced[2].t_ns, 50'000);
  fit_to_port_rate(spaced, 0);
  EXPECT_EQ(spaced[2].t_ns, 50'000) << "no rate: nothing to fit";
}

// A classic pcap file (microsecond stamps) of Ethernet frames.
void write_pcap(const std::string& path, const std::vector<std::pair<std::int64_t, std::vector<std::uint8_t>>>& frames) {
  std::ofstream f(path, std::ios::binary);
  auto put32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
  auto put16 = [&](std::uint16_t v) { f.write(reinterpret_cast<const char*>(&v), 2); };
  put32(0xa1b2c3d4);
  put16(2);
  put16(4);
  put32(0);
  put32(0);
  put32(65535);
  put32(1);  // LINKTYPE_ETHERNET
  for (const auto& [t_ns, bytes] : frames) {
    put32(static_cast<std::uint32_t>(t_ns / 1'000'000'000));
    put32(static_cast<std::uint32_t>(t_ns % 1'000'000'000 / 1000));
    put32(static_cast<std::uint32_t>(bytes.size()));
    put32(static_cast<std::uint32_t>(bytes.size()));
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

std::vector<std::uint8_t> roce(std::uint8_t src_last, std::uint8_t dst_last, std::uint8_t opcode, std::uint32_t psn,
                               std::size_t payload) {
  static const std::vector<std::uint8_t> zeros(4096, 0);
  captures::roce_frame_spec s;
  s.ip.src = captures::ipv4_mapped(198, 18, 0, src_last);
  s.ip.dst = captures::ipv4_mapped(198, 18, 0, dst_last);
  s.opcode = opcode;
  s.psn = psn;
  s.dest_qp = 0x200 + src_last;
  s.payload = std::span<const std::uint8_t>(zeros.data(), payload);
  std::vector<std::uint8_t> out;
  EXPECT_GT(captures::append_roce_frame(s, out), 0u);
  return out;
}

// Host 1 (198.18.0.2) sends two messages to host 0 on one QP, the second posted behind
// the first, with PSNs wrapping; the capture holds their data packets (one resent), an
// ACK and a CNP the other way, and a packet from an address of no host.
TEST(flow_timeline, a_captures_data_packets_go_to_their_messages_by_psn) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("rocelab-flow-timeline-" + std::to_string(::getpid()) + ".pcap"))
          .string();
  const std::int64_t t0 = 1'700'000'000'000'000'000;
  const std::uint32_t p0 = 0xfffffe;
  write_pcap(path, {{t0 + 1'000, roce(2, 1, op::rc_rdma_write_first, p0, 4096)},
                    {t0 + 2'000, roce(2, 1, op::rc_rdma_write_last, p0 + 1, 1000)},
                    {t0 + 2'500, roce(1, 2, op::rc_acknowledge, 0, 0)},
                    {t0 + 2'600, roce(1, 2, op::cnp, 0, 16)},
                    {t0 + 3'000, roce(2, 1, op::rc_rdma_write_only, (p0 + 2) & 0xffffff, 2000)},
                    {t0 + 4'000, roce(2, 1, op::rc_rdma_write_last, p0 + 1, 1000)},  // resent: the first message's
                    {t0 + 5'000, roce(9, 1, op::rc_rdma_write_only, 7, 500)}});
  const std::vector<flow_record> flows{flow(1, 0, 2000, 500), flow(1, 0, 5096, 0), flow(2, 0, 100, 0)};
  const std::vector<std::string> ipv4{"198.18.0.1", "198.18.0.2", "198.18.0.3"};
  auto packets = capture_flow_packets(path, flows, ipv4, t0);
  std::remove(path.c_str());
  ASSERT_TRUE(packets.ok()) << packets.error().message();
  struct expected {
    std::uint32_t flow;
    std::int64_t t_ns;
    std::uint64_t bytes;
  };
  const std::vector<expected> want{{1, 1'000, 4096}, {1, 2'000, 1000}, {0, 3'000, 2000}, {1, 4'000, 1000}};
  ASSERT_EQ(packets->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*packets)[i].port, 0u) << "to host 0";
    EXPECT_GT((*packets)[i].wire_bytes, want[i].bytes + 24 + 40) << "headers, FCS, preamble and gap on top";
    EXPECT_EQ((*packets)[i].flow, want[i].flow) << i << ": flow 1 started first, so it is the QP's first message";
    EXPECT_EQ((*packets)[i].t_ns, want[i].t_ns) << i;
    EXPECT_EQ((*packets)[i].payload_bytes, want[i].bytes) << i;
  }
  const auto s = flow_timeline_samples(flows, *packets, 1'000'000, 0);
  EXPECT_EQ(last_value(s, 1), 5096u + 1000u) << "the resent packet is on the wire again";
  EXPECT_EQ(last_value(s, 0), 2000u);
  EXPECT_FALSE(capture_flow_packets(path, flows, ipv4, t0).ok()) << "a missing file is an error";
  EXPECT_FALSE(capture_flow_packets(path, flows, {"not an address"}, t0).ok());
}

}  // namespace
}  // namespace rocelab::experiments
