// capture_file_reader on pcapng: interfaces and their time resolution and offset,
// options, byte-order changes between sections, simple and obsolete packet blocks,
// corrupt lengths; and the errors of opening a file.
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

TEST(Pcapng, InterfacesWithDifferentTsresolGiveNanoseconds) {
  struct resolution_case {
    const char* name;
    int tsresol;
    std::uint64_t units;
    std::int64_t expected_ns;
    std::int64_t num, den;
  };
  const resolution_case cases[] = {
      {"default microseconds", -1, 1'700'000'000'123'456ULL, 1'700'000'000'123'456'000LL, 1000, 1},
      {"10^-6", 6, 1'700'000'000'123'456ULL, 1'700'000'000'123'456'000LL, 1000, 1},
      {"10^-9", 9, 1'700'000'000'123'456'789ULL, 1'700'000'000'123'456'789LL, 1, 1},
      {"10^-3", 3, 1'700'000'000'123ULL, 1'700'000'000'123'000'000LL, 1'000'000, 1},
      {"10^-12 (picoseconds)", 12, 1'700'000'000'123'456'789ULL, 1'700'000'000'123'456LL, 1, 1000},
      {"2^-10", 0x8a, (1'700'000'000ULL << 10) + 512, 1'700'000'000'500'000'000LL, 1953125, 2},
      {"2^-30", 0x9e, (1'700'000'000ULL << 30) + (1ULL << 29), 1'700'000'000'500'000'000LL,
       1953125, 1LL << 21},
      {"2^0 (seconds)", 0x80, 1'700'000'000ULL, 1'700'000'000'000'000'000LL, 1'000'000'000, 1},
  };
  for (const bool swapped : {false, true}) {
    pcapng_builder g;
    g.shb(swapped);
    for (const auto& c : cases) g.idb(1, 0, c.name, c.tsresol);
    for (std::size_t i = 0; i < std::size(cases); ++i) {
      g.epb(static_cast<std::uint32_t>(i), cases[i].units, payload(8, 1), 8);
    }
    const built_file f = g.finish();
    auto reader = capture_file_reader::from_memory(f.bytes);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_EQ(reader->format(), capture_format::pcapng);
    const auto packets = read_all(*reader);
    EXPECT_TRUE(reader->error().ok()) << reader->error().message();
    ASSERT_EQ(packets.size(), std::size(cases));
    ASSERT_EQ(reader->interfaces().size(), std::size(cases));
    for (std::size_t i = 0; i < std::size(cases); ++i) {
      SCOPED_TRACE(cases[i].name);
      EXPECT_EQ(packets[i].interface_id, i);
      EXPECT_EQ(packets[i].timestamp_ns, cases[i].expected_ns);
      EXPECT_EQ(reader->interfaces()[i].name, cases[i].name);
      EXPECT_EQ(reader->interfaces()[i].timestamp_unit_ns_num, cases[i].num);
      EXPECT_EQ(reader->interfaces()[i].timestamp_unit_ns_den, cases[i].den);
    }
  }
}

TEST(Pcapng, TsoffsetAddsSecondsToEveryTimestamp) {
  pcapng_builder g;
  g.shb(false);
  g.idb(1, 0, "", 9, "", 100);
  g.epb(0, 5, payload(4, 1), 4);
  const built_file f = g.finish();
  auto reader = capture_file_reader::from_memory(f.bytes);
  ASSERT_TRUE(reader.ok());
  const auto packets = read_all(*reader);
  ASSERT_EQ(packets.size(), 1U);
  EXPECT_EQ(packets[0].timestamp_ns, 100'000'000'005LL);
}

TEST(Pcapng, InterfaceOptionsAndLinkTypesAreReported) {
  pcapng_builder g;
  g.shb(true);
  g.idb(1, 262144, "Ethernet8", 9, "switch port 8");
  g.idb(101, 0, std::string("raw0\0\0", 6));
  const built_file f = g.finish();
  auto reader = capture_file_reader::from_memory(f.bytes);
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE(read_all(*reader).empty());
  EXPECT_TRUE(reader->error().ok());
  ASSERT_EQ(reader->interfaces().size(), 2U);
  EXPECT_EQ(reader->interfaces()[0].link, link_type::ethernet);
  EXPECT_EQ(reader->interfaces()[0].snaplen, 262144U);
  EXPECT_EQ(reader->interfaces()[0].name, "Ethernet8");
  EXPECT_EQ(reader->interfaces()[0].description, "switch port 8");
  EXPECT_EQ(reader->interfaces()[1].link, link_type::raw);
  EXPECT_EQ(reader->interfaces()[1].name, "raw0") << "trailing NULs are not part of the name";
}

TEST(Pcapng, SectionsMayChangeByteOrderAndInterfaceIdsStayGlobal) {
  pcapng_builder g;
  g.shb(false);
  g.idb(1, 0, "a0", 9);
  g.idb(1, 0, "a1", 9);
  g.epb(1, 10, payload(10, 1), 10);
  g.shb(true);
  g.idb(1, 0, "b0", 9);
  g.epb(0, 20, payload(20, 2), 20);
  g.shb(false);
  g.idb(1, 0, "c0", 6);
  g.epb(0, 30, payload(30, 3), 30);
  const built_file f = g.finish();
  auto reader = capture_file_reader::from_memory(f.bytes);
  ASSERT_TRUE(reader.ok());
  const auto packets = read_all(*reader);
  ASSERT_TRUE(reader->error().ok()) << reader->error().message();
  ASSERT_EQ(packets.size(), 3U);
  EXPECT_EQ(packets[0], (packet_copy{10, 1, 10, payload(10, 1)}));
  EXPECT_EQ(packets[1], (packet_copy{20, 2, 20, payload(20, 2)}));
  EXPECT_EQ(packets[2], (packet_copy{30'000, 3, 30, payload(30, 3)}));
  ASSERT_EQ(reader->interfaces().size(), 4U);
  EXPECT_EQ(reader->interfaces()[2].name, "b0");
}

TEST(Pcapng, SimplePacketBlockCaplenIsTheLeastOfLengthSnaplenAndRoom) {
  struct spb_case {
    const char* name;
    std::uint32_t snaplen;
    std::uint32_t original;
    std::size_t stored;
    std::size_t expected_caplen;
  };
  const spb_case cases[] = {
      {"whole packet, unlimited snaplen", 0, 10, 10, 10},
      {"snaplen cuts", 64, 100, 100, 64},
      {"block room cuts (packet snapped by the writer)", 0, 200, 20, 20},
      {"padding is not packet data", 0, 9, 9, 9},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    pcapng_builder g;
    g.shb(false);
    g.idb(1, c.snaplen);
    g.spb(c.original, payload(c.stored, 4));
    const built_file f = g.finish();
    auto reader = capture_file_reader::from_memory(f.bytes);
    ASSERT_TRUE(reader.ok());
    const auto packets = read_all(*reader);
    ASSERT_TRUE(reader->error().ok()) << reader->error().message();
    ASSERT_EQ(packets.size(), 1U);
    EXPECT_EQ(packets[0].original_length, c.original);
    EXPECT_EQ(packets[0].interface_id, 0U);
    EXPECT_EQ(packets[0].timestamp_ns, 0);
    auto expected = payload(c.stored, 4);
    expected.resize(c.expected_caplen);
    EXPECT_EQ(packets[0].bytes, expected);
  }
}

TEST(Pcapng, ObsoletePacketBlockAndSkippedBlocks) {
  pcapng_builder g;
  g.shb(true);
  g.opaque(4, 16);            // name resolution block before any interface
  g.idb(1, 0, "", 9);
  g.opaque(0x0a, 12);         // decryption secrets block
  g.pb(0, 1234, payload(7, 5), 60);
  g.opaque(5, 20);            // interface statistics block
  g.opaque(0x00000bad, 4);    // custom block
  g.opaque(0x12345678, 0);    // unknown type, empty body
  g.epb(0, 99, payload(3, 6), 3);
  const built_file f = g.finish();
  auto reader = capture_file_reader::from_memory(f.bytes);
  ASSERT_TRUE(reader.ok());
  const auto packets = read_all(*reader);
  ASSERT_TRUE(reader->error().ok()) << reader->error().message();
  ASSERT_EQ(packets.size(), 2U);
  EXPECT_EQ(packets[0], (packet_copy{1234, 0, 60, payload(7, 5)}));
  EXPECT_EQ(packets[1], (packet_copy{99, 0, 3, payload(3, 6)}));
}

// Corruptions of a valid file and the start of the message each must produce.
struct corruption_case {
  const char* name;
  std::function<void(pcapng_builder&)> build;
  std::string expected_prefix;  // "block N at offset X: ..."
};

TEST(Pcapng, CorruptLengthsAreErrorsNamingBlockAndOffset) {
  // The SHB (28 + 16 for the shb_userappl option + 4 for the end of options) is 48 bytes,
  // the IDB with only if_tsresol and the end of options 32: the third block is at 80.
  const auto header = [](pcapng_builder& g) {
    g.shb(false);
    g.idb(1, 0, "", 9);
  };
  const corruption_case cases[] = {
      {"block length below 12",
       [&](pcapng_builder& g) {
         header(g);
         g.b.u32(6);
         g.b.u32(8);
         g.b.u32(8);
       },
       "block 3 at offset 80: block length 8 is below the minimum of 12"},
      {"block length not a multiple of 4",
       [&](pcapng_builder& g) {
         header(g);
         g.epb(0, 1, payload(4, 1), 4);
         g.b.patch32(84, 37);
       },
       "block 3 at offset 80: block length 37 is not a multiple of 4"},
      {"block length beyond the file",
       [&](pcapng_builder& g) {
         header(g);
         g.epb(0, 1, payload(4, 1), 4);
         g.b.patch32(84, 4096);
       },
       "block 3 at offset 80: block length 4096 exceeds the remaining 36 bytes"},
      {"trailing length differs",
       [&](pcapng_builder& g) {
         header(g);
         g.epb(0, 1, payload(4, 1), 4);
         g.b.patch32(80 + 32, 40);
       },
       "block 3 at offset 80: trailing block length 40 differs from the leading length 36"},
      {"EPB captured length exceeds its room",
       [&](pcapng_builder& g) {
         header(g);
         g.epb(0, 1, payload(4, 1), 4);
         g.b.patch32(80 + 20, 70000);
       },
       "block 3 at offset 80: captured length 70000 exceeds the block's room of 4 bytes"},
      {"EPB names an undeclared interface",
       [&](pcapng_builder& g) {
         header(g);
         g.epb(1, 1, payload(4, 1), 4);
       },
       "block 3 at offset 80: packet names interface 1 but the section declares 1"},
      {"EPB shorter than its fixed fields",
       [&](pcapng_builder& g) {
         header(g);
         g.opaque(6, 4);
       },
       "block 3 at offset 80: enhanced packet block of 16 bytes is shorter than its minimum of 32"},
      {"SPB before any interface",
       [&](pcapng_builder& g) {
         g.shb(false);
         g.spb(4, payload(4, 1));
       },
       "block 2 at offset 48: simple packet block before any interface description block"},
      {"IDB option overruns the block",
       [&](pcapng_builder& g) {
         g.shb(false);
         g.idb(1, 0, "eth0");
         g.b.patch16(48 + 18, 255);  // if_name claims 255 bytes
       },
       "block 2 at offset 48: interface option 2 of length 255 at block offset 16 overruns the "
       "block"},
      {"second SHB with a bad byte-order magic",
       [&](pcapng_builder& g) {
         header(g);
         g.shb(false);
         g.b.patch32(80 + 8, 0xdeadbeef);
       },
       "block 3 at offset 80: section header byte-order magic 0xdeadbeef is not 0x1a2b3c4d in "
       "either byte order"},
      {"unsupported major version",
       [&](pcapng_builder& g) {
         header(g);
         g.shb(false);
         g.b.patch16(80 + 12, 2);
       },
       "block 3 at offset 80: pcapng version 2.0 is not supported"},
      {"trailing garbage shorter than a block",
       [&](pcapng_builder& g) {
         header(g);
         g.b.u32(6);
       },
       "block 3 at offset 80: block header truncated: 4 bytes left"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    pcapng_builder g;
    c.build(g);
    const exact_buffer buffer(g.b.bytes, g.b.bytes.size());
    auto reader = capture_file_reader::from_memory(buffer.span());
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    (void)read_all(*reader);
    EXPECT_FALSE(reader->error().ok());
    EXPECT_EQ(reader->error().message().substr(0, c.expected_prefix.size()), c.expected_prefix)
        << reader->error().message();
  }
}

TEST(OpenErrors, NamePathErrnoOrMagic) {
  {
    auto reader = capture_file_reader::open("/nonexistent/x.pcap");
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().code(), error_code::io_error);
    EXPECT_EQ(reader.error().sys_errno(), ENOENT);
    EXPECT_NE(reader.error().message().find("/nonexistent/x.pcap"), std::string::npos);
  }
  {
    auto reader = capture_file_reader::open(ROCELAB_SHARED_DIR "/pcaps");
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().code(), error_code::unsupported);
  }
  {
    char path[] = "/tmp/rocelab-empty-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    auto reader = capture_file_reader::open(path);
    ::unlink(path);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().code(), error_code::malformed_input);
  }
  {
    const std::vector<std::uint8_t> text = {'h', 'e', 'l', 'l', 'o', '\n'};
    auto reader = capture_file_reader::from_memory(text);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().message(), "not a pcap or pcapng file: magic 0x6c6c6568");
  }
  {
    // A compressed capture is named as such, with what to do.
    const std::vector<std::uint8_t> gzip = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0};
    auto reader = capture_file_reader::from_memory(gzip);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().message(),
              "not a pcap or pcapng file: magic 0x00088b1f (gzip-compressed: decompress it into a pipe, "
              "e.g. `zcat FILE | rocelab analyze -`)");
  }
  {
    auto f = make_pcap(false, false, {});
    f.bytes[4] = 3;  // major version 3
    auto reader = capture_file_reader::from_memory(f.bytes);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().code(), error_code::unsupported);
  }
}

}  // namespace
}  // namespace rocelab::captures
