// Writes a synthetic capture of what a switch mirror port sees during an incast: RDMA
// WRITE data from many senders' QPs to one receiver (ECT(0), a share CE-marked), the
// receiver's coalesced ACKs, CNPs answering CE marks (at most one per QP per 4 us, as the
// mlx5 notification point), go-back-N retransmissions after occasional NAKs, and PFC
// XOFF/XON from the congested port. Packets are snapped to --snaplen, timestamps spaced
// at 100 Gb/s line rate. Prints the ground-truth counts as JSON on stdout so the
// benchmark can check every tool's answer, not just its speed.
// --pfc-storm F adds, after any frame with probability F, a PFC frame from one of the
// senders' switch ports (random source MAC among them, random priority set, each enabled
// priority XOFF with random quanta or XON): the PFC-heavy capture of a pause storm, with
// its many short pause intervals on many (port, priority) pairs.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <vector>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/frame_builder.hpp"

using namespace rocelab::captures;

namespace {

struct truth {
  std::uint64_t frames = 0, roce = 0, data = 0, ack = 0, nak = 0, cnp = 0, ce = 0, ect0 = 0;
  std::uint64_t pfc = 0, retransmits = 0;
};

struct qp_state {
  std::uint32_t qp = 0;
  std::uint32_t next_psn = 0;
  std::uint32_t unacked = 0;
  std::int64_t last_cnp_ns = -1'000'000;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a synthetic mirrored-incast RoCEv2 capture (pcapng)"};
  std::uint64_t packets = 1'000'000;
  std::uint32_t snaplen = 128;
  std::uint32_t senders = 64;
  std::uint32_t qps_per_sender = 4;
  std::uint32_t payload = 1024;
  double ce_fraction = 0.05;
  double pfc_storm = 0;
  std::uint64_t seed = 1;
  std::string path;
  app.add_option("--packets", packets, "Frames to write")->capture_default_str();
  app.add_option("--snaplen", snaplen, "Bytes kept of each frame")->capture_default_str();
  app.add_option("--senders", senders)->capture_default_str();
  app.add_option("--qps-per-sender", qps_per_sender)->capture_default_str();
  app.add_option("--payload", payload, "RDMA WRITE payload bytes (the RoCE MTU)")->capture_default_str();
  app.add_option("--ce-fraction", ce_fraction)->capture_default_str();
  app.add_option("--pfc-storm", pfc_storm, "Probability of a storm PFC frame after each frame")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  app.add_option("-o,--output", path, "pcapng file")->required();
  CLI11_PARSE(app, argc, argv);

  auto writer = pcapng_writer::create(path, {{.link = link_type::ethernet, .snaplen = snaplen, .name = "mirror0",
                                              .description = "synthetic incast mirror"}});
  if (!writer) {
    std::cerr << "bench_make_capture: " << writer.error().message() << "\n";
    return 1;
  }

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<std::uint8_t> payload_bytes(payload, 0x5a);
  std::vector<qp_state> qps(senders * qps_per_sender);
  for (std::size_t i = 0; i < qps.size(); ++i) qps[i].qp = 0x100 + static_cast<std::uint32_t>(i);

  const wire::mac_address switch_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0xfe};
  const wire::mac_address receiver_mac{0x02, 0x00, 0x00, 0x00, 0x01, 0x00};
  auto sender_mac = [](std::uint32_t s) {
    return wire::mac_address{0x02, 0x00, 0x00, 0x00, 0x00, static_cast<std::uint8_t>(s)};
  };
  auto sender_ip = [](std::uint32_t s) {
    return ipv4_mapped(198, 18, static_cast<std::uint8_t>(1 + s / 250), static_cast<std::uint8_t>(1 + s % 250));
  };
  const auto receiver_ip = ipv4_mapped(198, 18, 0, 100);

  truth t;
  std::vector<std::uint8_t> frame(16384);
  std::int64_t now_ns = 1'700'000'000'000'000'000;
  // Wire time of one data frame at 100 Gb/s: (frame + FCS + preamble + IFG) x 8 / 100.
  const double frame_ns = (payload + 14 + 20 + 8 + 12 + 16 + 4 + 4 + 20) * 8 / 100.0;
  double clock_fraction = 0;
  bool paused = false;

  auto emit = [&](std::size_t length) {
    packet_view p{.timestamp_ns = now_ns, .interface_id = 0, .original_length = static_cast<std::uint32_t>(length),
                  .bytes = std::span<const std::uint8_t>(frame.data(), std::min<std::size_t>(length, snaplen))};
    if (auto st = writer->write(p); !st.ok()) {
      std::cerr << "bench_make_capture: " << st.message() << "\n";
      std::exit(1);
    }
    ++t.frames;
    clock_fraction += frame_ns;
    now_ns += static_cast<std::int64_t>(clock_fraction);
    clock_fraction -= static_cast<std::int64_t>(clock_fraction);
  };

