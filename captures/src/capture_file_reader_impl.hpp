#pragma once
// Private to captures/: the capture file reader's state (capture_file_reader::impl) and
// its per-packet path, shared by the reader's files: capture_file.cpp (opening, next())
// and capture_file_sections.cpp (the file header, pcapng section headers and interface
// descriptions). The per-packet decoders stay here, defined in the struct, so that they
// inline into next(); what runs once per file or section is declared here and defined
// in capture_file_sections.cpp.
//
// Only those two files include this header: it brings the pcapng codes and the decoding
// helpers below into rocelab::captures, as the reader's code names them unqualified.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "pcapng_format.hpp"
#include "posix_file.hpp"
#include "rocelab/captures/capture_file.hpp"

namespace rocelab::captures::reader_decoding {

using namespace pcapng;

// Both spellings of the pcap magic as read in host order decide the byte order.
constexpr std::uint32_t pcap_magic_us = 0xa1b2c3d4;
constexpr std::uint32_t pcap_magic_ns = 0xa1b23c4d;
constexpr std::size_t pcap_file_header_bytes = 24;
constexpr std::size_t pcap_record_header_bytes = 16;
// Only the low 16 bits name the link type; the upper bits carry the FCS length and
// flags (draft-ietf-opsawg-pcap, "LinkType and additional information").
constexpr std::uint32_t pcap_link_type_mask = 0xffff;

// Minimum total lengths: type, length, body, trailing length.
constexpr std::size_t block_min_bytes = 12;
constexpr std::size_t shb_min_bytes = 28;  // + magic, versions, section length
constexpr std::size_t idb_min_bytes = 20;  // + link type, reserved, snaplen
constexpr std::size_t epb_min_bytes = 32;  // + interface, ts high, ts low, caplen, len
constexpr std::size_t pb_min_bytes = 32;   // + interface(16), drops(16), ts, caplen, len
constexpr std::size_t spb_min_bytes = 16;  // + original length

constexpr std::int64_t ns_per_s = 1'000'000'000;

template <bool swapped>
inline std::uint16_t load16(const std::uint8_t* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (swapped) v = __builtin_bswap16(v);
  return v;
}

template <bool swapped>
inline std::uint32_t load32(const std::uint8_t* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (swapped) v = __builtin_bswap32(v);
  return v;
}

template <bool swapped>
inline std::uint64_t load64(const std::uint8_t* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (swapped) v = __builtin_bswap64(v);
  return v;
}

inline std::string hex32(std::uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08" PRIx32, v);
  return text;
}

__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;

// How one pcapng interface's timestamp units become nanoseconds:
//   ns = ((units * mul) >> shift) / div + offset_ns
// 10^-v with v <= 9 is a multiply, finer powers of ten a divide, 2^-k a multiply by 10^9
// and a shift; 128-bit arithmetic so no product overflows, then a clamp to int64 (which
// ends in 2262) instead of undefined behaviour on hostile timestamps.
struct timestamp_scale {
  std::uint64_t mul = 1;
  std::uint64_t div = 1;
  unsigned shift = 0;
  int128 offset_ns = 0;

  [[nodiscard]] [[gnu::always_inline]] std::int64_t to_ns(std::uint64_t units) const noexcept {
    // Whole-nanosecond units (10^-9 and 10^-6, the common ones) with no offset need
    // neither the shift nor the 128-bit divide: keep those off the per-packet path.
    if (shift == 0 && div == 1 && offset_ns == 0) {
      std::uint64_t product;
      if (!__builtin_mul_overflow(units, mul, &product) &&
          product <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return static_cast<std::int64_t>(product);
    }
    uint128 v = static_cast<uint128>(units) * mul;
    v >>= shift;
    if (div != 1) v /= div;
    const int128 ns = static_cast<int128>(v) + offset_ns;
    constexpr int128 lo = std::numeric_limits<std::int64_t>::min();
    constexpr int128 hi = std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(std::clamp(ns, lo, hi));
  }
};

}  // namespace rocelab::captures::reader_decoding

namespace rocelab::captures {

using namespace reader_decoding;

struct capture_file_reader::impl {
  // The format and byte order pick the decoder once per section, not per packet.
  enum class mode : std::uint8_t { pcap_native, pcap_swapped, pcapng_native, pcapng_swapped, done };
  enum class step : std::uint8_t { packet, stop, again };

