// The analyzer's fast path against its general one: dissect_common() against dissect()
// on every cut and many corruptions of every frame kind, the analyzer fed through
// dissect_common() against the analyzer fed dissect()'s frames, and the pause summary kept
// as intervals close against the one computed from the full interval list of a storm.
#include "rocelab/captures/dissect.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/captures/capture_analysis_json.hpp"
#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/capture_summary.hpp"
#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/captures/frame_builder.hpp"

namespace rocelab::captures {
namespace {

namespace op = wire::roce_opcode;

std::array<std::uint8_t, 6> mac(std::uint8_t last) { return {0x02, 0, 0, 0, 0x10, last}; }

roce_frame_spec roce_spec(std::uint8_t opcode, std::uint32_t psn, std::uint8_t sender) {
  roce_frame_spec s;
  s.eth.src_mac = mac(sender);
  s.eth.dst_mac = mac(0xfe);
  s.ip.src = ipv4_mapped(198, 18, 0, sender);
  s.ip.dst = ipv4_mapped(198, 18, 1, 1);
  s.ip.ecn = wire::ecn_codepoint::ect0;
  s.opcode = opcode;
  s.dest_qp = 0x100 + sender;
  s.psn = psn;
  return s;
}

// One frame of every kind the analyzer meets, common and not.
std::vector<std::vector<std::uint8_t>> sample_frames() {
  std::vector<std::vector<std::uint8_t>> frames;
  const std::vector<std::uint8_t> payload(256, 0x5a);
  const auto add_roce = [&](roce_frame_spec s, std::size_t payload_bytes) {
    s.payload = std::span(payload).first(payload_bytes);
    append_roce_frame(s, frames.emplace_back());
  };
  for (std::uint8_t opcode : {op::rc_rdma_write_first, op::rc_rdma_write_middle, op::rc_rdma_write_only,
                              op::rc_send_only, op::rc_acknowledge, op::rc_rdma_read_response_first,
                              op::rc_rdma_read_request, op::ud_send_only, op::rc_compare_swap, std::uint8_t{0x1f}}) {
    add_roce(roce_spec(opcode, 7, 1), opcode == op::rc_acknowledge ? 0 : 64);
  }
  roce_frame_spec nak = roce_spec(op::rc_acknowledge, 9, 2);
  nak.aeth_syndrome = 0x60;  // NAK, PSN sequence error
  add_roce(nak, 0);
  roce_frame_spec tagged = roce_spec(op::rc_rdma_write_middle, 8, 3);
  tagged.eth.vlan_count = 1;
  tagged.eth.vlans[0] = {.pcp = 3, .vid = 100};
  tagged.ip.ecn = wire::ecn_codepoint::ce;
  add_roce(tagged, 200);
  roce_frame_spec qinq = tagged;
  qinq.eth.vlan_count = 2;
  qinq.eth.vlans[0].tpid = wire::ethertype::qinq;
  qinq.eth.vlans[1] = {.pcp = 3, .vid = 7};
  add_roce(qinq, 64);
  roce_frame_spec s_tag = tagged;
  s_tag.eth.vlans[0].tpid = wire::ethertype::qinq;
  add_roce(s_tag, 64);
  roce_frame_spec v6 = roce_spec(op::rc_send_only, 3, 4);
  v6.ip.version = 6;
  v6.ip.src = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4};
  v6.ip.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  add_roce(v6, 64);
  const std::array<std::uint8_t, 4> nop_options{1, 1, 1, 0};
  roce_frame_spec options = roce_spec(op::rc_send_only, 4, 5);
  options.ip.ipv4_options = nop_options;
  add_roce(options, 64);
  roce_frame_spec other_port = roce_spec(op::rc_send_only, 4, 6);
  other_port.udp_dst_port = 4792;
  add_roce(other_port, 64);
  cnp_frame_spec cnp;
  cnp.eth.src_mac = mac(7);
  cnp.ip.src = ipv4_mapped(198, 18, 1, 1);
  cnp.ip.dst = ipv4_mapped(198, 18, 0, 7);
  cnp.dest_qp = 0x107;
  append_cnp_frame(cnp, frames.emplace_back());
  pfc_frame_spec pfc;
  pfc.src_mac = mac(8);
  pfc.class_enable = 0x00a9;
  pfc.quanta = {0xffff, 0, 0, 10, 0, 0, 0, 0};
  append_pfc_frame(pfc, frames.emplace_back());
  pause_frame_spec pause;
  pause.src_mac = mac(9);
  append_pause_frame(pause, frames.emplace_back());
  std::vector<std::uint8_t> inner;
  append_roce_frame(roce_spec(op::rc_send_only, 5, 10), inner);
  erspan_spec erspan;
  erspan.type = 3;
  erspan.outer_ip.src = ipv4_mapped(198, 18, 2, 1);
  erspan.outer_ip.dst = ipv4_mapped(198, 18, 2, 2);
  append_erspan_frame(erspan, inner, frames.emplace_back());
  return frames;
}

// When dissect_common() takes a frame, every field it reports is dissect()'s.
void expect_agrees(std::span<const std::uint8_t> bytes, const std::string& what) {
  common_frame c;
  if (!dissect_common(bytes, c)) return;
  dissected_frame f;
  dissect(link_type::ethernet, bytes, f);
  ASSERT_FALSE(f.malformed) << what;
  ASSERT_EQ(f.erspan_type, 0) << what;
  if (c.what == common_frame::kind::pfc) {
    ASSERT_TRUE(f.is_mac_control) << what;
    EXPECT_FALSE(f.truncated) << what;
    EXPECT_EQ(f.mac_control_opcode, wire::mac_control_opcode::pfc) << what;
    EXPECT_EQ(f.src_mac, c.src_mac) << what;
    EXPECT_EQ(f.pfc_class_enable, c.pfc_class_enable) << what;
    EXPECT_EQ(f.pfc_quanta, c.pfc_quanta) << what;
    return;
  }
  ASSERT_TRUE(f.is_roce) << what;
  EXPECT_EQ(f.truncated, c.truncated) << what;
  EXPECT_EQ(f.ecn, c.ecn) << what;
  EXPECT_EQ(f.bth_opcode, c.bth_opcode) << what;
  EXPECT_EQ(f.dest_qp, c.dest_qp) << what;
  EXPECT_EQ(f.psn, c.psn) << what;
  EXPECT_EQ(f.has_aeth, c.has_aeth) << what;
  if (f.has_aeth) {
    EXPECT_EQ(f.aeth_syndrome, c.aeth_syndrome) << what;
  }
  EXPECT_EQ(f.ip_version, 4) << what;
  EXPECT_EQ(f.ip_src, ipv4_mapped(c.ip_src[0], c.ip_src[1], c.ip_src[2], c.ip_src[3])) << what;
  EXPECT_EQ(f.ip_dst, ipv4_mapped(c.ip_dst[0], c.ip_dst[1], c.ip_dst[2], c.ip_dst[3])) << what;
}

TEST(dissect_common, agrees_with_dissect_on_every_cut_and_on_corrupted_headers) {
  const auto frames = sample_frames();
  std::mt19937_64 rng(25);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& frame = frames[i];
    for (std::size_t cut = 0; cut <= frame.size(); ++cut)
      expect_agrees(std::span(frame).first(cut), "frame " + std::to_string(i) + " cut at " + std::to_string(cut));
    // Corruptions of the headers (the first 80 bytes): lengths, versions, ports, opcodes.
    for (int trial = 0; trial < 3000; ++trial) {
      std::vector<std::uint8_t> bad = frame;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < flips; ++k) bad[rng() % std::min<std::size_t>(bad.size(), 80)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      const std::size_t cut = rng() % 2 ? bad.size() : rng() % (bad.size() + 1);
      expect_agrees(std::span(bad).first(cut), "frame " + std::to_string(i) + " trial " + std::to_string(trial));
      if (HasFatalFailure()) return;
    }
  }
}

