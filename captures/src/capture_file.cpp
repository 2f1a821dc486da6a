// Capture file reader: classic pcap and pcapng over one read-only mapping.
//
// Formats: draft-ietf-opsawg-pcap (file header, record header) and
// draft-ietf-opsawg-pcapng (SHB, IDB, EPB, SPB, the obsolete PB; every other block is
// skipped by its length). Decoding is memcpy plus a byte swap chosen by template
// parameter, so the per-packet path has no branch on byte order, no virtual call and no
// allocation. Every length taken from the file is compared with the bytes that remain
// before it is used.

#include "rocelab/captures/capture_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <utility>

#include "pcapng_format.hpp"
#include "posix_file.hpp"

namespace rocelab::captures {
namespace {

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


std::string hex32(std::uint32_t v) {
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

// " (gzip-compressed: ...)" when the first bytes are a compressor's magic, so the
// message says what to do; empty otherwise.
std::string compressed_hint(const std::uint8_t* p, std::size_t n) {
  const auto starts = [&](std::initializer_list<std::uint8_t> magic) {
    return n >= magic.size() && std::equal(magic.begin(), magic.end(), p);
  };
  const char* kind = starts({0x1f, 0x8b})                   ? "gzip"
                     : starts({0x28, 0xb5, 0x2f, 0xfd})       ? "zstd"
                     : starts({0xfd, 0x37, 0x7a, 0x58, 0x5a}) ? "xz"
                     : starts({0x42, 0x5a, 0x68})             ? "bzip2"
                                                              : nullptr;
  if (kind == nullptr) return {};
  return std::string(" (") + kind + "-compressed: decompress it into a pipe, e.g. `zcat FILE | rocelab analyze -`)";
}

std::int64_t pow10(unsigned e) noexcept {
  std::int64_t v = 1;
  while (e-- > 0) v *= 10;
  return v;
}

}  // namespace

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
  bool read_section_header() {
    if (!ensure(shb_min_bytes)) return false;
    const std::size_t remaining = file_remaining();
    if (remaining < shb_min_bytes) {
      fail("section header block truncated: " + std::to_string(remaining) + " of at least " +
           std::to_string(shb_min_bytes) + " bytes");
      return false;
    }
    const std::uint8_t* b = data + pos;
    const std::uint32_t magic = load32<false>(b + 8);
    if (magic == byte_order_magic) return read_section_header_as<false>(b, remaining);
    if (magic == __builtin_bswap32(byte_order_magic)) {
      return read_section_header_as<true>(b, remaining);
    }
    fail("section header byte-order magic " + hex32(magic) + " is not " +
         hex32(byte_order_magic) + " in either byte order");
    return false;
  }

  template <bool swapped>
  bool read_section_header_as(const std::uint8_t* b, std::size_t remaining) {
    const std::uint32_t length = load32<swapped>(b + 4);
    if (length < shb_min_bytes || length % 4 != 0 || length > remaining) {
      if (length < shb_min_bytes) {
        too_short("section header", length, shb_min_bytes);
      } else {
        bad_block_length(length, remaining);
      }
      return false;
    }
    if (!ensure(length)) return false;
    if (length > file_remaining()) {
      bad_block_length(length, file_remaining());
      return false;
    }
    b = data + pos;
    if (load32<swapped>(b + length - 4) != length) {
      fail("trailing block length " + std::to_string(load32<swapped>(b + length - 4)) +
           " differs from the leading length " + std::to_string(length));
      return false;
    }
    const std::uint16_t major = load16<swapped>(b + 12);
    const std::uint16_t minor = load16<swapped>(b + 14);
    if (major != 1) {
      fail("pcapng version " + std::to_string(major) + "." + std::to_string(minor) +
               " is not supported (only 1.x)",
           error_code::unsupported);
      return false;
    }
    // Interface ids restart at 0 in each section; packets report the index into
    // interfaces(), which keeps growing, so ids stay unique across sections.
    section_first_interface = interfaces.size();
    state = swapped ? mode::pcapng_swapped : mode::pcapng_native;
    pos += length;
    ++consumed;
    return true;
  }