  detail::mapped_region mapping;  // empty when reading caller memory or streaming
  // The bytes at hand: the whole file (mapped or caller memory), or for a streamed file
  // a window of it, `window` read with read(2), whose first byte is at file offset
  // window_offset. Every record is made whole in the window (ensure()) before it is read.
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t pos = 0;          // offset of the next record or block in `data`
  detail::unique_fd file;       // streamed only
  std::vector<std::uint8_t> window;
  std::uint64_t window_offset = 0;
  // The file's size; for a stream whose size is not known up front (a pipe) the
  // unknown_size sentinel until read(2) meets its end.
  std::uint64_t file_size = 0;
  std::uint64_t consumed = 0;   // records (pcap) or blocks (pcapng) read so far
  mode state = mode::done;
  capture_format format = capture_format::pcap;
  std::int64_t pcap_fraction_ns = 1000;  // 1000 for the microsecond magic, 1 for ns
  std::vector<interface_info> interfaces;
  std::vector<timestamp_scale> scales;  // pcapng: parallel to `interfaces`
  // pcapng, parallel to `interfaces`: the multiplier of an interface whose units become
  // nanoseconds by a multiply alone, 0 for the others (next_enhanced_packet's test).
  std::vector<std::uint64_t> plain_mul;
  std::size_t section_first_interface = 0;  // global index of this section's interface 0
  status error;

  // Ends the read with "record N at offset X: what" (pcap) or "block N ..." (pcapng),
  // N counting from 1 and X the offset of the record or block that failed.
  [[gnu::cold]] [[gnu::noinline]] void fail(std::string what,
                                            error_code code = error_code::malformed_input) {
    std::string message = format == capture_format::pcap ? "record " : "block ";
    message += std::to_string(consumed + 1);
    message += " at offset ";
    message += std::to_string(window_offset + pos);
    message += ": ";
    message += what;
    error = status(code, std::move(message));
    state = mode::done;
  }

  [[nodiscard]] std::size_t section_interfaces() const noexcept {
    return interfaces.size() - section_first_interface;
  }

  static constexpr std::uint64_t unknown_size = std::uint64_t{1} << 62;

  // Bytes of the file from `pos` to its end (for a mapped file or memory, size - pos).
  // For a stream of unknown size an upper bound until ensure() meets the end: callers
  // check a length against it once more after ensure() has made that length available.
  [[nodiscard]] std::size_t file_remaining() const noexcept {
    return static_cast<std::size_t>(file_size - window_offset - pos);
  }

  // Makes the next min(n, file_remaining()) bytes from `pos` available at data + pos,
  // sliding and refilling a streamed window (which moves `data`: pointers into it must be
  // taken again). False after a read error, which then ends the read.
  bool ensure(std::size_t n) {
    if (size - pos >= n || !file.valid()) [[likely]] return true;
    n = std::min(n, file_remaining());
    if (size - pos >= n) return true;
    return refill(n);
  }

  [[gnu::noinline]] bool refill(std::size_t n) {
    const std::size_t kept = size - pos;
    std::memmove(window.data(), window.data() + pos, kept);
    window_offset += pos;
    pos = 0;
    size = kept;
    if (n > window.size()) window.resize(n);
    data = window.data();
    // Fill the window (or to the end of the file), at least n bytes.
    while (size < window.size() && window_offset + size < file_size) {
      const ssize_t got = ::read(file.get(), window.data() + size, window.size() - size);
      if (got < 0 && errno == EINTR) continue;
      if (got == 0 && file_size == unknown_size) {
        file_size = window_offset + size;
        break;
      }
      if (got <= 0) {
        fail(got < 0 ? "reading the file: " + std::string(std::strerror(errno))
                     : "the file ended before its size (" + std::to_string(file_size) + " bytes)",
             error_code::io_error);
        return false;
      }
      size += static_cast<std::size_t>(got);
    }
    return true;
  }