TEST(dissect_common, takes_roce_over_ipv4_with_one_tag_and_untagged_pfc_and_nothing_else) {
  const auto frames = sample_frames();
  // In sample_frames() order: ten opcodes (the last an unknown one), a NAK, one tag, two
  // tags, an S-tag, IPv6, IPv4 options, another UDP port, a CNP, PFC, PAUSE, ERSPAN.
  const std::vector<bool> taken{true,  true, true,  true,  true,  true,  true,  true, true, true, true,
                                true,  false, true, false, false, false, true,  true, false, false};
  ASSERT_EQ(frames.size(), taken.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    common_frame c;
    EXPECT_EQ(dissect_common(frames[i], c), taken[i]) << "frame " << i;
  }
  // A data frame snapped by the capture is still taken, as truncated.
  common_frame c;
  ASSERT_TRUE(dissect_common(std::span(frames[0]).first(80), c));
  EXPECT_TRUE(c.truncated);
  EXPECT_EQ(c.what, common_frame::kind::roce);
}

// The analyzer counts a frame the same whether dissect_common() or dissect() read it.
TEST(analyzer_paths, the_common_path_counts_as_full_dissection_does) {
  const auto frames = sample_frames();
  congestion_analyzer fast, general;
  std::mt19937_64 rng(7);
  dissected_frame f;
  for (int i = 0; i < 20000; ++i) {
    const auto& frame = frames[rng() % frames.size()];
    const std::size_t captured = rng() % 4 == 0 ? rng() % (frame.size() + 1) : frame.size();
    const packet_view p{.timestamp_ns = 1000 * i + static_cast<std::int64_t>(rng() % 3000),
                        .interface_id = 0,
                        .original_length = static_cast<std::uint32_t>(frame.size() + (rng() % 2) * 1000),
                        .bytes = std::span(frame).first(captured)};
    fast.add(p);
    dissect(link_type::ethernet, p.bytes, f);
    general.add(p, f);
  }
  const capture_analysis a = fast.finish(), b = general.finish();
  EXPECT_GT(a.flows.size(), 5u);
  EXPECT_GT(a.pause_interval_count, 100u);
  EXPECT_EQ(to_json(a, {.flows = true, .pauses = true}), to_json(b, {.flows = true, .pauses = true}));
}

