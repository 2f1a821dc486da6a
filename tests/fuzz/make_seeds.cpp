// Writes the fuzzers' seed corpus from frames rocelab builds itself: every frame kind the
// dissector knows (RoCEv2 with and without VLAN tags, IPv4 options and IPv6, ACK/NAK, CNP,
// PFC, PAUSE, ERSPAN I/II/III) as single files for fuzz_dissect, and small pcapng files
// holding them for fuzz_capture_file. The real captures in shared/pcaps are added by
// scripts/fuzz.
//   rocelab_fuzz_seeds fuzz_dissect|fuzz_capture_file DIR
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/frame_builder.hpp"

using namespace rocelab::captures;

namespace {

std::vector<std::vector<std::uint8_t>> seed_frames() {
  std::vector<std::vector<std::uint8_t>> frames;
  const std::vector<std::uint8_t> payload(256, 0xab);
  const std::uint8_t ip_options[4] = {0x01, 0x01, 0x01, 0x00};

  roce_frame_spec write;
  write.eth.src_mac = {2, 0, 0, 0, 0, 1};
  write.eth.dst_mac = {2, 0, 0, 0, 0, 2};
  write.ip.src = ipv4_mapped(198, 18, 0, 1);
  write.ip.dst = ipv4_mapped(198, 18, 0, 2);
  write.ip.ecn = wire::ecn_codepoint::ect0;
  write.opcode = wire::roce_opcode::rc_rdma_write_first;
  write.dest_qp = 0x123;
  write.psn = 0xfffffe;
  write.reth_dma_length = 4096;
  write.payload = payload;
  frames.emplace_back();
  append_roce_frame(write, frames.back());

  auto tagged = write;
  tagged.eth.vlan_count = 2;
  tagged.eth.vlans[0] = {.tpid = wire::ethertype::qinq, .pcp = 7, .vid = 10};
  tagged.eth.vlans[1] = {.pcp = 3, .vid = 100};
  tagged.ip.ecn = wire::ecn_codepoint::ce;
  tagged.ip.ipv4_options = ip_options;
  frames.emplace_back();
  append_roce_frame(tagged, frames.back());

  auto v6 = write;
  v6.ip.version = 6;
  v6.ip.src = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  v6.ip.dst = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  frames.emplace_back();
  append_roce_frame(v6, frames.back());

  auto ack = write;
  ack.opcode = wire::roce_opcode::rc_acknowledge;
  ack.payload = {};
  for (std::uint8_t syndrome : {0x1f, 0x60, 0x2e}) {
    ack.aeth_syndrome = syndrome;
    frames.emplace_back();
    append_roce_frame(ack, frames.back());
  }

  cnp_frame_spec cnp;
  cnp.ip.src = ipv4_mapped(198, 18, 0, 2);
  cnp.ip.dst = ipv4_mapped(198, 18, 0, 1);
  cnp.dest_qp = 0x123;
  frames.emplace_back();
  append_cnp_frame(cnp, frames.back());

  pfc_frame_spec pfc;
  pfc.class_enable = 0x0108;
  pfc.quanta = {0, 0, 0, 0xffff, 0, 7, 0, 0};
  frames.emplace_back();
  append_pfc_frame(pfc, frames.back());

  pause_frame_spec pause;
  frames.emplace_back();
  append_pause_frame(pause, frames.back());

  const auto inner = frames.front();
  for (std::uint8_t type : {1, 2, 3}) {
    erspan_spec erspan;
    erspan.type = type;
    erspan.outer_ip.src = ipv4_mapped(198, 18, 1, 1);
    erspan.outer_ip.dst = ipv4_mapped(198, 18, 1, 2);
    erspan.session_id = 7;
    erspan.platform_subheader = type == 3;
    frames.emplace_back();
    append_erspan_frame(erspan, inner, frames.back());
  }
  return frames;
}

bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: rocelab_fuzz_seeds fuzz_dissect|fuzz_capture_file DIR\n";
    return 2;
  }
  const std::string target = argv[1];
  const std::string dir = argv[2];
  const auto frames = seed_frames();
  if (target == "fuzz_dissect") {
    for (std::size_t i = 0; i < frames.size(); ++i)
      if (!write_file(dir + "/frame-" + std::to_string(i), frames[i])) {
        std::cerr << "rocelab_fuzz_seeds: cannot write " << dir << "\n";
        return 1;
      }
    return 0;
  }
  if (target != "fuzz_capture_file") {
    std::cerr << "rocelab_fuzz_seeds: unknown target " << target << "\n";
    return 2;
  }
  // Two interfaces, so the pcapng seed exercises several IDBs and EPB interface ids.
  interface_info a, b;
  a.name = "Ethernet0";
  a.snaplen = 128;
  b.name = "Ethernet4";
  auto writer = pcapng_writer::create(dir + "/frames.pcapng", {a, b});
  if (!writer) {
    std::cerr << "rocelab_fuzz_seeds: " << writer.error().message() << "\n";
    return 1;
  }
  std::int64_t t = 1'700'000'000'000'000'000;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const packet_view p{.timestamp_ns = t += 1000, .interface_id = static_cast<std::uint32_t>(i % 2),
                        .original_length = static_cast<std::uint32_t>(frames[i].size()), .bytes = frames[i]};
    if (auto st = writer->write(p); !st.ok()) {
      std::cerr << "rocelab_fuzz_seeds: " << st.message() << "\n";
      return 1;
    }
  }
  if (auto st = writer->write_interface_statistics(0, t, frames.size(), 0); !st.ok()) return 1;
  return writer->close().ok() ? 0 : 1;
}