  template <bool swapped>
  bool next_pcap(packet_view& out) {
    if (!ensure(pcap_record_header_bytes)) [[unlikely]] return false;
    const std::size_t remaining = file_remaining();
    if (remaining < pcap_record_header_bytes) [[unlikely]] {
      return end_pcap(remaining);
    }
    const std::uint8_t* p = data + pos;
    prefetch_ahead();
    std::uint32_t h[4];  // ts seconds, ts fraction, captured length, original length
    std::memcpy(h, p, sizeof h);
    if constexpr (swapped) {
      h[0] = __builtin_bswap32(h[0]);
      h[1] = __builtin_bswap32(h[1]);
      h[2] = __builtin_bswap32(h[2]);
      h[3] = __builtin_bswap32(h[3]);
    }
    if (h[2] > remaining - pcap_record_header_bytes) [[unlikely]] {
      return caplen_exceeds(h[2], remaining - pcap_record_header_bytes);
    }
    if (!ensure(pcap_record_header_bytes + h[2])) [[unlikely]] return false;
    if (h[2] > file_remaining() - pcap_record_header_bytes) [[unlikely]] {
      return caplen_exceeds(h[2], file_remaining() - pcap_record_header_bytes);
    }
    p = data + pos;
    // uint32 seconds * 1e9 + uint32 * 1000 stays below 2^63: no overflow possible.
    out.timestamp_ns = static_cast<std::int64_t>(h[0]) * ns_per_s +
                       static_cast<std::int64_t>(h[1]) * pcap_fraction_ns;
    out.interface_id = 0;
    out.original_length = h[3];
    out.bytes = {p + pcap_record_header_bytes, h[2]};
    pos += pcap_record_header_bytes + h[2];
    ++consumed;
    return true;
  }

  [[gnu::cold]] [[gnu::noinline]] bool end_pcap(std::size_t remaining) {
    if (remaining != 0) {
      fail("record header truncated: " + std::to_string(remaining) + " of " +
           std::to_string(pcap_record_header_bytes) + " bytes");
    }
    state = mode::done;
    return false;
  }

  [[gnu::cold]] [[gnu::noinline]] bool caplen_exceeds(std::uint32_t caplen, std::size_t room) {
    fail("captured length " + std::to_string(caplen) + " exceeds the remaining " +
         std::to_string(room) + " bytes");
    return false;
  }

  // Asks for the bytes prefetch_ahead_bytes past `pos`: the hardware prefetcher stops at
  // each 4 KiB page, and in a mapped file the next page also costs a TLB walk, so without
  // this the first touch of each record waits on memory. Three lines per record cover a
  // record of a 128-byte snap (160 bytes) as the reader advances. Clamped to the bytes at
  // hand so no address past them is formed.
  [[gnu::always_inline]] void prefetch_ahead() const noexcept {
    constexpr std::size_t prefetch_ahead_bytes = 2048;
    constexpr std::size_t lines_bytes = 3 * 64;
    if (size < lines_bytes) [[unlikely]] return;
    const std::uint8_t* p = data + std::min(pos + prefetch_ahead_bytes, size - lines_bytes);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
  }

  // The block the reader meets almost always: a well-formed enhanced packet block in a
  // native-order section, on an interface whose timestamps are whole nanoseconds or
  // microseconds. Anything else (other blocks, a length to complain about) returns false
  // without consuming, and next_pcapng() reads the same block the general way.
  [[gnu::always_inline]] bool next_enhanced_packet(packet_view& out) noexcept {
    const std::size_t remaining = size - pos;  // in the window: a block past it goes the general way
    if (remaining < epb_min_bytes) [[unlikely]] return false;
    const std::uint8_t* b = data + pos;
    prefetch_ahead();
    std::uint32_t h[7];  // type, length, interface, ts high, ts low, captured, original
    std::memcpy(h, b, sizeof h);
    const std::uint32_t length = h[1];
    if (h[0] != block_enhanced_packet || length < epb_min_bytes || length % 4 != 0 || length > remaining)
      [[unlikely]] return false;
    const std::size_t id = section_first_interface + h[2];
    if (load32<false>(b + length - 4) != length || id >= plain_mul.size() || h[5] > length - epb_min_bytes)
      [[unlikely]] return false;
    const std::uint64_t mul = plain_mul[id];
    std::uint64_t ns;
    if (mul == 0 || __builtin_mul_overflow((static_cast<std::uint64_t>(h[3]) << 32) | h[4], mul, &ns) ||
        ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) [[unlikely]]
      return false;
    out.timestamp_ns = static_cast<std::int64_t>(ns);
    out.interface_id = static_cast<std::uint32_t>(id);
    out.original_length = h[6];
    out.bytes = {b + 28, h[5]};
    pos += length;
    ++consumed;
    return true;
  }

