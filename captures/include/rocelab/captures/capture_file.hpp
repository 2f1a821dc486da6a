#pragma once
// Reading and writing capture files: classic pcap (microsecond and nanosecond magic,
// either byte order) and pcapng (several interfaces, if_tsresol, either byte order).
//
// The reader maps the file and hands out views into the mapping; no per-packet
// allocation. Every length read from the file is checked against what remains, so a
// hostile file ends the read with an error naming the record and offset instead of a read
// past the end. A record whose captured length exceeds the file is an error; a record
// shorter than its original length is a normal truncated (snapped) packet.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rocelab/captures/packet.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::captures {

namespace detail {
class mapped_region;
}

enum class capture_format { pcap, pcapng };

class capture_file_reader {
 public:
  // Opens and maps `path`; detects the format from its magic number.
  static result<capture_file_reader> open(const std::string& path);
  // Opens `path` ("-": standard input) and reads it front to back with read(2) through a
  // window the size of a core's L2 cache, instead of mapping it. A regular file or a pipe
  // (whose size is learnt at its end). The same packets and errors as open(); a
  // packet_view is valid only until the next call to next().
  static result<capture_file_reader> open_streamed(const std::string& path);
  // How `rocelab analyze` reads: a regular file is mapped read-only and walked front to
  // back (MADV_SEQUENTIAL); a pipe, FIFO or character device ("-" for standard input,
  // /dev/fd/N) is read as open_streamed() reads it. The same packets and errors as
  // open() either way; a packet_view is valid only until the next call to next().
  static result<capture_file_reader> open_sequential(const std::string& path);
  // Reads from memory the caller keeps alive for the reader's lifetime (tests, fuzzing).
  static result<capture_file_reader> from_memory(std::span<const std::uint8_t> bytes);

  capture_file_reader(capture_file_reader&&) noexcept;
  capture_file_reader& operator=(capture_file_reader&&) noexcept;
  ~capture_file_reader();

  // Fills `out` with the next packet and returns true; returns false at the end of the
  // file or at the first malformed block, after which error() says which.
  bool next(packet_view& out);
  // ok() after a clean end of file; otherwise what stopped the read, with the record
  // number and byte offset.
  [[nodiscard]] const status& error() const;

  [[nodiscard]] capture_format format() const;
  // Interfaces seen so far (pcapng may declare more as it goes; pcap has exactly one).
  [[nodiscard]] const std::vector<interface_info>& interfaces() const;

 private:
  struct impl;
  explicit capture_file_reader(std::unique_ptr<impl> p);
  // Every record next() does not take on its fast path.
  [[gnu::noinline]] bool next_general(packet_view& out);
  // read(2) through a window from an open descriptor of any kind; size_bytes is the
  // file's size, or unknown_size_bytes for a pipe (learnt when read(2) meets its end).
  static constexpr std::uint64_t unknown_size_bytes = std::uint64_t{1} << 62;
  static result<capture_file_reader> open_stream(unique_fd fd, const std::string& path, std::uint64_t size_bytes);
  static result<capture_file_reader> from_mapping(detail::mapped_region mapping);
  std::unique_ptr<impl> impl_;
};

// Writes pcapng with nanosecond timestamps (if_tsresol = 9), one interface description
// block per interface given at creation (e.g. one per switch port), packets in the order
// written. Files open in Wireshark and tshark.
class pcapng_writer {
 public:
  static result<pcapng_writer> create(const std::string& path,
                                      const std::vector<interface_info>& interfaces);
  pcapng_writer(pcapng_writer&&) noexcept;
  pcapng_writer& operator=(pcapng_writer&&) noexcept;
  ~pcapng_writer();  // closes (flushing) if close() was not called; never throws

  // packet.interface_id must name an interface given at creation.
  status write(const packet_view& packet);
  // Optionally records per-interface drop counters as an Interface Statistics Block
  // (isb_ifdrop), so a capture file carries the drops of the capture that made it.
  status write_interface_statistics(std::uint32_t interface_id, std::int64_t timestamp_ns,
                                    std::uint64_t received, std::uint64_t dropped);
  status close();

 private:
  struct impl;
  explicit pcapng_writer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace rocelab::captures
