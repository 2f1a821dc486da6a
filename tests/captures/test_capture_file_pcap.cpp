// capture_file_reader on classic pcap: both magics in both byte orders, link type bits,
// in-memory files and records that run past the end.
#include "rocelab/captures/capture_file.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace rocelab::captures {
namespace {

using namespace test;

TEST(Pcap, MicroAndNanoMagicsInBothByteOrdersGiveIdenticalPackets) {
  const auto packets = sample_packets(20);
  for (const bool swapped : {false, true}) {
    for (const bool nano : {false, true}) {
      SCOPED_TRACE(std::string(swapped ? "swapped" : "native") + (nano ? " ns" : " us"));
      const built_file f = make_pcap(swapped, nano, packets);
      auto reader = capture_file_reader::from_memory(f.bytes);
      ASSERT_TRUE(reader.ok()) << reader.error().message();
      EXPECT_EQ(reader->format(), capture_format::pcap);
      ASSERT_EQ(reader->interfaces().size(), 1U);
      EXPECT_EQ(reader->interfaces()[0].snaplen, 65535U);
      EXPECT_EQ(reader->interfaces()[0].timestamp_unit_ns_num, nano ? 1 : 1000);
      EXPECT_EQ(read_all(*reader), packets);
      EXPECT_TRUE(reader->error().ok()) << reader->error().message();
    }
  }
}

TEST(Pcap, NanosecondMagicKeepsSubMicrosecondDigits) {
  std::vector<packet_copy> packets(1);
  packets[0].timestamp_ns = 1'600'000'000'123'456'789LL;
  packets[0].bytes = payload(4, 1);
  packets[0].original_length = 4;
  for (const bool swapped : {false, true}) {
    const built_file f = make_pcap(swapped, true, packets);
    auto reader = capture_file_reader::from_memory(f.bytes);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(read_all(*reader), packets);
  }
}

TEST(Pcap, LinkTypeFieldUpperBitsCarryFcsInfoAndAreMasked) {
  struct link_case {
    const char* name;
    std::uint32_t field;
    link_type expected;
  };
  const link_case cases[] = {
      {"plain ethernet", 1, link_type::ethernet},
      {"ethernet with FCS length 4 flagged", 0x14000001, link_type::ethernet},
      {"raw with reserved bits set", 0x03ff0065, link_type::raw},
      {"ipv6 with FCS bits", 0xf00000e5, link_type::ipv6},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    for (const bool swapped : {false, true}) {
      const built_file f = make_pcap(swapped, false, sample_packets(1), 0, c.field);
      auto reader = capture_file_reader::from_memory(f.bytes);
      ASSERT_TRUE(reader.ok());
      EXPECT_EQ(reader->interfaces()[0].link, c.expected);
      EXPECT_EQ(reader->interfaces()[0].snaplen, 0U);  // 0 means unlimited
    }
  }
}

TEST(Pcap, FromMemoryHandsOutViewsIntoTheCallerBufferWithoutCopying) {
  const built_file f = make_pcap(false, false, sample_packets(3));
  auto reader = capture_file_reader::from_memory(f.bytes);
  ASSERT_TRUE(reader.ok());
  packet_view view;
  std::size_t expected_offset = 24 + 16;
  while (reader->next(view)) {
    EXPECT_EQ(view.bytes.data(), f.bytes.data() + expected_offset);
    expected_offset += 16 + view.bytes.size();
  }
}

TEST(Pcap, CapturedLengthBeyondTheFileNamesRecordAndOffset) {
  const auto packets = sample_packets(3);
  for (const bool swapped : {false, true}) {
    built_file f = make_pcap(swapped, false, packets);
    byte_builder b{swapped, std::move(f.bytes)};
    const std::size_t second = f.boundaries[1];
    b.patch32(second + 8, 70000);
    auto reader = capture_file_reader::from_memory(b.bytes);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ(read_all(*reader).size(), 1U);
    const std::size_t remaining = b.bytes.size() - second - 16;
    EXPECT_EQ(reader->error().code(), error_code::malformed_input);
    EXPECT_EQ(reader->error().message(),
              "record 2 at offset " + std::to_string(second) + ": captured length 70000 "
              "exceeds the remaining " + std::to_string(remaining) + " bytes");
    packet_view view;
    EXPECT_FALSE(reader->next(view)) << "the reader stays stopped after an error";
  }
}

}  // namespace
}  // namespace rocelab::captures