  template <bool swapped>
  step next_pcapng(packet_view& out) {
    for (;;) {
      if (!ensure(block_min_bytes)) [[unlikely]] return step::stop;
      const std::size_t remaining = file_remaining();
      if (remaining < block_min_bytes) [[unlikely]] {
        if (remaining == 0) {
          state = mode::done;
        } else {
          fail("block header truncated: " + std::to_string(remaining) +
               " bytes left, a block needs at least " + std::to_string(block_min_bytes));
        }
        return step::stop;
      }
      const std::uint8_t* b = data + pos;
      const std::uint32_t type = load32<swapped>(b);
      // A new section may switch the byte order: hand back to the dispatcher.
      if (type == block_section_header) [[unlikely]] {
        return read_section_header() ? step::again : step::stop;
      }
      const std::uint32_t length = load32<swapped>(b + 4);
      if (length < block_min_bytes || length % 4 != 0 || length > remaining) [[unlikely]] {
        bad_block_length(length, remaining);
        return step::stop;
      }
      if (!ensure(length)) [[unlikely]] return step::stop;
      if (length > file_remaining()) [[unlikely]] {
        bad_block_length(length, file_remaining());
        return step::stop;
      }
      b = data + pos;
      if (load32<swapped>(b + length - 4) != length) [[unlikely]] {
        fail("trailing block length " + std::to_string(load32<swapped>(b + length - 4)) +
             " differs from the leading length " + std::to_string(length));
        return step::stop;
      }
      switch (type) {
        case block_enhanced_packet: {
          if (length < epb_min_bytes) [[unlikely]] {
            too_short("enhanced packet", length, epb_min_bytes);
            return step::stop;
          }
          std::uint32_t f[5];  // interface, ts high, ts low, captured length, original
          std::memcpy(f, b + 8, sizeof f);
          if constexpr (swapped) {
            for (auto& v : f) v = __builtin_bswap32(v);
          }
          if (!packet_fits(f[0], f[3], length - epb_min_bytes)) [[unlikely]] return step::stop;
          const std::size_t id = section_first_interface + f[0];
          out.timestamp_ns =
              scales[id].to_ns((static_cast<std::uint64_t>(f[1]) << 32) | f[2]);
          out.interface_id = static_cast<std::uint32_t>(id);
          out.original_length = f[4];
          out.bytes = {b + 28, f[3]};
          pos += length;
          ++consumed;
          return step::packet;
        }
        case block_simple_packet: {
          if (length < spb_min_bytes) [[unlikely]] {
            too_short("simple packet", length, spb_min_bytes);
            return step::stop;
          }
          if (section_interfaces() == 0) [[unlikely]] {
            fail("simple packet block before any interface description block");
            return step::stop;
          }
          // No captured length on the wire: the spec derives it from the original
          // length, the interface's snap length (0 = unlimited) and the block's room.
          const std::uint32_t original = load32<swapped>(b + 8);
          std::uint32_t caplen = std::min<std::uint32_t>(original, length - spb_min_bytes);
          const std::uint32_t snaplen = interfaces[section_first_interface].snaplen;
          if (snaplen != 0) caplen = std::min(caplen, snaplen);
          out.timestamp_ns = 0;  // the SPB carries none
          out.interface_id = static_cast<std::uint32_t>(section_first_interface);
          out.original_length = original;
          out.bytes = {b + 12, caplen};
          pos += length;
          ++consumed;
          return step::packet;
        }
        case block_packet_obsolete: {
          if (length < pb_min_bytes) [[unlikely]] {
            too_short("packet", length, pb_min_bytes);
            return step::stop;
          }
          const std::uint32_t interface = load16<swapped>(b + 8);
          const std::uint32_t caplen = load32<swapped>(b + 20);
          if (!packet_fits(interface, caplen, length - pb_min_bytes)) return step::stop;
          const std::size_t id = section_first_interface + interface;
          const std::uint64_t units =
              (static_cast<std::uint64_t>(load32<swapped>(b + 12)) << 32) |
              load32<swapped>(b + 16);
          out.timestamp_ns = scales[id].to_ns(units);
          out.interface_id = static_cast<std::uint32_t>(id);
          out.original_length = load32<swapped>(b + 24);
          out.bytes = {b + 28, caplen};
          pos += length;
          ++consumed;
          return step::packet;
        }
        case block_interface_description:
          if (!read_interface<swapped>(b, length)) return step::stop;
          break;
        default:
          break;  // NRB, ISB, DSB, custom and unknown blocks: skipped by their length
      }
      pos += length;
      ++consumed;
    }
  }

