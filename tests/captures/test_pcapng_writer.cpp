#include "rocelab/captures/capture_file.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace rocelab::captures {
namespace {

using test::packet_copy;
using test::view_of;

std::vector<packet_copy> read_back(const std::string& path, std::vector<interface_info>* interfaces,
                                   status* end) {
  auto reader = capture_file_reader::open(path);
  EXPECT_TRUE(reader.ok()) << reader.error().message();
  std::vector<packet_copy> out;
  if (!reader.ok()) return out;
  EXPECT_EQ(reader->format(), capture_format::pcapng);
  out = test::read_all(*reader);
  if (interfaces != nullptr) *interfaces = reader->interfaces();
  if (end != nullptr) *end = reader->error();
  return out;
}

// A file name under the test's temporary directory, removed when the test ends.
class temp_path {
 public:
  explicit temp_path(const std::string& stem) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/rocelab-" + stem +
            "-" + std::to_string(::getpid()) + ".pcapng";
  }
  ~temp_path() { ::unlink(path_.c_str()); }
  temp_path(const temp_path&) = delete;
  temp_path& operator=(const temp_path&) = delete;
  [[nodiscard]] const std::string& str() const { return path_; }

 private:
  std::string path_;
};

std::vector<interface_info> three_ports() {
  std::vector<interface_info> ports(3);
  ports[0].name = "Ethernet0";
  ports[0].description = "leaf1 uplink";
  ports[0].snaplen = 0;
  ports[1].name = "Ethernet4";
  ports[1].snaplen = 9216;
  ports[2].name = "raw-tap";
  ports[2].description = "IP only";
  ports[2].link = link_type::raw;
  ports[2].snaplen = 65535;
  return ports;
}

// Sizes that hit every padding remainder, including empty packets; timestamps that need
// both 32-bit halves.
std::vector<packet_copy> round_trip_packets() {
  std::vector<packet_copy> out;
  for (std::uint32_t i = 0; i < 40; ++i) {
    packet_copy p;
    p.interface_id = i % 3;
    p.timestamp_ns = 1'718'000'000'000'000'000LL + i * 1'000'003LL + (i == 7 ? 999'999'999 : 0);
    p.bytes.resize(i * 7 % 97);
    for (std::size_t k = 0; k < p.bytes.size(); ++k) p.bytes[k] = static_cast<std::uint8_t>(i + k);
    p.original_length = static_cast<std::uint32_t>(p.bytes.size() + (i % 4 == 0 ? 1500 : 0));
    out.push_back(std::move(p));
  }
  return out;
}

TEST(PcapngWriter, RoundTripsThreeInterfacesWithNanosecondTimestamps) {
  const temp_path path("round-trip");
  const auto ports = three_ports();
  const auto packets = round_trip_packets();
  {
    auto writer = pcapng_writer::create(path.str(), ports);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (const auto& p : packets) ASSERT_TRUE(writer->write(view_of(p)).ok());
    ASSERT_TRUE(writer->write_interface_statistics(1, packets.back().timestamp_ns, 40, 3).ok());
    ASSERT_TRUE(writer->close().ok());
  }
  std::vector<interface_info> interfaces;
  status end;
  EXPECT_EQ(read_back(path.str(), &interfaces, &end), packets);
  EXPECT_TRUE(end.ok()) << end.message();
  ASSERT_EQ(interfaces.size(), ports.size());
  for (std::size_t i = 0; i < ports.size(); ++i) {
    SCOPED_TRACE(ports[i].name);
    EXPECT_EQ(interfaces[i].name, ports[i].name);
    EXPECT_EQ(interfaces[i].description, ports[i].description);
    EXPECT_EQ(interfaces[i].link, ports[i].link);
    EXPECT_EQ(interfaces[i].snaplen, ports[i].snaplen);
    EXPECT_EQ(interfaces[i].timestamp_unit_ns_num, 1);
    EXPECT_EQ(interfaces[i].timestamp_unit_ns_den, 1);
  }
}

