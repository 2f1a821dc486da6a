// The capture file reader, once per file and per section: the pcap file header, pcapng
// section headers (byte order, version) and interface descriptions (link type, snap
// length, timestamp unit and offset). Formats: draft-ietf-opsawg-pcap and
// draft-ietf-opsawg-pcapng, as in capture_file.cpp.
#include "capture_file_reader_impl.hpp"

#include <initializer_list>

namespace rocelab::captures {
namespace {

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

bool capture_file_reader::impl::read_section_header() {
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
bool capture_file_reader::impl::read_section_header_as(const std::uint8_t* b, std::size_t remaining) {
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
bool capture_file_reader::impl::read_interface(const std::uint8_t* b, std::uint32_t length) {
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

// next_pcapng<swapped> (capture_file_reader_impl.hpp) reads interfaces met between packets.
template bool capture_file_reader::impl::read_interface<false>(const std::uint8_t*, std::uint32_t);
template bool capture_file_reader::impl::read_interface<true>(const std::uint8_t*, std::uint32_t);

bool capture_file_reader::impl::set_resolution(std::uint8_t resolution, interface_info& info,
                                                timestamp_scale& scale) {
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

template <bool swapped>
void capture_file_reader::impl::read_leading_interfaces() {
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

status capture_file_reader::impl::start() {
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
status capture_file_reader::impl::start_pcap() {
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

}  // namespace rocelab::captures
