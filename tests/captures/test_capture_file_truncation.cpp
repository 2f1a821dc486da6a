// capture_file_reader on damaged files: cut at every offset, random byte flips; never a
// crash, a hang or a read past the end.
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

// Cuts the file at every offset: a prefix shorter than the header fails to open; a cut on
// a record boundary is a clean end after the records before it; any other cut yields the
// whole records before it and then an error.
void check_every_truncation(const built_file& f) {
  for (std::size_t cut = 0; cut <= f.bytes.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const exact_buffer buffer(f.bytes, cut);
    auto reader = capture_file_reader::from_memory(buffer.span());
    if (cut < f.header_end) {
      EXPECT_FALSE(reader.ok());
      continue;
    }
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    std::size_t packets = 0;
    packet_view view;
    while (reader->next(view)) {
      ASSERT_GE(view.bytes.data(), buffer.data.get());
      ASSERT_LE(view.bytes.data() + view.bytes.size(), buffer.data.get() + cut);
      ++packets;
    }
    const auto whole = static_cast<std::size_t>(
        std::upper_bound(f.boundaries.begin(), f.boundaries.end(), cut) - f.boundaries.begin());
    const bool on_boundary = std::binary_search(f.boundaries.begin(), f.boundaries.end(), cut);
    EXPECT_EQ(reader->error().ok(), on_boundary) << reader->error().message();
    EXPECT_LE(packets, whole);
  }
}

TEST(Truncation, GeneratedPcapAtEveryOffset) {
  for (const bool swapped : {false, true}) {
    const built_file f = make_pcap(swapped, true, sample_packets(8));
    check_every_truncation(f);
    // In pcap every record is a packet, so the count is exact.
    for (std::size_t i = 0; i < f.boundaries.size(); ++i) {
      const exact_buffer buffer(f.bytes, f.boundaries[i]);
      auto reader = capture_file_reader::from_memory(buffer.span());
      ASSERT_TRUE(reader.ok());
      EXPECT_EQ(read_all(*reader).size(), i);
    }
  }
}

TEST(Truncation, GeneratedPcapngAtEveryOffset) {
  for (const bool swapped : {false, true}) check_every_truncation(sample_pcapng(swapped));
}

TEST(Truncation, SharedSmallCapturesAtEveryOffset) {
  struct small_case {
    const char* name;
    std::size_t header_bytes;  // the pcap file header or the first SHB
  };
  for (const auto [name, header_bytes] : {small_case{"vlan-qinq-pcp-dei_zeek.pcapng", 212},
                                          small_case{"erspan-typeIII-pb_tcpdump-erspan-type-"
                                                     "iii-pb-1.pcap", 24},
                                          small_case{"pfc-pause_handcrafted.pcap", 24}}) {
    SCOPED_TRACE(name);
    const auto bytes = read_file(pcaps_dir + name);
    ASSERT_FALSE(bytes.empty());
    std::size_t previous_packets = 0;
    for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
      SCOPED_TRACE("cut at " + std::to_string(cut));
      const exact_buffer buffer(bytes, cut);
      auto reader = capture_file_reader::from_memory(buffer.span());
      if (!reader.ok()) {
        EXPECT_LT(cut, header_bytes) << "only a cut inside the file header may fail to open";
        continue;
      }
      const std::size_t packets = read_all(*reader).size();
      // A longer prefix never yields fewer packets, and only the whole file ends cleanly
      // with all of them.
      EXPECT_GE(packets, previous_packets);
      previous_packets = packets;
      if (cut == bytes.size()) {
        EXPECT_TRUE(reader->error().ok()) << reader->error().message();
      }
    }
  }
}

TEST(Corruption, RandomByteFlipsNeverReadOutOfBounds) {
  std::mt19937 rng(20240611);
  const built_file sources[] = {make_pcap(false, false, sample_packets(10)),
                                make_pcap(true, true, sample_packets(10)), sample_pcapng(false),
                                sample_pcapng(true)};
  for (const auto& source : sources) {
    for (int round = 0; round < 1500; ++round) {
      std::vector<std::uint8_t> bytes = source.bytes;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) {
        const std::size_t at = rng() % bytes.size();
        // Mostly length-like damage: set whole bytes, sometimes to extremes.
        bytes[at] = static_cast<std::uint8_t>(rng() % 3 == 0 ? 0xff : rng());
      }
      const exact_buffer buffer(bytes, bytes.size());
      auto reader = capture_file_reader::from_memory(buffer.span());
      if (!reader.ok()) continue;
      packet_view view;
      std::size_t packets = 0;
      while (reader->next(view)) {
        ASSERT_GE(view.bytes.data(), buffer.data.get());
        ASSERT_LE(view.bytes.data() + view.bytes.size(), buffer.data.get() + buffer.size);
        ASSERT_LT(++packets, 1000U) << "a reader that never ends";
      }
    }
  }
}

}  // namespace
}  // namespace rocelab::captures