TEST(PcapngWriter, CutsPacketsToTheInterfaceSnaplenAndKeepsTheWireLength) {
  struct snap_case {
    const char* name;
    std::uint32_t snaplen;
    std::size_t bytes;
    std::uint32_t original_length;
    std::size_t expected_caplen;
    std::uint32_t expected_original;
  };
  const snap_case cases[] = {
      {"longer than snaplen", 64, 100, 100, 64, 100},
      {"exactly snaplen", 64, 64, 64, 64, 64},
      {"unlimited snaplen", 0, 3000, 3000, 3000, 3000},
      {"original length left at 0 becomes the captured length", 0, 10, 0, 10, 10},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const temp_path path("snap");
    std::vector<interface_info> ports(1);
    ports[0].snaplen = c.snaplen;
    std::vector<std::uint8_t> bytes(c.bytes, 0xab);
    {
      auto writer = pcapng_writer::create(path.str(), ports);
      ASSERT_TRUE(writer.ok()) << writer.error().message();
      ASSERT_TRUE(writer->write({5, 0, c.original_length, bytes}).ok());
    }  // the destructor closes
    const auto back = read_back(path.str(), nullptr, nullptr);
    ASSERT_EQ(back.size(), 1U);
    EXPECT_EQ(back[0].bytes.size(), c.expected_caplen);
    EXPECT_EQ(back[0].original_length, c.expected_original);
  }
}

TEST(PcapngWriter, ManyPacketsCrossTheBufferFlushIntact) {
  const temp_path path("many");
  std::vector<interface_info> ports(2);
  constexpr int count = 30'000;  // about 4 MB: several buffer flushes
  {
    auto writer = pcapng_writer::create(path.str(), ports);
    ASSERT_TRUE(writer.ok());
    std::vector<std::uint8_t> bytes(101);
    for (int i = 0; i < count; ++i) {
      bytes[0] = static_cast<std::uint8_t>(i);
      ASSERT_TRUE(writer->write({i * 10LL, static_cast<std::uint32_t>(i % 2), 101, bytes}).ok());
    }
    ASSERT_TRUE(writer->close().ok());
  }
  status end;
  const auto back = read_back(path.str(), nullptr, &end);
  EXPECT_TRUE(end.ok()) << end.message();
  ASSERT_EQ(back.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; i += 997) {
    EXPECT_EQ(back[i].timestamp_ns, i * 10LL);
    EXPECT_EQ(back[i].interface_id, static_cast<std::uint32_t>(i % 2));
    EXPECT_EQ(back[i].bytes[0], static_cast<std::uint8_t>(i));
  }
}

TEST(PcapngWriter, MovedWriterKeepsWritingAndEmptyCaptureIsValid) {
  const temp_path path("moved");
  auto created = pcapng_writer::create(path.str(), three_ports());
  ASSERT_TRUE(created.ok());
  pcapng_writer writer = std::move(created).value();
  {
    // Nothing written yet: the headers alone already make a readable file.
    std::vector<interface_info> interfaces;
    status end;
    EXPECT_TRUE(read_back(path.str(), &interfaces, &end).empty());
    EXPECT_TRUE(end.ok());
    EXPECT_EQ(interfaces.size(), 3U);
  }
  const std::vector<std::uint8_t> bytes = {1, 2, 3};
  ASSERT_TRUE(writer.write({42, 2, 3, bytes}).ok());
  ASSERT_TRUE(writer.close().ok());
  EXPECT_TRUE(writer.close().ok()) << "a second close is harmless";
  const auto back = read_back(path.str(), nullptr, nullptr);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0], (packet_copy{42, 2, 3, bytes}));
}

TEST(PcapngWriter, ErrorsNameThePathAndCarryErrno) {
  struct create_case {
    const char* name;
    std::string path;
    int expected_errno;
  };
  const create_case cases[] = {
      {"missing directory", "/nonexistent-dir/x.pcapng", ENOENT},
      {"full device (the header write fails)", "/dev/full", ENOSPC},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<interface_info> ports(1);
    auto writer = pcapng_writer::create(c.path, ports);
    ASSERT_FALSE(writer.ok());
    EXPECT_EQ(writer.error().code(), error_code::io_error);
    EXPECT_EQ(writer.error().sys_errno(), c.expected_errno);
    EXPECT_NE(writer.error().message().find(c.path), std::string::npos)
        << writer.error().message();
  }
}

