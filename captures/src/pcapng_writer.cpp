// pcapng writer (draft-ietf-opsawg-pcapng): one SHB, one IDB per interface with
// if_tsresol = 9, then EPBs and optional ISBs, all in host byte order (readers follow the
// SHB's byte-order magic). Blocks are assembled in one large buffer and written with
// write(2) when it fills, so a packet costs a few memcpys, not a system call.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

#include "pcapng_format.hpp"
#include "posix_file.hpp"
#include "rocelab/captures/capture_file.hpp"

namespace rocelab::captures {
namespace {

using namespace pcapng;

constexpr std::uint8_t tsresol_nanoseconds = 9;  // 10^-9 s
constexpr std::size_t epb_overhead_bytes = 32;
// Large enough that write(2) calls are rare next to the packets they carry.
constexpr std::size_t flush_threshold_bytes = std::size_t{1} << 20;
// An option value's length is 16 bits.
constexpr std::size_t max_option_bytes = std::numeric_limits<std::uint16_t>::max();


}  // namespace

struct pcapng_writer::impl {
  std::string path;
  detail::unique_fd fd;
  std::vector<std::uint32_t> snaplens;  // per interface; 0 = unlimited
  std::vector<std::uint8_t> buffer;
  status failed;  // the first I/O error; every later call returns it
  bool closed = false;

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  // The writer's destructor and move-assignment both end here, so an open file is
  // always flushed and closed once.
  ~impl() {
    if (closed) return;
    if (status st = close(); !st.ok()) {
      std::fprintf(stderr, "rocelab: pcapng_writer: %s\n", st.message().c_str());
    }
  }

  template <typename T>
  void put(T value) {
    const std::size_t at = buffer.size();
    buffer.resize(at + sizeof value);
    std::memcpy(buffer.data() + at, &value, sizeof value);
  }
  void put_bytes(const void* bytes, std::size_t n) {
    const std::size_t at = buffer.size();
    buffer.resize(pad4(at + n));  // zero padding to the next 4-byte boundary
    if (n != 0) std::memcpy(buffer.data() + at, bytes, n);
  }
  void put_option(std::uint16_t code, const void* value, std::size_t n) {
    put<std::uint16_t>(code);
    put<std::uint16_t>(static_cast<std::uint16_t>(n));
    put_bytes(value, n);
  }
  void put_text_option(std::uint16_t code, std::string_view text) {
    if (text.empty()) return;
    put_option(code, text.data(), std::min(text.size(), max_option_bytes));
  }

  // Blocks are built in place: the leading length is patched once the body is known.
  std::size_t begin_block(std::uint32_t type) {
    const std::size_t start = buffer.size();
    put<std::uint32_t>(type);
    put<std::uint32_t>(0);
    return start;
  }
  void end_block(std::size_t start) {
    const auto length = static_cast<std::uint32_t>(buffer.size() - start + 4);
    put<std::uint32_t>(length);
    std::memcpy(buffer.data() + start + 4, &length, sizeof length);
  }