// A pause storm as bench_make_capture writes one (random ports, priority sets, XON and
// XOFF), with ports first seen out of name order, several frames at one instant (equal
// starts and lengths across ports and priorities, to test the order of ties) and RoCE
// between them; written to a pcapng file and analyzed as `rocelab analyze` does.
std::string write_storm(const std::string& path) {
  auto writer = pcapng_writer::create(path, {{.link = link_type::ethernet, .snaplen = 128, .name = "mirror0", .description = "storm"}});
  EXPECT_TRUE(writer.ok());
  std::mt19937_64 rng(2025);
  std::vector<std::uint8_t> frame;
  std::int64_t t = 1'700'000'000'000'000'000;
  for (int i = 0; i < 60000; ++i) {
    frame.clear();
    if (rng() % 100 < 30) {
      pfc_frame_spec pfc;
      pfc.src_mac = mac(static_cast<std::uint8_t>(0xf0 - rng() % 48));  // high addresses first
      pfc.class_enable = static_cast<std::uint16_t>(rng() & 0xffff);
      for (auto& q : pfc.quanta) q = rng() % 4 == 0 ? 0 : static_cast<std::uint16_t>(rng() % 4 * 100);
      append_pfc_frame(pfc, frame);
    } else {
      auto s = roce_spec(rng() % 8 == 0 ? op::rc_acknowledge : op::rc_rdma_write_middle,
                         static_cast<std::uint32_t>(i - static_cast<int>(rng() % 3)), static_cast<std::uint8_t>(rng() % 16));
      append_roce_frame(s, frame);
    }
    if (rng() % 4 != 0) t += static_cast<std::int64_t>(rng() % 2000);  // a quarter share their instant
    const packet_view p{.timestamp_ns = t, .interface_id = 0, .original_length = static_cast<std::uint32_t>(frame.size()),
                        .bytes = frame};
    EXPECT_TRUE(writer->write(p).ok());
  }
  EXPECT_TRUE(writer->close().ok());
  return path;
}