TEST(PcapngWriter, RejectsBadArgumentsWithoutBreakingTheFile) {
  const temp_path path("bad-args");
  {
    auto none = pcapng_writer::create(path.str(), {});
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().code(), error_code::invalid_argument);
  }
  auto writer = pcapng_writer::create(path.str(), three_ports());
  ASSERT_TRUE(writer.ok());
  const std::vector<std::uint8_t> bytes = {9};
  const status undeclared = writer->write({1, 3, 1, bytes});
  EXPECT_EQ(undeclared.code(), error_code::invalid_argument);
  EXPECT_NE(undeclared.message().find("interface 3"), std::string::npos) << undeclared.message();
  EXPECT_EQ(writer->write({-1, 0, 1, bytes}).code(), error_code::invalid_argument);
  EXPECT_EQ(writer->write_interface_statistics(7, 0, 0, 0).code(), error_code::invalid_argument);
  ASSERT_TRUE(writer->write({1, 0, 1, bytes}).ok());
  ASSERT_TRUE(writer->close().ok());
  EXPECT_FALSE(writer->write({2, 0, 1, bytes}).ok()) << "writing after close";
  status end;
  EXPECT_EQ(read_back(path.str(), nullptr, &end).size(), 1U);
  EXPECT_TRUE(end.ok());
}

// ---------------------------------------------------------------------------------------
// What tshark makes of the file.

bool have_tshark() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::string text;
  if (!pipe) return text;
  char chunk[4096];
  while (std::size_t n = std::fread(chunk, 1, sizeof chunk, pipe.get())) text.append(chunk, n);
  return text;
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

TEST(PcapngWriter, TsharkReadsInterfacesTimestampsAndLengths) {
  if (!have_tshark()) GTEST_SKIP() << "tshark is not installed; cannot cross-check the file";
  const temp_path path("tshark");
  const auto ports = three_ports();
  const auto packets = round_trip_packets();
  {
    auto writer = pcapng_writer::create(path.str(), ports);
    ASSERT_TRUE(writer.ok());
    for (const auto& p : packets) ASSERT_TRUE(writer->write(view_of(p)).ok());
    ASSERT_TRUE(writer->write_interface_statistics(0, packets.back().timestamp_ns, 40, 2).ok());
    ASSERT_TRUE(writer->close().ok());
  }
  const std::string out = run("tshark -r '" + path.str() +
                              "' -T fields -e frame.interface_id -e frame.time_epoch "
                              "-e frame.len -e frame.cap_len -e frame.interface_name 2>&1");
  std::istringstream lines(out);
  std::string line;
  std::size_t i = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("Running as user", 0) == 0) continue;  // tshark's root warning
    ASSERT_LT(i, packets.size()) << "unexpected tshark line: " << line;
    SCOPED_TRACE("frame " + std::to_string(i + 1) + ": " + line);
    std::istringstream cols(line);
    std::string interface_id, epoch, length, caplen, name;
    std::getline(cols, interface_id, '\t');
    std::getline(cols, epoch, '\t');
    std::getline(cols, length, '\t');
    std::getline(cols, caplen, '\t');
    std::getline(cols, name, '\t');
    const auto& p = packets[i];
    EXPECT_EQ(std::stoul(interface_id), p.interface_id);
    EXPECT_EQ(epoch_text_to_ns(epoch), p.timestamp_ns);
    EXPECT_EQ(std::stoul(length), p.original_length);
    EXPECT_EQ(std::stoul(caplen), p.bytes.size());
    EXPECT_EQ(name, ports[p.interface_id].name);
    ++i;
  }
  EXPECT_EQ(i, packets.size()) << out;
}

}  // namespace
}  // namespace rocelab::captures