  [[gnu::cold]] [[gnu::noinline]] void bad_block_length(std::uint32_t length,
                                                        std::size_t remaining) {
    if (length < block_min_bytes) {
      fail("block length " + std::to_string(length) + " is below the minimum of " +
           std::to_string(block_min_bytes));
    } else if (length % 4 != 0) {
      fail("block length " + std::to_string(length) + " is not a multiple of 4");
    } else {
      fail("block length " + std::to_string(length) + " exceeds the remaining " +
           std::to_string(remaining) + " bytes");
    }
  }

  [[gnu::cold]] [[gnu::noinline]] void too_short(const char* what, std::uint32_t length,
                                                 std::size_t minimum) {
    fail(std::string(what) + " block of " + std::to_string(length) +
         " bytes is shorter than its minimum of " + std::to_string(minimum));
  }

  [[gnu::always_inline]] bool packet_fits(std::uint32_t interface, std::uint32_t caplen, std::size_t room) {
    if (interface < section_interfaces() && caplen <= room) [[likely]] return true;
    return packet_does_not_fit(interface, caplen, room);
  }

  [[gnu::cold]] [[gnu::noinline]] bool packet_does_not_fit(std::uint32_t interface, std::uint32_t caplen,
                                                           std::size_t room) {
    if (interface >= section_interfaces()) [[unlikely]] {
      fail("packet names interface " + std::to_string(interface) + " but the section declares " +
           std::to_string(section_interfaces()));
      return false;
    }
    if (caplen > room) [[unlikely]] {
      fail("captured length " + std::to_string(caplen) + " exceeds the block's room of " +
           std::to_string(room) + " bytes");
      return false;
    }
    return true;
  }

  // Reads the SHB at `pos`, which sets the byte order of everything up to the next one.
  bool read_section_header();
  template <bool swapped>
  bool read_section_header_as(const std::uint8_t* b, std::size_t remaining);
  // An interface description block at `b`: its link type, snap length, name and timestamp
  // unit appended to `interfaces`. Instantiated for both byte orders.
  template <bool swapped>
  bool read_interface(const std::uint8_t* b, std::uint32_t length);
  // if_tsresol: top bit clear means 10^-v seconds, set means 2^-v.
  bool set_resolution(std::uint8_t resolution, interface_info& info, timestamp_scale& scale);
  // Reads the IDBs that directly follow the first SHB, so interfaces() is filled when
  // open() returns, as it is for pcap. A malformed one is left for next() to report.
  template <bool swapped>
  void read_leading_interfaces();
  // Detects the format from the first four bytes and reads the file header or the
  // first section header; failures here fail open() / from_memory().
  status start();
  template <bool swapped>
  status start_pcap();
};

}  // namespace rocelab::captures