TEST(pause_summary, kept_as_intervals_close_equals_the_summary_of_the_full_list_on_a_storm) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("rocelab-storm-" + std::to_string(::getpid()) + ".pcapng")).string();
  write_storm(path);
  auto full = analyze_capture_file(path, {.link_gbps = 100, .keep_pause_intervals = true});
  auto summary_only = analyze_capture_file(path, {.link_gbps = 100, .keep_pause_intervals = false});
  std::filesystem::remove(path);
  ASSERT_TRUE(full.ok() && summary_only.ok());
  const capture_analysis& a = full->analysis;
  const capture_analysis& s = summary_only->analysis;
  ASSERT_GT(a.pauses.size(), 10000u) << "a storm";
  EXPECT_TRUE(s.pauses.empty()) << "no list unless asked";
  EXPECT_EQ(s.pause_interval_count, a.pauses.size());
  EXPECT_EQ(a.pause_interval_count, a.pauses.size());
  EXPECT_EQ(s.ports, a.ports);

  const auto expected = summarize_pauses(a);
  ASSERT_GT(expected.size(), 100u);
  for (const capture_analysis* x : {&a, &s}) {
    ASSERT_EQ(x->pause_summary.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto &e = expected[i], &g = x->pause_summary[i];
      EXPECT_EQ(std::tie(g.port, g.priority, g.intervals, g.frames, g.paused_ns, g.longest_ns),
                std::tie(e.port, e.priority, e.intervals, e.frames, e.paused_ns, e.longest_ns))
          << "entry " << i;
    }
    const auto longest = longest_pauses(a, 10);
    ASSERT_EQ(x->longest_pause_intervals.size(), longest.size());
    for (std::size_t i = 0; i < longest.size(); ++i) {
      const pause_interval &e = a.pauses[longest[i]], &g = x->longest_pause_intervals[i];
      EXPECT_EQ(std::tie(g.port, g.priority, g.start_ns, g.end_ns, g.frames),
                std::tie(e.port, e.priority, e.start_ns, e.end_ns, e.frames))
          << "longest " << i;
    }
  }
  // A longer top list, deep into intervals of equal length and start (one frame's
  // priorities with equal quanta, frames of several ports at one instant): the order of
  // ties is the full list's, by port name and priority.
  constexpr std::size_t many = 5000;
  auto deep = analyze_capture_file(write_storm(path),
                                   {.link_gbps = 100, .keep_pause_intervals = false, .longest_pauses_kept = many});
  std::filesystem::remove(path);
  ASSERT_TRUE(deep.ok());
  const auto longest = longest_pauses(a, many);
  ASSERT_EQ(deep->analysis.longest_pause_intervals.size(), many);
  std::size_t ties = 0;
  for (std::size_t i = 0; i < many; ++i) {
    const pause_interval &e = a.pauses[longest[i]], &g = deep->analysis.longest_pause_intervals[i];
    ASSERT_EQ(std::tie(g.port, g.priority, g.start_ns, g.end_ns, g.frames),
              std::tie(e.port, e.priority, e.start_ns, e.end_ns, e.frames))
        << "longest " << i;
    if (i > 0) {
      const pause_interval& before = a.pauses[longest[i - 1]];
      ties += before.start_ns == e.start_ns && before.end_ns == e.end_ns;
    }
  }
  EXPECT_GT(ties, 50u) << "ties of length and start among the longest";

  // The rest of the analysis does not depend on keeping the list.
  auto without_lists = [](nlohmann::ordered_json j) {
    j.erase("pauses");
    return j;
  };
  EXPECT_EQ(without_lists(to_json(s, {.flows = true})), without_lists(to_json(a, {.flows = true})));
}

}  // namespace
}  // namespace rocelab::captures
