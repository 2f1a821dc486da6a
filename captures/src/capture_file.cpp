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

#include <utility>

#include "capture_file_reader_impl.hpp"

namespace rocelab::captures {

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