  template <bool swapped>
  bool read_interface(const std::uint8_t* b, std::uint32_t length) {
    if (length < idb_min_bytes) {
      too_short("interface description", length, idb_min_bytes);
      return false;
    }
    interface_info info;
    info.link = static_cast<link_type>(load16<swapped>(b + 8));
    info.snaplen = load32<swapped>(b + 12);
    info.timestamp_unit_ns_num = 1000;  // the default if_tsresol is 6: microseconds
    info.timestamp_unit_ns_den = 1;
    timestamp_scale scale;
    scale.mul = 1000;

    // Options: code(16), length(16), value padded to 4, until opt_endofopt or the end.
    const std::size_t end = length - 4;
    std::size_t at = 16;
    while (end - at >= 4) {
      const std::uint16_t code = load16<swapped>(b + at);
      const std::uint16_t option_length = load16<swapped>(b + at + 2);
      if (code == opt_endofopt) break;
      if (pad4(option_length) > end - at - 4) {
        fail("interface option " + std::to_string(code) + " of length " +
             std::to_string(option_length) + " at block offset " + std::to_string(at) +
             " overruns the block");
        return false;
      }
      const std::uint8_t* value = b + at + 4;
      switch (code) {
        case opt_if_name:
        case opt_if_description: {
          // UTF-8, not necessarily NUL-terminated; some writers pad with NULs anyway.
          std::string text(reinterpret_cast<const char*>(value), option_length);
          text.erase(std::find(text.begin(), text.end(), '\0'), text.end());
          (code == opt_if_name ? info.name : info.description) = std::move(text);
          break;
        }
        case opt_if_tsresol:
          if (option_length < 1) {
            fail("if_tsresol option is empty");
            return false;
          }
          if (!set_resolution(value[0], info, scale)) return false;
          break;
        case opt_if_tsoffset:
          if (option_length < 8) {
            fail("if_tsoffset option has " + std::to_string(option_length) + " bytes, not 8");
            return false;
          }
          scale.offset_ns =
              static_cast<int128>(static_cast<std::int64_t>(load64<swapped>(value))) * ns_per_s;
          break;
        default:
          break;
      }
      at += 4 + pad4(option_length);
    }
    interfaces.push_back(std::move(info));
    scales.push_back(scale);
    plain_mul.push_back(scale.shift == 0 && scale.div == 1 && scale.offset_ns == 0 ? scale.mul : 0);
    return true;
  }

  // if_tsresol: top bit clear means 10^-v seconds, set means 2^-v.
  bool set_resolution(std::uint8_t resolution, interface_info& info, timestamp_scale& scale) {
    const unsigned exponent = resolution & 0x7f;
    scale = timestamp_scale{.offset_ns = scale.offset_ns};
    if ((resolution & 0x80) == 0) {
      // Beyond 10^-18 s the unit no longer fits the int64 fraction in interface_info.
      if (exponent > 18) {
        fail("if_tsresol 10^-" + std::to_string(exponent) + " s is not supported",
             error_code::unsupported);
        return false;
      }
      if (exponent <= 9) {
        scale.mul = static_cast<std::uint64_t>(pow10(9 - exponent));
        info.timestamp_unit_ns_num = pow10(9 - exponent);
        info.timestamp_unit_ns_den = 1;
      } else {
        scale.div = static_cast<std::uint64_t>(pow10(exponent - 9));
        info.timestamp_unit_ns_num = 1;
        info.timestamp_unit_ns_den = pow10(exponent - 9);
      }
      return true;
    }
    // 10^9 / 2^k: cancel the common factors of two so the denominator fits an int64.
    const unsigned common = std::min(exponent, 9U);
    if (exponent - common > 62) {
      fail("if_tsresol 2^-" + std::to_string(exponent) + " s is not supported",
           error_code::unsupported);
      return false;
    }
    scale.mul = static_cast<std::uint64_t>(ns_per_s);
    scale.shift = exponent;
    info.timestamp_unit_ns_num = ns_per_s >> common;
    info.timestamp_unit_ns_den = std::int64_t{1} << (exponent - common);
    return true;
  }

  // Reads the IDBs that directly follow the first SHB, so interfaces() is filled when
  // open() returns, as it is for pcap. A malformed one is left for next() to report.
  template <bool swapped>
  void read_leading_interfaces() {
    while (ensure(block_min_bytes) && file_remaining() >= block_min_bytes) {
      const std::uint8_t* b = data + pos;
      if (load32<swapped>(b) != block_interface_description) return;
      const std::uint32_t length = load32<swapped>(b + 4);
      if (length < idb_min_bytes || length % 4 != 0 || length > file_remaining()) return;
      if (!ensure(length) || length > file_remaining()) return;
      b = data + pos;
      if (load32<swapped>(b + length - 4) != length) return;
      if (!read_interface<swapped>(b, length)) {
        error = status{};
        state = swapped ? mode::pcapng_swapped : mode::pcapng_native;
        return;
      }
      pos += length;
      ++consumed;
    }
  }

