// open_streamed() reads a file through a window instead of a mapping, open_sequential()
// maps a regular file and streams a pipe: the same packets, interfaces and errors as
// open() from each, and from a pipe through either, on real captures, on every prefix of
// small files and on large files cut and corrupted around the window's edges.
#include "rocelab/captures/capture_file.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "capture_test_support.hpp"

namespace rocelab::captures {
namespace {

using test::read_all;

class streamed_file : public ::testing::Test {
 protected:
  void SetUp() override {
    // A reader that stops at an error closes the pipe before its writer has written all.
    std::signal(SIGPIPE, SIG_IGN);
    path_ = (std::filesystem::temp_directory_path() / ("rocelab-streamed-" + std::to_string(::getpid()) + ".cap"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void write(const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    bytes_ = bytes;
  }

  // The mapping against each other way of reading: the file streamed, the file opened
  // sequentially (mapped), and the same bytes through a pipe, streamed and sequentially.
  void expect_same(const std::string& what) {
    using opener = result<capture_file_reader> (*)(const std::string&);
    expect_same_as(what + " (streamed)", [&] { return capture_file_reader::open_streamed(path_); });
    expect_same_as(what + " (sequential)", [&] { return capture_file_reader::open_sequential(path_); });
    for (const opener open : {&capture_file_reader::open_streamed, &capture_file_reader::open_sequential}) {
      int fds[2];
      ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
      unique_fd read_end(fds[0]), write_end(fds[1]);
      std::thread writer([&, fd = std::move(write_end)] {
        std::size_t done = 0;
        while (done < bytes_.size()) {
          const ssize_t n = ::write(fd.get(), bytes_.data() + done, bytes_.size() - done);
          if (n <= 0) break;  // the reader stopped early and closed its end
          done += static_cast<std::size_t>(n);
        }
      });
      const std::string dev = "/dev/fd/" + std::to_string(read_end.get());
      expect_same_as(what + " (pipe)", [&] {
        auto r = open(dev);
        read_end.reset();
        return r;
      }, dev);
      read_end.reset();
      writer.join();
    }
    ++compared_;
  }

  template <class Open>
  void expect_same_as(const std::string& what, Open open_other, const std::string& other_path = {}) {
    auto mapped = capture_file_reader::open(path_);
    auto streamed = open_other();
    // An error from opening names the path it was given.
    const auto message = [&](const status& st) {
      std::string m = st.message();
      if (!other_path.empty())
        for (std::size_t at; (at = m.find(other_path)) != std::string::npos;) m.replace(at, other_path.size(), path_);
      return m;
    };
    ASSERT_EQ(mapped.ok(), streamed.ok()) << what << ": " << (mapped.ok() ? streamed.error().message() : mapped.error().message());
    if (!mapped.ok()) {
      EXPECT_EQ(mapped.error().message(), message(streamed.error())) << what;
      return;
    }
    const auto a = read_all(*mapped), b = read_all(*streamed);
    ASSERT_EQ(a.size(), b.size()) << what;
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << ", packet " << i;
    EXPECT_EQ(mapped->error().message(), message(streamed->error())) << what;
    ASSERT_EQ(mapped->interfaces().size(), streamed->interfaces().size()) << what;
    for (std::size_t i = 0; i < mapped->interfaces().size(); ++i)
      EXPECT_EQ(mapped->interfaces()[i].name, streamed->interfaces()[i].name) << what;
  }

  std::string path_;
  std::vector<std::uint8_t> bytes_;
  std::size_t compared_ = 0;
};

TEST_F(streamed_file, reads_the_shared_captures_as_the_mapping_does) {
  for (const auto& entry : std::filesystem::directory_iterator(test::pcaps_dir)) {
    if (entry.path().extension() != ".pcap" && entry.path().extension() != ".pcapng") continue;
    write(test::read_file(entry.path().string()));
    expect_same(entry.path().filename().string());
  }
  EXPECT_GE(compared_, 15u);
}

TEST_F(streamed_file, reads_every_prefix_of_small_files_as_the_mapping_does) {
  for (const bool swapped : {false, true}) {
    for (const auto& file : {test::sample_pcapng(swapped).bytes,
                             test::make_pcap(swapped, swapped, test::sample_packets(8)).bytes}) {
      for (std::size_t cut = 1; cut <= file.size(); ++cut) {
        write({file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut)});
        expect_same("cut at " + std::to_string(cut));
      }
    }
  }
}

// Files of several windows (the window is 256 KiB) with a packet larger than a window,
// a second section in the other byte order, cut at and around window multiples and with
// a block length corrupted past the first window.
TEST_F(streamed_file, reads_large_files_cut_and_corrupted_around_the_window_as_the_mapping_does) {
  const std::string big = path_ + ".big";
  {
    auto writer = pcapng_writer::create(big, {{.link = link_type::ethernet, .snaplen = 0, .name = "eth0",
                                               .description = "big"}});
    ASSERT_TRUE(writer.ok());
    std::mt19937_64 rng(11);
    std::vector<std::uint8_t> bytes;
    for (int i = 0; i < 12000; ++i) {
      const std::size_t n = i == 3000 ? 300'000 : 40 + rng() % 200;
      bytes.assign(n, static_cast<std::uint8_t>(i));
      ASSERT_TRUE(writer->write({.timestamp_ns = 1000 * i, .interface_id = 0,
                                 .original_length = static_cast<std::uint32_t>(n), .bytes = bytes})
                      .ok());
    }
    ASSERT_TRUE(writer->close().ok());
  }
  std::vector<std::uint8_t> file = test::read_file(big);
  std::filesystem::remove(big);
  ASSERT_GT(file.size(), 4u * 262144);
  const auto second = test::sample_pcapng(true).bytes;
  std::vector<std::uint8_t> two_sections = file;
  two_sections.insert(two_sections.end(), second.begin(), second.end());
  write(two_sections);
  expect_same("two sections");

  std::mt19937_64 rng(12);
  std::vector<std::size_t> cuts;
  for (std::size_t edge = 262144; edge < file.size(); edge += 262144)
    for (std::size_t d = 0; d < 64; d += 3) cuts.insert(cuts.end(), {edge - d, edge + d});
  for (int i = 0; i < 40; ++i) cuts.push_back(rng() % file.size());
  for (const std::size_t cut : cuts) {
    write({file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut)});
    expect_same("cut at " + std::to_string(cut));
  }
  for (int i = 0; i < 40; ++i) {
    std::vector<std::uint8_t> bad = file;
    bad[262144 + rng() % (bad.size() - 262144)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    write(bad);
    expect_same("corruption " + std::to_string(i));
  }
  EXPECT_GT(compared_, 300u);
}

}  // namespace
}  // namespace rocelab::captures
