#pragma once

#include <gtest/gtest.h>
// The shared body of the live-capture lab tests: run `rocelab capture` inside a test
// namespace on veth_b, send numbered RoCEv2 frames from veth_a with a raw socket, and
// check that the file holds every frame sent, byte for byte.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "test_netns.hpp"

namespace rocelab::test {

// The sequence number travels in the payload after a marker, so frames from anyone
// else are told apart from ours.
inline constexpr std::array<std::uint8_t, 4> lab_payload_marker = {'R', 'L', 'A', 'B'};
inline constexpr std::size_t lab_payload_bytes = 64;
// Ethernet + IPv4 + UDP + BTH: where an RC SEND-only payload starts.
inline constexpr std::size_t lab_payload_offset = 14 + 20 + 8 + 12;

// Frame `seq`: RC SEND-only from 198.18.100.1 to 198.18.100.2 with psn = seq and
// `payload_bytes` of payload (at least lab_payload_bytes). The
// destination MAC is a locally administered one that is not veth_b's, so the kernel on
// veth_b ignores the frame (no ICMP port unreachable to pollute the capture) while a
// promiscuous capture still sees it.
inline std::vector<std::uint8_t> lab_frame(std::uint32_t seq, std::size_t payload_bytes = lab_payload_bytes) {
  std::vector<std::uint8_t> payload(std::max(payload_bytes, lab_payload_bytes));
  std::memcpy(payload.data(), lab_payload_marker.data(), lab_payload_marker.size());
  for (int i = 0; i < 4; ++i) payload[4 + i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
  for (std::size_t i = 8; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(seq + i);

  captures::roce_frame_spec spec;
  spec.eth.dst_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
  spec.eth.src_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  spec.ip.src = captures::ipv4_mapped(198, 18, 100, 1);
  spec.ip.dst = captures::ipv4_mapped(198, 18, 100, 2);
  spec.ip.ipv4_identification = static_cast<std::uint16_t>(seq);
  spec.udp_src_port = static_cast<std::uint16_t>(0xC000 | (seq & 0x3FFF));
  spec.dest_qp = 0x11;
  spec.psn = seq & 0xFFFFFF;
  spec.payload = payload;
  std::vector<std::uint8_t> frame;
  captures::append_roce_frame(spec, frame);
  return frame;
}

// The sequence number of one of our frames, or -1 for anything else.
inline std::int64_t lab_sequence(std::span<const std::uint8_t> frame) {
  if (frame.size() < lab_payload_offset + 8) return -1;
  if (std::memcmp(frame.data() + lab_payload_offset, lab_payload_marker.data(), 4) != 0) return -1;
  std::uint32_t seq = 0;
  for (int i = 0; i < 4; ++i) seq = (seq << 8) | frame[lab_payload_offset + 4 + i];
  return seq;
}

struct lab_capture_outcome {
  std::string setup_error;       // non-empty: the run could not happen
  std::optional<int> exit_code;  // nullopt: had to be stopped
  std::string output;            // the capture's stdout and stderr
  std::string read_error;        // reading the capture file
  std::size_t frames_in_file = 0;
  std::size_t foreign_frames = 0;
  std::vector<std::uint32_t> missing;
  std::vector<std::uint32_t> duplicated;
  std::vector<std::uint32_t> altered;  // ours, but bytes differ from what was sent
};

// Removes a file at scope exit.
struct scoped_file {
  std::string path;
  ~scoped_file() { std::remove(path.c_str()); }
};

// Runs the capture with `capture_args` (after "rocelab capture"; "-w <file>" and
// "--count <frames>" are added) in `ns`, sends `frames` frames on veth_a, and checks.
inline lab_capture_outcome run_capture_lab(test_netns& ns, std::vector<std::string> capture_args,
                                           std::uint32_t frames, const std::string& file,
                                           std::size_t payload_bytes = lab_payload_bytes) {
  using namespace std::chrono_literals;
  lab_capture_outcome out;
  std::vector<std::string> args = {std::string(ROCELAB_BINARY_DIR) + "/rocelab", "capture"};
  args.insert(args.end(), capture_args.begin(), capture_args.end());
  args.insert(args.end(), {"--count", std::to_string(frames), "-w", file});

  auto child = child_process::spawn(args, ns.name());
  if (!child) {
    out.setup_error = child.error().message();
    return out;
  }
  if (!child->wait_for_output("rocelab capture: capturing on", 60s)) {
    out.setup_error = "the capture never said it was ready";
    out.exit_code = child->stop(5s);
    out.output = child->output();
    return out;
  }

  auto sender = raw_sender::open(ns, test_netns::veth_a);
  if (!sender) {
    out.setup_error = sender.error().message();
    out.exit_code = child->stop(5s);
    out.output = child->output();
    return out;
  }
  std::vector<std::vector<std::uint8_t>> sent;
  sent.reserve(frames);
  for (std::uint32_t seq = 0; seq < frames; ++seq) sent.push_back(lab_frame(seq, payload_bytes));
  // Paced in small groups: the receive rings (512 frames for af_packet's default) must
  // not overflow if the capture loses the CPU for a few milliseconds on a busy machine.
  constexpr std::uint32_t group = 32;
  for (std::uint32_t seq = 0; seq < frames; ++seq) {
    if (const status st = sender->send(sent[seq]); !st.ok()) {
      out.setup_error = "sending frame " + std::to_string(seq) + ": " + st.message();
      out.exit_code = child->stop(5s);
      out.output = child->output();
      return out;
    }
    if (seq % group == group - 1) std::this_thread::sleep_for(2ms);
  }

  out.exit_code = child->wait(30s);
  if (!out.exit_code) child->stop(5s);  // leaves exit_code empty: it did not stop by itself
  out.output = child->output();

  auto reader = captures::capture_file_reader::open(file);
  if (!reader) {
    out.read_error = reader.error().message();
    return out;
  }
  std::vector<int> seen(frames, 0);
  captures::packet_view packet;
  while (reader->next(packet)) {
    ++out.frames_in_file;
    const std::int64_t seq = lab_sequence(packet.bytes);
    if (seq < 0 || seq >= frames) {
      ++out.foreign_frames;
      continue;
    }
    const auto index = static_cast<std::uint32_t>(seq);
    const auto& expected = sent[index];
    if (++seen[index] == 2) out.duplicated.push_back(index);
    if (packet.bytes.size() != expected.size() ||
        std::memcmp(packet.bytes.data(), expected.data(), expected.size()) != 0)
      out.altered.push_back(index);
  }
  if (!reader->error().ok()) out.read_error = reader->error().message();
  for (std::uint32_t seq = 0; seq < frames; ++seq)
    if (seen[seq] == 0) out.missing.push_back(seq);
  return out;
}

// First few numbers of a list, for failure messages.
inline std::string first_few(const std::vector<std::uint32_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 10; ++i) s += std::to_string(v[i]) + " ";
  if (v.size() > 10) s += "... (" + std::to_string(v.size()) + " in all)";
  return s;
}

// The capture ran to --count and holds every frame sent, once and unaltered, and nothing
// else. Call with ASSERT_NO_FATAL_FAILURE.
inline void expect_complete_capture(const lab_capture_outcome& out, std::uint32_t frames) {
  ASSERT_TRUE(out.setup_error.empty()) << out.setup_error << "\n" << out.output;
  ASSERT_TRUE(out.exit_code.has_value()) << "capture did not stop at --count\n" << out.output;
  EXPECT_EQ(*out.exit_code, 0) << out.output;
  ASSERT_TRUE(out.read_error.empty()) << out.read_error;
  EXPECT_TRUE(out.missing.empty()) << "missing: " << first_few(out.missing) << "\n" << out.output;
  EXPECT_TRUE(out.duplicated.empty()) << "duplicated: " << first_few(out.duplicated);
  EXPECT_TRUE(out.altered.empty()) << "altered: " << first_few(out.altered);
  EXPECT_EQ(out.frames_in_file, frames) << out.foreign_frames << " foreign frames";
}

}  // namespace rocelab::test
