#pragma once
// Helpers shared by the capture tests. Capture files: owned copies of packets, so a test
// can keep what a reader yielded and compare it with what was written; pcap and pcapng
// files assembled byte by byte in either byte order. Dissection: RoCEv2, PFC, PAUSE and
// ERSPAN frames built with frame_builder, and the table row of a dissect() case.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/captures/wire/roce.hpp"

namespace rocelab::captures::test {

struct packet_copy {
  std::int64_t timestamp_ns = 0;
  std::uint32_t interface_id = 0;
  std::uint32_t original_length = 0;
  std::vector<std::uint8_t> bytes;
  bool operator==(const packet_copy&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const packet_copy& p) {
  return os << "{ts " << p.timestamp_ns << ", if " << p.interface_id << ", len "
            << p.original_length << ", caplen " << p.bytes.size() << "}";
}

inline packet_view view_of(const packet_copy& p) {
  return {p.timestamp_ns, p.interface_id, p.original_length, p.bytes};
}

// Every packet the reader yields, to its end (check reader.error() afterwards).
inline std::vector<packet_copy> read_all(capture_file_reader& reader) {
  std::vector<packet_copy> out;
  packet_view view;
  while (reader.next(view)) {
    out.push_back({view.timestamp_ns, view.interface_id, view.original_length,
                   {view.bytes.begin(), view.bytes.end()}});
  }
  return out;
}

// ---- capture files ------------------------------------------------------------

inline const std::string pcaps_dir = ROCELAB_SHARED_DIR "/pcaps/";

inline std::vector<std::uint8_t> read_file(const std::string& path) {
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

inline std::vector<std::uint8_t> payload(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return v;
}

// Packets whose timestamps are whole microseconds, so both pcap magics can carry them.
inline std::vector<packet_copy> sample_packets(int count) {
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

inline built_file make_pcap(bool swapped, bool nano, const std::vector<packet_copy>& packets,
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
inline built_file sample_pcapng(bool swapped) {
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

// ---- dissection ----------------------------------------------------------------

using bytes = std::vector<std::uint8_t>;
namespace op = wire::roce_opcode;

inline dissected_frame run(const bytes& f, link_type link = link_type::ethernet) {
  dissected_frame d;
  d.is_roce = true;  // stale state from a previous frame must not survive
  d.truncated = true;
  d.pfc_quanta[3] = 9;
  dissect(link, f, d);
  return d;
}

inline const wire::mac_address mac_a{0x0C, 0x42, 0xA1, 0xAA, 0x00, 0x01};
inline const wire::mac_address mac_b{0x0C, 0x42, 0xA1, 0xBB, 0x00, 0x02};

inline roce_frame_spec roce(std::uint8_t opcode = op::rc_send_only) {
  roce_frame_spec s;
  s.eth.dst_mac = mac_b;
  s.eth.src_mac = mac_a;
  s.ip.src = ipv4_mapped(10, 0, 0, 1);
  s.ip.dst = ipv4_mapped(10, 0, 0, 2);
  s.ip.dscp = 26;
  s.ip.ecn = wire::ecn_codepoint::ect0;
  s.udp_src_port = 49152;
  s.opcode = opcode;
  s.dest_qp = 0x45;
  s.psn = 0x123456;
  return s;
}

inline const bytes payload_100(100, 0x5A);

inline bytes build(roce_frame_spec s) {
  bytes f;
  EXPECT_GT(append_roce_frame(s, f), 0u);
  return f;
}

inline bytes with_payload(roce_frame_spec s, const bytes& payload = payload_100) {
  s.payload = payload;
  return build(s);
}

inline bytes erspan(std::uint8_t type, const bytes& inner, std::uint8_t frame_type = 0,
             bool platform = false) {
  erspan_spec e;
  e.type = type;
  e.outer_eth.dst_mac = {2, 0, 0, 0, 0, 0xEE};
  e.outer_eth.src_mac = {2, 0, 0, 0, 0, 0xFF};
  e.outer_ip.src = ipv4_mapped(192, 168, 1, 1);
  e.outer_ip.dst = ipv4_mapped(192, 168, 1, 2);
  e.outer_ip.dscp = 8;
  e.outer_ip.ecn = wire::ecn_codepoint::ce;
  e.session_id = 101;
  e.gre_sequence = 5;
  e.frame_type = frame_type;
  e.platform_subheader = platform;
  e.platform_subheader_value = 0x0400000000000000;
  bytes f;
  EXPECT_GT(append_erspan_frame(e, inner, f), 0u);
  return f;
}

inline bytes pfc(std::uint16_t enable, std::array<std::uint16_t, 8> quanta) {
  pfc_frame_spec p;
  p.src_mac = mac_a;
  p.class_enable = enable;
  p.quanta = quanta;
  bytes f;
  EXPECT_EQ(append_pfc_frame(p, f), 60u);
  return f;
}

inline bytes pause(std::uint16_t quanta) {
  pause_frame_spec p;
  p.src_mac = mac_a;
  p.quanta = quanta;
  bytes f;
  EXPECT_EQ(append_pause_frame(p, f), 60u);
  return f;
}

// Replaces the bytes at `at` (used to hand-break an otherwise valid frame).
inline bytes patched(bytes f, std::size_t at, std::initializer_list<std::uint8_t> values) {
  for (auto v : values) f.at(at++) = v;
  return f;
}

// A frame with `tags` 802.1Q tags in front of an IPv4 RoCE packet.
inline bytes tagged(std::size_t tags) {
  bytes inner = with_payload(roce());
  bytes f(inner.begin(), inner.begin() + 12);
  for (std::size_t i = 0; i < tags; ++i) {
    f.insert(f.end(), {0x81, 0x00, static_cast<std::uint8_t>(0x20 | (i >> 8)), static_cast<std::uint8_t>(i + 1)});
  }
  f.insert(f.end(), inner.begin() + 12, inner.end());
  return f;
}

struct dissect_case {
  std::string name;
  std::function<bytes()> make;
  std::function<void(const dissected_frame&)> check;
  link_type link = link_type::ethernet;
};


inline std::array<std::uint8_t, 16> mapped(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return ipv4_mapped(a, b, c, d);
}

// One dissect() table row, checked.
inline void check_case(const dissect_case& c) {
  const bytes f = c.make();
  c.check(run(f, c.link));
}

}  // namespace rocelab::captures::test
