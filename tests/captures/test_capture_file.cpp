#include "rocelab/captures/capture_file.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace rocelab::captures {
namespace {

const std::string pcaps_dir = ROCELAB_SHARED_DIR "/pcaps/";

using test::packet_copy;
using test::read_all;

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes integers in host order or, when `swapped`, in the other one, so every test runs
// both byte orders whatever the host is.
struct byte_builder {
  bool swapped = false;
  std::vector<std::uint8_t> bytes;

  void u8(std::uint8_t v) { bytes.push_back(v); }
  void u16(std::uint16_t v) {
    if (swapped) v = __builtin_bswap16(v);
    append(&v, sizeof v);
  }
  void u32(std::uint32_t v) {
    if (swapped) v = __builtin_bswap32(v);
    append(&v, sizeof v);
  }
  void u64(std::uint64_t v) {
    if (swapped) v = __builtin_bswap64(v);
    append(&v, sizeof v);
  }
  void append(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void pad4() {
    while (bytes.size() % 4 != 0) bytes.push_back(0);
  }
  void patch16(std::size_t at, std::uint16_t v) {
    if (swapped) v = __builtin_bswap16(v);
    std::memcpy(bytes.data() + at, &v, sizeof v);
  }
  void patch32(std::size_t at, std::uint32_t v) {
    if (swapped) v = __builtin_bswap32(v);
    std::memcpy(bytes.data() + at, &v, sizeof v);
  }
};

std::vector<std::uint8_t> payload(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return v;
}

// Packets whose timestamps are whole microseconds, so both pcap magics can carry them.
std::vector<packet_copy> sample_packets(int count) {
  std::vector<packet_copy> out;
  for (int i = 0; i < count; ++i) {
    packet_copy p;
    p.timestamp_ns = 1'700'000'000LL * 1'000'000'000 + i * 1'234'567'000LL;
    p.bytes = payload(static_cast<std::size_t>(i * 13 % 71), static_cast<std::uint8_t>(i));
    p.original_length = static_cast<std::uint32_t>(p.bytes.size() + i % 3);
    out.push_back(std::move(p));
  }
  return out;
}

struct built_file {
  std::vector<std::uint8_t> bytes;
  std::vector<std::size_t> boundaries;  // offsets where a clean end is allowed
  std::size_t header_end = 0;           // shorter prefixes fail to open
};

built_file make_pcap(bool swapped, bool nano, const std::vector<packet_copy>& packets,
                     std::uint32_t snaplen = 65535, std::uint32_t link_field = 1) {
  byte_builder b{swapped, {}};
  b.u32(nano ? 0xa1b23c4d : 0xa1b2c3d4);
  b.u16(2);
  b.u16(4);
  b.u32(0);
  b.u32(0);
  b.u32(snaplen);
  b.u32(link_field);
  built_file f;
  f.header_end = b.bytes.size();
  f.boundaries.push_back(b.bytes.size());
  for (const auto& p : packets) {
    const std::int64_t frac = p.timestamp_ns % 1'000'000'000;
    b.u32(static_cast<std::uint32_t>(p.timestamp_ns / 1'000'000'000));
    b.u32(static_cast<std::uint32_t>(nano ? frac : frac / 1000));
    b.u32(static_cast<std::uint32_t>(p.bytes.size()));
    b.u32(p.original_length);
    b.append(p.bytes.data(), p.bytes.size());
    f.boundaries.push_back(b.bytes.size());
  }
  f.bytes = std::move(b.bytes);
  return f;
}

// pcapng assembled block by block; `swapped` follows the latest section header.
struct pcapng_builder {
  byte_builder b;
  std::vector<std::size_t> boundaries;

  std::size_t begin(std::uint32_t type) {
    const std::size_t start = b.bytes.size();
    b.u32(type);
    b.u32(0);
    return start;
  }
  void end(std::size_t start) {
    b.pad4();
    const auto length = static_cast<std::uint32_t>(b.bytes.size() - start + 4);
    b.u32(length);
    b.patch32(start + 4, length);
    boundaries.push_back(b.bytes.size());
  }
  void option(std::uint16_t code, const void* value, std::size_t n) {
    b.u16(code);
    b.u16(static_cast<std::uint16_t>(n));
    b.append(value, n);
    b.pad4();
  }
  void shb(bool swapped) {
    b.swapped = swapped;
    const auto s = begin(0x0a0d0d0a);
    b.u32(0x1a2b3c4d);
    b.u16(1);
    b.u16(0);
    b.u64(~std::uint64_t{0});
    const std::string app = "rocelab test";
    option(4, app.data(), app.size());
    option(0, nullptr, 0);
    end(s);
  }
  // tsresol -1 leaves the option out (microseconds by default).
  void idb(std::uint16_t link, std::uint32_t snaplen, const std::string& name = {},
           int tsresol = -1, const std::string& description = {},
           std::optional<std::int64_t> tsoffset_s = {}) {
    const auto s = begin(1);
    b.u16(link);
    b.u16(0);
    b.u32(snaplen);
    if (!name.empty()) option(2, name.data(), name.size());
    if (!description.empty()) option(3, description.data(), description.size());
    if (tsresol >= 0) {
      const auto r = static_cast<std::uint8_t>(tsresol);
      option(9, &r, 1);
    }
    if (tsoffset_s) {
      b.u16(14);
      b.u16(8);
      b.u64(static_cast<std::uint64_t>(*tsoffset_s));
    }
    option(0, nullptr, 0);
    end(s);
  }
  void epb(std::uint32_t interface, std::uint64_t units, const std::vector<std::uint8_t>& data,
           std::uint32_t original) {
    const auto s = begin(6);
    b.u32(interface);
    b.u32(static_cast<std::uint32_t>(units >> 32));
    b.u32(static_cast<std::uint32_t>(units));
    b.u32(static_cast<std::uint32_t>(data.size()));
    b.u32(original);
    b.append(data.data(), data.size());
    end(s);
  }
  void spb(std::uint32_t original, const std::vector<std::uint8_t>& data) {
    const auto s = begin(3);
    b.u32(original);
    b.append(data.data(), data.size());
    end(s);
  }
  void pb(std::uint16_t interface, std::uint64_t units, const std::vector<std::uint8_t>& data,
          std::uint32_t original) {
    const auto s = begin(2);
    b.u16(interface);
    b.u16(0);  // drops
    b.u32(static_cast<std::uint32_t>(units >> 32));
    b.u32(static_cast<std::uint32_t>(units));
    b.u32(static_cast<std::uint32_t>(data.size()));
    b.u32(original);
    b.append(data.data(), data.size());
    end(s);
  }
  void opaque(std::uint32_t type, std::size_t body_bytes) {
    const auto s = begin(type);
    for (std::size_t i = 0; i < body_bytes; ++i) b.u8(0x5a);
    end(s);
  }
  built_file finish() const {
    built_file f{b.bytes, boundaries, boundaries.empty() ? 0 : boundaries.front()};
    return f;
  }
};

// A pcapng file exercising most block kinds, in one byte order.
built_file sample_pcapng(bool swapped) {
  pcapng_builder g;
  g.shb(swapped);
  g.idb(1, 0, "eth0", 9);
  g.idb(1, 128, "eth1", -1, "second port");
  const auto packets = sample_packets(6);
  for (std::size_t i = 0; i < packets.size(); ++i) {
    g.epb(static_cast<std::uint32_t>(i % 2), 1'000'000 + i, packets[i].bytes,
          packets[i].original_length);
  }
  g.opaque(5, 20);  // ISB
  g.spb(33, payload(33, 9));
  g.pb(1, 77, payload(5, 3), 5);
  g.opaque(0x40000bad, 8);  // custom block
  return g.finish();
}

// Copies into an allocation of exactly `n` bytes so AddressSanitizer flags any read
// beyond the end (a std::vector's spare capacity would hide it).
struct exact_buffer {
  std::unique_ptr<std::uint8_t[]> data;
  std::size_t size;
  exact_buffer(const std::vector<std::uint8_t>& from, std::size_t n)
      : data(new std::uint8_t[n == 0 ? 1 : n]), size(n) {
    if (n != 0) std::memcpy(data.get(), from.data(), n);
  }
  [[nodiscard]] std::span<const std::uint8_t> span() const { return {data.get(), size}; }
};

// ---------------------------------------------------------------------------------------
// The shared captures, counts from `tshark -r FILE -T fields -e frame.number | wc -l`.

struct shared_case {
  const char* file;
  std::size_t frames;
  capture_format format;
  link_type link;
};

const shared_case shared_cases[] = {
    {"ecn-ce-tcp_tcp-ecn-sample.pcap", 479, capture_format::pcap, link_type::ethernet},
    {"ecn-ect1-tcp_tcpdump-accecn-handshake.pcap", 6, capture_format::pcap, link_type::ethernet},
    {"erspan-typeII-vxlan_arkime-gre-erspan-vxlan.pcap", 7, capture_format::pcap,
     link_type::ethernet},
    {"erspan-typeIII-dot1q_zeek-gre-erspan3-dot1q.pcap", 2, capture_format::pcap,
     link_type::ethernet},
    {"erspan-typeIII-ft7_tcpdump-erspan-type-iii-ft-7.pcap", 58, capture_format::pcap,
     link_type::ethernet},
    {"erspan-typeIII-pb_tcpdump-erspan-type-iii-pb-1.pcap", 1, capture_format::pcap,
     link_type::raw},
    {"erspan-typeIII_tcpdump-erspan-type-iii-ft-0.pcap", 9, capture_format::pcap,
     link_type::ethernet},
    {"erspan-typeII_tcpdump-erspan-type-ii-3.pcap", 108, capture_format::pcap,
     link_type::ethernet},
    {"erspan-typeI_tcpdump-erspan-type-i-4.pcap", 119, capture_format::pcap, link_type::ethernet},
    {"gre-teb-mirror-not-erspan_zeek-erspan.pcap", 287, capture_format::pcap,
     link_type::ethernet},
    {"pause-8023x-ax88772_netdev-hexdump.pcap", 2, capture_format::pcap, link_type::ethernet},
    {"pfc-pause_handcrafted.pcap", 10, capture_format::pcap, link_type::ethernet},
    {"rocev1-rc-write-ack_scapy-hexdump.pcap", 2, capture_format::pcap, link_type::ethernet},
    {"rocev2-cnp-connectx4lx_scapy-hexdump.pcap", 1, capture_format::pcap, link_type::ethernet},
    {"rocev2-rc-send-ack_oferby-proxy.pcap", 123, capture_format::pcap, link_type::ethernet},
    {"rocev2-vlan-ecn-cnp_handcrafted.pcap", 9, capture_format::pcap, link_type::ethernet},
    {"vlan-pcp5_zeek-http-vlan-0.pcap", 14, capture_format::pcap, link_type::ethernet},
    {"vlan-qinq-pcp-dei_zeek.pcapng", 9, capture_format::pcapng, link_type::ethernet},
};

TEST(SharedCaptures, OpenAndYieldTsharkFrameCountsThenEndCleanly) {
  for (const auto& c : shared_cases) {
    SCOPED_TRACE(c.file);
    auto reader = capture_file_reader::open(pcaps_dir + c.file);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_EQ(reader->format(), c.format);
    ASSERT_FALSE(reader->interfaces().empty());
    EXPECT_EQ(reader->interfaces()[0].link, c.link);
    EXPECT_EQ(read_all(*reader).size(), c.frames);
    EXPECT_TRUE(reader->error().ok()) << reader->error().message();
  }
}

TEST(SharedCaptures, HostileErspanFileYieldsItsOnePacketWithoutTrustingTheSnaplen) {
  auto reader = capture_file_reader::open(pcaps_dir +
                                          "erspan-typeIII-pb_tcpdump-erspan-type-iii-pb-1.pcap");
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  EXPECT_EQ(reader->interfaces()[0].snaplen, 1745420288U);
  const auto packets = read_all(*reader);
  ASSERT_EQ(packets.size(), 1U);
  EXPECT_EQ(packets[0].bytes.size(), 79U);
  EXPECT_EQ(packets[0].original_length, 188109U);
  EXPECT_EQ(packets[0].timestamp_ns, 67109118'554240000LL);
  EXPECT_TRUE(reader->error().ok());
}

bool have_tshark() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

// (interface, time, wire length, captured length) per frame, as tshark sees them.
struct tshark_frame {
  std::uint32_t interface_id;
  std::int64_t timestamp_ns;
  std::uint32_t length;
  std::uint32_t caplen;
  bool operator==(const tshark_frame&) const = default;
};

std::ostream& operator<<(std::ostream& os, const tshark_frame& f) {
  return os << "{if " << f.interface_id << ", ts " << f.timestamp_ns << ", len " << f.length
            << ", caplen " << f.caplen << "}";
}

std::int64_t epoch_text_to_ns(const std::string& text) {
  const auto dot = text.find('.');
  std::int64_t ns = std::stoll(text.substr(0, dot)) * 1'000'000'000;
  if (dot != std::string::npos) {
    std::string frac = text.substr(dot + 1, 9);
    frac.resize(9, '0');
    ns += std::stoll(frac);
  }
  return ns;
}

std::vector<tshark_frame> tshark_frames(const std::string& path) {
  const std::string command = "tshark -r '" + path +
                              "' -T fields -e frame.interface_id -e frame.time_epoch "
                              "-e frame.len -e frame.cap_len 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::vector<tshark_frame> out;
  if (!pipe) return out;
  std::string text;
  char chunk[4096];
  while (std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe.get())) text.append(chunk, n);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream cols(line);
    std::string col;
    while (std::getline(cols, col, '\t')) fields.push_back(col);
    fields.resize(4);
    out.push_back({fields[0].empty() ? 0U : static_cast<std::uint32_t>(std::stoul(fields[0])),
                   epoch_text_to_ns(fields[1]), static_cast<std::uint32_t>(std::stoul(fields[2])),
                   static_cast<std::uint32_t>(std::stoul(fields[3]))});
  }
  return out;
}

TEST(SharedCaptures, TimestampsAndLengthsMatchTshark) {
  if (!have_tshark()) GTEST_SKIP() << "tshark is not installed";
  for (const auto& c : shared_cases) {
    SCOPED_TRACE(c.file);
    auto reader = capture_file_reader::open(pcaps_dir + c.file);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    std::vector<tshark_frame> ours;
    for (const auto& p : read_all(*reader)) {
      ours.push_back({p.interface_id, p.timestamp_ns, p.original_length,
                      static_cast<std::uint32_t>(p.bytes.size())});
    }
    EXPECT_EQ(ours, tshark_frames(pcaps_dir + c.file));
  }
}

// ---------------------------------------------------------------------------------------
// Classic pcap.

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

// ---------------------------------------------------------------------------------------
// pcapng.

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
    auto f = make_pcap(false, false, {});
    f.bytes[4] = 3;  // major version 3
    auto reader = capture_file_reader::from_memory(f.bytes);
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().code(), error_code::unsupported);
  }
}

// ---------------------------------------------------------------------------------------
// Truncation and corruption: never a crash, a hang or a read past the end.

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