  status flush() {
    if (!failed.ok()) return failed;
    const std::uint8_t* p = buffer.data();
    std::size_t left = buffer.size();
    while (left > 0) {
      const ssize_t n = ::write(fd.get(), p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        failed = status::from_errno("writing " + path);
        return failed;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    buffer.clear();
    return {};
  }

  status check_open() const {
    if (closed) return {error_code::invalid_argument, "writing " + path + ": already closed"};
    return failed;
  }

  status close() {
    if (closed) return failed;
    status st = flush();
    closed = true;
    // close(2) can report a delayed write error (NFS, quota), so it is not left to the
    // descriptor's destructor.
    if (::close(fd.release()) != 0 && st.ok()) {
      st = status::from_errno("closing " + path);
      failed = st;
    }
    buffer = {};
    return st;
  }
};

pcapng_writer::pcapng_writer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
pcapng_writer::pcapng_writer(pcapng_writer&&) noexcept = default;
pcapng_writer& pcapng_writer::operator=(pcapng_writer&&) noexcept = default;
pcapng_writer::~pcapng_writer() = default;

result<pcapng_writer> pcapng_writer::create(const std::string& path,
                                            const std::vector<interface_info>& interfaces) {
  if (interfaces.empty()) {
    return status(error_code::invalid_argument,
                  "creating " + path + ": a pcapng file needs at least one interface");
  }
  auto w = std::make_unique<impl>();
  w->path = path;
  // O_NOFOLLOW: a symlink planted at the capture's name is refused (ELOOP), never written
  // through. The capture is written in place, not renamed at the end, so it can be read
  // while it grows.
  w->fd = detail::unique_fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!w->fd.valid()) {
    w->closed = true;
    return status::from_errno("creating " + path);
  }
  w->buffer.reserve(flush_threshold_bytes + (std::size_t{64} << 10));

  const std::size_t shb = w->begin_block(block_section_header);
  w->put<std::uint32_t>(byte_order_magic);
  w->put<std::uint16_t>(1);  // version 1.0
  w->put<std::uint16_t>(0);
  w->put<std::int64_t>(-1);  // section length not known in advance
  w->put_text_option(opt_shb_userappl, "rocelab");
  w->put_option(opt_endofopt, nullptr, 0);
  w->end_block(shb);

  for (const interface_info& info : interfaces) {
    const std::size_t idb = w->begin_block(block_interface_description);
    w->put<std::uint16_t>(static_cast<std::uint16_t>(info.link));
    w->put<std::uint16_t>(0);  // reserved
    w->put<std::uint32_t>(info.snaplen);
    w->put_text_option(opt_if_name, info.name);
    w->put_text_option(opt_if_description, info.description);
    w->put_option(opt_if_tsresol, &tsresol_nanoseconds, 1);
    w->put_option(opt_endofopt, nullptr, 0);
    w->end_block(idb);
    w->snaplens.push_back(info.snaplen);
  }
  // The headers go out at once, so a bad path or a full disk shows up here and an empty
  // capture is still a valid file.
  if (status st = w->flush(); !st.ok()) {
    (void)w->close();
    return st;
  }
  return pcapng_writer(std::move(w));
}

status pcapng_writer::write(const packet_view& packet) {
  impl& w = *impl_;
  if (w.closed || !w.failed.ok()) [[unlikely]] return w.check_open();
  if (packet.interface_id >= w.snaplens.size()) [[unlikely]] {
    return {error_code::invalid_argument,
            "writing " + w.path + ": interface " + std::to_string(packet.interface_id) +
                " was not declared (" + std::to_string(w.snaplens.size()) + " interfaces)"};
  }
  if (packet.timestamp_ns < 0) [[unlikely]] {
    return {error_code::invalid_argument,
            "writing " + w.path + ": timestamp " + std::to_string(packet.timestamp_ns) +
                " ns is before the epoch"};
  }
  // The IDB promises the snap length, so longer packets are cut to it, as a capture
  // with that snap length would have done.
  std::size_t caplen = packet.bytes.size();
  const std::uint32_t snaplen = w.snaplens[packet.interface_id];
  if (snaplen != 0 && caplen > snaplen) caplen = snaplen;
  if (caplen > std::numeric_limits<std::uint32_t>::max() - epb_overhead_bytes - 3) [[unlikely]] {
    return {error_code::invalid_argument,
            "writing " + w.path + ": a packet of " + std::to_string(caplen) +
                " bytes does not fit a pcapng block"};
  }
  // A caller that leaves original_length at 0 (or below what it captured) still gets a
  // consistent record: the wire length is at least what was captured.
  const auto original = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(std::max<std::uint64_t>(packet.original_length, packet.bytes.size()),
                              std::numeric_limits<std::uint32_t>::max()));
  const auto units = static_cast<std::uint64_t>(packet.timestamp_ns);
  const auto length = static_cast<std::uint32_t>(epb_overhead_bytes + pad4(caplen));

  const std::size_t at = w.buffer.size();
  w.buffer.resize(at + length);
  std::uint8_t* b = w.buffer.data() + at;
  const std::uint32_t head[7] = {block_enhanced_packet,
                                 length,
                                 packet.interface_id,
                                 static_cast<std::uint32_t>(units >> 32),
                                 static_cast<std::uint32_t>(units),
                                 static_cast<std::uint32_t>(caplen),
                                 original};
  std::memcpy(b, head, sizeof head);
  if (caplen != 0) std::memcpy(b + sizeof head, packet.bytes.data(), caplen);
  std::memset(b + sizeof head + caplen, 0, pad4(caplen) - caplen);
  std::memcpy(b + length - 4, &length, sizeof length);

  if (w.buffer.size() >= flush_threshold_bytes) return w.flush();
  return {};
}

status pcapng_writer::write_interface_statistics(std::uint32_t interface_id,
                                                 std::int64_t timestamp_ns,
                                                 std::uint64_t received,
                                                 std::uint64_t dropped) {
  impl& w = *impl_;
  if (status st = w.check_open(); !st.ok()) return st;
  if (interface_id >= w.snaplens.size()) {
    return {error_code::invalid_argument,
            "writing " + w.path + ": statistics for undeclared interface " +
                std::to_string(interface_id)};
  }
  if (timestamp_ns < 0) {
    return {error_code::invalid_argument,
            "writing " + w.path + ": statistics timestamp " + std::to_string(timestamp_ns) +
                " ns is before the epoch"};
  }
  const auto units = static_cast<std::uint64_t>(timestamp_ns);
  const std::size_t isb = w.begin_block(block_interface_statistics);
  w.put<std::uint32_t>(interface_id);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(units >> 32));
  w.put<std::uint32_t>(static_cast<std::uint32_t>(units));
  w.put_option(opt_isb_ifrecv, &received, sizeof received);
  w.put_option(opt_isb_ifdrop, &dropped, sizeof dropped);
  w.put_option(opt_endofopt, nullptr, 0);
  w.end_block(isb);
  if (w.buffer.size() >= flush_threshold_bytes) return w.flush();
  return {};
}

status pcapng_writer::close() { return impl_->close(); }

}  // namespace rocelab::captures
