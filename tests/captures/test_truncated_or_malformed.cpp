// `truncated` counts frames the capture cut (fewer bytes captured than were on the wire);
// a frame captured whole that is shorter than its own headers claim is `malformed`.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/captures/frame_builder.hpp"

namespace rocelab::captures {
namespace {

std::vector<std::uint8_t> roce_write(std::size_t payload_bytes) {
  static const std::vector<std::uint8_t> payload(4096, 0xab);
  roce_frame_spec s;
  s.eth.src_mac = {2, 0, 0, 0, 0, 1};
  s.eth.dst_mac = {2, 0, 0, 0, 0, 2};
  s.ip.src = ipv4_mapped(198, 18, 0, 1);
  s.ip.dst = ipv4_mapped(198, 18, 0, 2);
  s.opcode = wire::roce_opcode::rc_rdma_write_only;
  s.dest_qp = 0x45;
  s.payload = std::span<const std::uint8_t>(payload.data(), payload_bytes);
  std::vector<std::uint8_t> out;
  append_roce_frame(s, out);
  return out;
}

struct counted {
  std::uint64_t malformed, truncated;
};

counted count(const std::vector<std::uint8_t>& bytes, std::uint32_t original_length) {
  congestion_analyzer a;
  a.add(packet_view{.timestamp_ns = 1'704'067'203'000'000'000, .interface_id = 0,
                    .original_length = original_length, .bytes = bytes});
  const capture_analysis r = a.finish();
  EXPECT_EQ(r.frames, 1u);
  return {r.malformed, r.truncated};
}

TEST(truncated_or_malformed, a_whole_frame_shorter_than_its_ip_length_is_malformed) {
  std::vector<std::uint8_t> frame = roce_write(512);
  frame.resize(frame.size() - 200);  // the IP and UDP lengths still claim the 200 bytes
  const auto whole = static_cast<std::uint32_t>(frame.size());
  const counted c = count(frame, whole);
  EXPECT_EQ(c.malformed, 1u);
  EXPECT_EQ(c.truncated, 0u);
}

TEST(truncated_or_malformed, a_whole_frame_cut_inside_its_headers_is_malformed) {
  std::vector<std::uint8_t> frame = roce_write(64);
  frame.resize(14 + 10);  // Ethernet, then half an IPv4 header
  const counted c = count(frame, static_cast<std::uint32_t>(frame.size()));
  EXPECT_EQ(c.malformed, 1u);
  EXPECT_EQ(c.truncated, 0u);
}

TEST(truncated_or_malformed, a_frame_cut_by_the_snap_length_is_truncated) {
  const std::vector<std::uint8_t> full = roce_write(512);
  std::vector<std::uint8_t> snapped = full;
  snapped.resize(full.size() - 200);
  const counted c = count(snapped, static_cast<std::uint32_t>(full.size()));
  EXPECT_EQ(c.malformed, 0u);
  EXPECT_EQ(c.truncated, 1u);
}

TEST(truncated_or_malformed, a_whole_valid_frame_is_neither) {
  const std::vector<std::uint8_t> full = roce_write(512);
  const counted c = count(full, static_cast<std::uint32_t>(full.size()));
  EXPECT_EQ(c.malformed, 0u);
  EXPECT_EQ(c.truncated, 0u);
}

}  // namespace
}  // namespace rocelab::captures
