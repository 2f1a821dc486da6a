// capture_file_reader on the shared captures: frame counts, timestamps and lengths as tshark reports them.
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

}  // namespace
}  // namespace rocelab::captures