  // Detects the format from the first four bytes and reads the file header or the
  // first section header; failures here fail open() / from_memory().
  status start() {
    pos = 0;
    consumed = 0;
    if (size < 4) {
      return {error_code::malformed_input, "too short to be a capture file: " +
                                               std::to_string(size) + " bytes"};
    }
    const std::uint32_t magic = load32<false>(data);
    if (magic == block_section_header) {
      format = capture_format::pcapng;
      if (!read_section_header()) return std::exchange(error, status{});
      if (state == mode::pcapng_swapped) {
        read_leading_interfaces<true>();
      } else {
        read_leading_interfaces<false>();
      }
      return {};
    }
    format = capture_format::pcap;
    if (magic == pcap_magic_us || magic == pcap_magic_ns) return start_pcap<false>();
    if (magic == __builtin_bswap32(pcap_magic_us) || magic == __builtin_bswap32(pcap_magic_ns)) {
      return start_pcap<true>();
    }
    return {error_code::malformed_input,
            "not a pcap or pcapng file: magic " + hex32(magic) + compressed_hint(data, size)};
  }

  template <bool swapped>
  status start_pcap() {
    if (size < pcap_file_header_bytes) {
      return {error_code::malformed_input, "pcap file header truncated: " +
                                               std::to_string(size) + " of " +
                                               std::to_string(pcap_file_header_bytes) +
                                               " bytes"};
    }
    const std::uint32_t magic = load32<swapped>(data);
    const std::uint16_t major = load16<swapped>(data + 4);
    if (major != 2) {
      return {error_code::unsupported, "pcap version " + std::to_string(major) + "." +
                                           std::to_string(load16<swapped>(data + 6)) +
                                           " is not supported (only 2.x)"};
    }
    pcap_fraction_ns = magic == pcap_magic_ns ? 1 : 1000;
    interface_info info;
    // The snap length is informative only: nothing is allocated from it, so an absurd
    // value in a hostile header costs nothing.
    info.snaplen = load32<swapped>(data + 16);
    info.link = static_cast<link_type>(load32<swapped>(data + 20) & pcap_link_type_mask);
    info.timestamp_unit_ns_num = pcap_fraction_ns;
    info.timestamp_unit_ns_den = 1;
    interfaces.push_back(std::move(info));
    pos = pcap_file_header_bytes;
    state = swapped ? mode::pcap_swapped : mode::pcap_native;
    return {};
  }
};

capture_file_reader::capture_file_reader(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
capture_file_reader::capture_file_reader(capture_file_reader&&) noexcept = default;
capture_file_reader& capture_file_reader::operator=(capture_file_reader&&) noexcept = default;
capture_file_reader::~capture_file_reader() = default;

namespace {

// Opens `path` for reading; "-" is standard input (a duplicate, so the reader's close
// leaves the process's stdin alone).
result<unique_fd> open_input(const std::string& path, struct stat& st) {
  unique_fd fd(path == "-" ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return status::from_errno("opening " + path);
  if (::fstat(fd.get(), &st) != 0) return status::from_errno("stat of " + path);
  return fd;
}

status empty_file() { return {error_code::malformed_input, "too short to be a capture file: 0 bytes"}; }

// Maps a regular file read-only (MAP_PRIVATE: the reader never writes).
result<detail::mapped_region> map_file(int fd, std::size_t length, const std::string& path) {
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return status::from_errno("mapping " + path);
  return detail::mapped_region(base, length);
}

}  // namespace

result<capture_file_reader> capture_file_reader::from_mapping(detail::mapped_region mapping) {
  auto state = std::make_unique<impl>();
  state->data = mapping.bytes().data();
  state->size = mapping.bytes().size();
  state->file_size = mapping.bytes().size();
  state->mapping = std::move(mapping);
  if (status st_start = state->start(); !st_start.ok()) return st_start;
  return capture_file_reader(std::move(state));
}

result<capture_file_reader> capture_file_reader::open(const std::string& path) {
  // open_sequential maps a regular file and streams anything else; open() maps or refuses.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return status(error_code::unsupported, path + " is not a regular file (cannot be mapped)");
  return open_sequential(path);
}

result<capture_file_reader> capture_file_reader::open_sequential(const std::string& path) {
  struct stat st {};
  auto fd = open_input(path, st);
  if (!fd) return fd.error();
  if (!S_ISREG(st.st_mode)) return open_stream(std::move(*fd), path, unknown_size_bytes);
  if (st.st_size == 0) return empty_file();
  const auto length = static_cast<std::size_t>(st.st_size);
  // No MAP_POPULATE: faulting pages in as the reader walks lets it start at once and
  // overlap with the kernel's read-ahead.
  auto mapping = map_file(fd->get(), length, path);
  if (!mapping) return mapping.error();
  // Advice only (a failure changes speed, not results). MADV_SEQUENTIAL: aggressive
  // read-ahead, pages behind the reader are the first to go. Neither MADV_HUGEPAGE nor
  // prefaulting the page tables a window ahead (MADV_POPULATE_READ) measured a gain: a
  // fault maps a whole large page-cache folio (bench/README.md, analyze with a mapped file).
  (void)::madvise(const_cast<std::uint8_t*>(mapping->bytes().data()), length, MADV_SEQUENTIAL);
  // The mapping outlives the descriptor; `fd` closes here.
  return from_mapping(std::move(*mapping));
}

result<capture_file_reader> capture_file_reader::from_memory(std::span<const std::uint8_t> bytes) {
  auto state = std::make_unique<impl>();
  state->data = bytes.data();
  state->size = bytes.size();
  state->file_size = bytes.size();
  if (status st = state->start(); !st.ok()) return st;
  return capture_file_reader(std::move(state));
}

result<capture_file_reader> capture_file_reader::open_streamed(const std::string& path) {
  struct stat st {};
  auto fd = open_input(path, st);
  if (!fd) return fd.error();
  if (!S_ISREG(st.st_mode)) return open_stream(std::move(*fd), path, unknown_size_bytes);
  if (st.st_size == 0) return empty_file();
  // Advice only: a failure changes speed, not results.
  (void)::posix_fadvise(fd->get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  return open_stream(std::move(*fd), path, static_cast<std::uint64_t>(st.st_size));
}

result<capture_file_reader> capture_file_reader::open_stream(unique_fd fd, const std::string& path,
                                                             std::uint64_t size_bytes) {
  static_assert(unknown_size_bytes == impl::unknown_size);
  auto state = std::make_unique<impl>();
  state->file = std::move(fd);
  state->file_size = size_bytes;
  // A window that stays in a core's L2 cache while its records are read.
  constexpr std::size_t window_bytes = 256 * 1024;
  state->window.resize(window_bytes);
  state->data = state->window.data();
  if (!state->ensure(window_bytes)) return std::exchange(state->error, status{}).with_context("reading " + path);
  if (status st_start = state->start(); !st_start.ok()) return st_start;
  return capture_file_reader(std::move(state));
}

bool capture_file_reader::next(packet_view& out) {
  impl& s = *impl_;
  if (s.state == impl::mode::pcapng_native && s.next_enhanced_packet(out)) [[likely]] return true;
  return next_general(out);
}

// Apart from next(), so that next() is small enough to inline into the caller's loop
// (link-time optimisation) and its packet_view stays in registers.
bool capture_file_reader::next_general(packet_view& out) {
  impl& s = *impl_;
  for (;;) {
    using mode = impl::mode;
    using step = impl::step;
    step r;
    switch (s.state) {
      case mode::pcap_native: return s.next_pcap<false>(out);
      case mode::pcap_swapped: return s.next_pcap<true>(out);
      case mode::pcapng_native: r = s.next_pcapng<false>(out); break;
      case mode::pcapng_swapped: r = s.next_pcapng<true>(out); break;
      case mode::done:
      default: return false;
    }
    if (r != step::again) return r == step::packet;
  }
}

const status& capture_file_reader::error() const { return impl_->error; }

capture_format capture_file_reader::format() const { return impl_->format; }

const std::vector<interface_info>& capture_file_reader::interfaces() const {
  return impl_->interfaces;
}

}  // namespace rocelab::captures