  std::uniform_int_distribution<std::size_t> pick(0, qps.size() - 1);
  while (t.frames < packets) {
    qp_state& q = qps[pick(rng)];
    const std::uint32_t sender = (q.qp - 0x100) / qps_per_sender;
    const bool ce = uniform(rng) < ce_fraction;

    roce_frame_spec data;
    data.eth.src_mac = sender_mac(sender);
    data.eth.dst_mac = receiver_mac;
    data.eth.vlan_count = 1;
    data.eth.vlans[0] = {.pcp = 3, .vid = 100};
    data.ip.src = sender_ip(sender);
    data.ip.dst = receiver_ip;
    data.ip.dscp = 26;
    data.ip.ecn = ce ? wire::ecn_codepoint::ce : wire::ecn_codepoint::ect0;
    data.udp_src_port = static_cast<std::uint16_t>(0xc000 | (q.qp & 0x3fff));
    data.opcode = wire::roce_opcode::rc_rdma_write_middle;
    data.dest_qp = q.qp + 0x10000;
    data.psn = q.next_psn & 0xffffff;
    data.payload = payload_bytes;
    emit(build_roce_frame(data, frame));
    ++t.roce;
    ++t.data;
    ce ? ++t.ce : ++t.ect0;
    q.next_psn = (q.next_psn + 1) & 0xffffff;

    // The receiver's notification point answers CE with a CNP, rate-limited per QP.
    if (ce && now_ns - q.last_cnp_ns >= 4000 && t.frames < packets) {
      cnp_frame_spec cnp;
      cnp.eth.src_mac = receiver_mac;
      cnp.eth.dst_mac = sender_mac(sender);
      cnp.ip.src = receiver_ip;
      cnp.ip.dst = sender_ip(sender);
      cnp.dest_qp = q.qp;
      emit(build_cnp_frame(cnp, frame));
      ++t.roce;
      ++t.cnp;
      ++t.ect0;
      q.last_cnp_ns = now_ns;
    }

    // Coalesced ACKs: one per 8 data packets of a QP; rarely a NAK (sequence error) and
    // the sender goes back 8 PSNs.
    if (++q.unacked == 8 && t.frames < packets) {
      q.unacked = 0;
      const bool nak = uniform(rng) < 0.002;
      roce_frame_spec ack;
      ack.eth.src_mac = receiver_mac;
      ack.eth.dst_mac = sender_mac(sender);
      ack.eth.vlan_count = 1;
      ack.eth.vlans[0] = {.pcp = 3, .vid = 100};
      ack.ip.src = receiver_ip;
      ack.ip.dst = sender_ip(sender);
      ack.ip.dscp = 26;
      ack.ip.ecn = wire::ecn_codepoint::ect0;
      ack.opcode = wire::roce_opcode::rc_acknowledge;
      ack.dest_qp = q.qp;
      ack.psn = (q.next_psn - 1) & 0xffffff;
      ack.aeth_syndrome = nak ? 0x60 : 0x1f;
      emit(build_roce_frame(ack, frame));
      ++t.roce;
      ++t.ect0;
      nak ? ++t.nak : ++t.ack;
      if (nak) {
        // Go back 8: the next 8 data packets of this QP repeat PSNs already sent.
        q.next_psn = (q.next_psn - 8) & 0xffffff;
        t.retransmits += 8;
      }
    }

    // A pause storm: PFC frames from many switch ports, random priorities and quanta.
    if (pfc_storm > 0 && uniform(rng) < pfc_storm / (1 - pfc_storm) && t.frames < packets) {
      pfc_frame_spec pfc;
      pfc.src_mac = wire::mac_address{0x02, 0x00, 0x00, 0x00, 0x02, static_cast<std::uint8_t>(rng() % senders)};
      pfc.class_enable = static_cast<std::uint16_t>(1 + rng() % 255);
      for (int prio = 0; prio < 8; ++prio)
        if (pfc.class_enable & (1u << prio))
          pfc.quanta[prio] = rng() % 4 == 0 ? 0 : static_cast<std::uint16_t>(1 + rng() % 0xffff);
      emit(build_pfc_frame(pfc, frame));
      ++t.pfc;
    }

    // The congested port pauses its upstream now and then: XOFF, later XON, priority 3.
    if (uniform(rng) < 0.0005 && t.frames < packets) {
      pfc_frame_spec pfc;
      pfc.src_mac = switch_mac;
      pfc.class_enable = 1u << 3;
      pfc.quanta[3] = paused ? 0 : 0xffff;
      paused = !paused;
      emit(build_pfc_frame(pfc, frame));
      ++t.pfc;
    }
  }
  if (auto st = writer->close(); !st.ok()) {
    std::cerr << "bench_make_capture: " << st.message() << "\n";
    return 1;
  }
  // Retransmits are counted as data packets whose PSN is not ahead of the highest sent;
  // a NAK right before the end may leave some of the 8 unsent.
  std::printf(
      "{\"frames\": %llu, \"roce\": %llu, \"data\": %llu, \"ack\": %llu, \"nak\": %llu, \"cnp\": %llu, "
      "\"ce\": %llu, \"ect0\": %llu, \"pfc\": %llu, \"retransmits_at_most\": %llu}\n",
      (unsigned long long)t.frames, (unsigned long long)t.roce, (unsigned long long)t.data,
      (unsigned long long)t.ack, (unsigned long long)t.nak, (unsigned long long)t.cnp, (unsigned long long)t.ce,
      (unsigned long long)t.ect0, (unsigned long long)t.pfc, (unsigned long long)t.retransmits);
  return 0;
}
