// RoCEv2 ICRC against real NIC frames and hand-made frames with known-good ICRCs.
#include "rocelab/captures/icrc.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures {
namespace {

using frame_bytes = std::vector<std::uint8_t>;

// Reads the records of a classic little-endian pcap file. Kept local on purpose, so the
// ICRC tests do not depend on the capture file reader they would otherwise share bugs with.
std::vector<frame_bytes> read_pcap_records(const std::string& name) {
  const std::string path = std::string(ROCELAB_SHARED_DIR) + "/pcaps/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "missing " << path;
  const std::vector<std::uint8_t> file{std::istreambuf_iterator<char>(in), {}};
  std::vector<frame_bytes> records;
  if (file.size() < 24 || file[0] != 0xD4 || file[1] != 0xC3) {
    ADD_FAILURE() << path << " is not a little-endian pcap";
    return records;
  }
  auto le32 = [&](std::size_t at) {
    return std::uint32_t{file[at]} | (std::uint32_t{file[at + 1]} << 8) |
           (std::uint32_t{file[at + 2]} << 16) | (std::uint32_t{file[at + 3]} << 24);
  };
  for (std::size_t at = 24; at + 16 <= file.size();) {
    const std::size_t captured = le32(at + 8);
    at += 16;
    if (captured > file.size() - at) break;
    records.emplace_back(file.begin() + static_cast<std::ptrdiff_t>(at),
                         file.begin() + static_cast<std::ptrdiff_t>(at + captured));
    at += captured;
  }
  return records;
}

// Offset of the IP header after Ethernet and any 802.1Q tags.
std::size_t ip_offset_of(const frame_bytes& f) {
  std::size_t off = 12;
  while (wire::load_be16(f.data() + off) == 0x8100) off += 4;
  return off + 2;
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32_ieee({reinterpret_cast<const std::uint8_t*>(check.data()), check.size()}), 0xCBF43926u);
  EXPECT_EQ(crc32_ieee({}), 0u);
}

TEST(Crc32, IncrementalEqualsOneShotAtEverySplit) {
  std::vector<std::uint8_t> data(77);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 37 + 11);
  const std::uint32_t whole = crc32_ieee(data);
  for (std::size_t split = 0; split <= data.size(); ++split) {
    const std::span<const std::uint8_t> all(data);
    std::uint32_t c = crc32_update(crc32_init, all.first(split));
    c = crc32_update(c, all.subspan(split));
    EXPECT_EQ(crc32_final(c), whole) << "split " << split;
  }
}

TEST(Icrc, MatchesTheRealConnectX4LxCnp) {
  const auto frames = read_pcap_records("rocev2-cnp-connectx4lx_scapy-hexdump.pcap");
  ASSERT_EQ(frames.size(), 1u);
  const auto& f = frames[0];
  ASSERT_EQ(f.size(), 74u);
  const auto crc = compute_icrc(f, 14, f.size() - 4);
  ASSERT_TRUE(crc.has_value());
  EXPECT_EQ(*crc, 0x2A00FD82u);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
}

TEST(Icrc, MatchesEveryHandcraftedFrame) {
  // All nine frames carry valid ICRCs: VLAN PCP, every ECN codepoint, IPv4 options,
  // CNPs, an ACK and a decoy whose ports are swapped (its ICRC is still valid).
  const auto frames = read_pcap_records("rocev2-vlan-ecn-cnp_handcrafted.pcap");
  ASSERT_EQ(frames.size(), 9u);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(verify_icrc(frames[i], ip_offset_of(frames[i])), icrc_check::valid) << "frame " << i + 1;
  }
}

TEST(Icrc, VariantFieldsDoNotChangeIt) {
  auto f = read_pcap_records("rocev2-cnp-connectx4lx_scapy-hexdump.pcap").at(0);
  const std::size_t ip = 14;
  f[ip + 1] ^= 0x03;        // ECN: a switch marks CE
  f[ip + 8] -= 1;           // TTL decremented by a router
  f[ip + 10] ^= 0x5A;       // checksum rewritten
  f[ip + 20 + 6] = 0x12;    // UDP checksum
  f[ip + 28 + 4] = 0x80;    // FECN/BECN byte
  EXPECT_EQ(verify_icrc(f, ip), icrc_check::valid);
}

TEST(Icrc, InvariantFieldsDoChangeIt) {
  const auto original = read_pcap_records("rocev2-cnp-connectx4lx_scapy-hexdump.pcap").at(0);
  // Source address, UDP destination port, dest QP, PSN, payload.
  for (std::size_t at : {std::size_t{14 + 12}, std::size_t{14 + 23}, std::size_t{14 + 28 + 7},
                         std::size_t{14 + 28 + 11}, std::size_t{14 + 40}}) {
    auto f = original;
    f[at] ^= 0x01;
    EXPECT_EQ(verify_icrc(f, 14), icrc_check::mismatch) << "byte " << at;
  }
}

TEST(Icrc, CutOrInconsistentPacketsAreIncomplete) {
  const auto f = read_pcap_records("rocev2-cnp-connectx4lx_scapy-hexdump.pcap").at(0);
  for (std::size_t n = 0; n < f.size(); ++n) {
    const std::vector<std::uint8_t> cut(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_EQ(verify_icrc(cut, 14), icrc_check::incomplete) << "length " << n;
  }
  auto bad_version = f;
  bad_version[14] = 0x55;
  EXPECT_EQ(verify_icrc(bad_version, 14), icrc_check::incomplete);
  EXPECT_FALSE(compute_icrc(f, 14, 14 + 20).has_value());  // no room for UDP and BTH
  EXPECT_FALSE(compute_icrc(f, 14, f.size() + 1).has_value());
}

TEST(Icrc, IgnoresEthernetPaddingAfterTheIpPacket) {
  auto f = read_pcap_records("rocev2-cnp-connectx4lx_scapy-hexdump.pcap").at(0);
  f.insert(f.end(), 6, 0xEE);
  EXPECT_EQ(icrc_offset_of(f, 14), std::optional<std::size_t>(70));
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
}

TEST(Icrc, Ipv6MasksTrafficClassFlowLabelAndHopLimit) {
  roce_frame_spec s;
  s.ip.version = 6;
  s.ip.src[0] = 0xFD;
  s.ip.src[15] = 1;
  s.ip.dst[0] = 0xFD;
  s.ip.dst[15] = 2;
  s.ip.dscp = 26;
  s.ip.ecn = wire::ecn_codepoint::ect0;
  s.ip.ipv6_flow_label = 0x12345;
  std::vector<std::uint8_t> payload(100, 0x5A);
  s.payload = payload;
  std::vector<std::uint8_t> f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
  f[14] = 0x6F;      // traffic class high nibble
  f[15] ^= 0xFF;     // traffic class low nibble and flow label
  f[17] ^= 0xFF;     // flow label
  f[14 + 7] = 1;     // hop limit
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
  f[14 + 8] ^= 1;    // source address is invariant
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::mismatch);
}

}  // namespace
}  // namespace rocelab::captures
