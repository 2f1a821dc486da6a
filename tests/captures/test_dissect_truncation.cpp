// dissect() on damaged input: every proper prefix of a frame is truncated and read in
// bounds; every built opcode round-trips with a valid ICRC; single-byte corruptions never crash.
#include "rocelab/captures/dissect.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rocelab/captures/icrc.hpp"

namespace rocelab::captures {
namespace {

using namespace test;

// Every proper prefix of a full frame is flagged truncated, never malformed, and nothing
// past the prefix is read (the copies are exactly sized so ASan sees any overread).
struct truncation_case {
  std::string name;
  std::function<bytes()> make;
};

class TruncatedAtEveryLength : public ::testing::TestWithParam<truncation_case> {};

TEST_P(TruncatedAtEveryLength, IsFlaggedAndStaysInBounds) {
  const bytes full = GetParam().make();
  const dissected_frame whole = run(full);
  ASSERT_FALSE(whole.truncated);
  ASSERT_FALSE(whole.malformed);
  for (std::size_t n = 0; n < full.size(); ++n) {
    const bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const dissected_frame d = run(cut);
    EXPECT_TRUE(d.truncated) << "length " << n;
    EXPECT_FALSE(d.malformed) << "length " << n;
    // What is reported from a prefix agrees with the whole frame.
    if (d.is_roce) {
      EXPECT_EQ(d.psn, whole.psn) << "length " << n;
      EXPECT_EQ(d.roce_payload_length, whole.roce_payload_length) << "length " << n;
    }
    // (A prefix that ends before the GRE header cannot know it is a mirror: its IP
    // layer is the outer one.)
    if (d.ip_version != 0 && d.erspan_type == whole.erspan_type) {
      EXPECT_EQ(d.ip_src, whole.ip_src) << "length " << n;
    }
    EXPECT_EQ(d.erspan_type == 0, whole.erspan_type == 0 || n < 34 + 4) << "length " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Frames, TruncatedAtEveryLength,
    ::testing::Values(
        truncation_case{"roce_vlan_ipv4_write_first",
                        [] {
                          auto s = roce(op::rc_rdma_write_first);
                          s.eth.vlan_count = 2;
                          s.eth.vlans[0].tpid = wire::ethertype::qinq;
                          return with_payload(s, bytes(20, 1));
                        }},
        truncation_case{"roce_ipv4_options_ack",
                        [] {
                          static const bytes options{1, 1, 1, 0};
                          auto s = roce(op::rc_acknowledge);
                          s.ip.ipv4_options = options;
                          return build(s);
                        }},
        truncation_case{"roce_ipv6_read_response_first",
                        [] {
                          auto s = roce(op::rc_rdma_read_response_first);
                          s.ip.version = 6;
                          return with_payload(s, bytes(8, 1));
                        }},
        truncation_case{"cnp",
                        [] {
                          bytes f;
                          EXPECT_GT(append_cnp_frame(cnp_frame_spec{}, f), 0u);
                          return f;
                        }},
        truncation_case{"pfc", [] { return pfc(0xFF, {1, 2, 3, 4, 5, 6, 7, 8}); }},
        truncation_case{"pause", [] { return pause(0xFFFF); }},
        truncation_case{"erspan_ii_roce", [] { return erspan(2, with_payload(roce(), bytes(8, 1))); }},
        truncation_case{"erspan_i_roce", [] { return erspan(1, with_payload(roce(), bytes(8, 1))); }},
        truncation_case{"erspan_iii_platform_pfc",
                        [] { return erspan(3, pfc(1, {1, 0, 0, 0, 0, 0, 0, 0}), 0, true); }}),
    [](const auto& info) { return info.param.name; });

TEST(Dissect, RoundTripsEveryBuiltOpcodeWithValidIcrc) {
  for (unsigned opcode = 0; opcode < 256; ++opcode) {
    const auto& layout = wire::layout_of(static_cast<std::uint8_t>(opcode));
    if (!layout.known) continue;
    auto s = roce(static_cast<std::uint8_t>(opcode));
    s.reth_dma_length = 4096;
    s.aeth_msn = opcode;
    const bytes f = with_payload(s, bytes(opcode % 9, 3));
    const auto d = run(f);
    EXPECT_TRUE(d.is_roce) << opcode;
    EXPECT_FALSE(d.malformed) << opcode;
    EXPECT_EQ(d.bth_opcode, opcode);
    EXPECT_EQ(d.has_reth, wire::has_reth(static_cast<std::uint8_t>(opcode))) << opcode;
    EXPECT_EQ(d.has_aeth, wire::has_aeth(static_cast<std::uint8_t>(opcode))) << opcode;
    if (d.has_reth) {
      EXPECT_EQ(d.reth_dma_length, 4096u);
    }
    if (d.has_aeth) {
      EXPECT_EQ(d.aeth_msn, opcode);
    }
    EXPECT_EQ(d.roce_payload_length, opcode % 9) << opcode;
    EXPECT_EQ(verify_icrc(f, d.ip_offset), icrc_check::valid) << opcode;
  }
}

TEST(Dissect, SurvivesEverySingleByteCorruption) {
  // Not a fuzzer, but every byte of an ERSPAN-wrapped RoCE frame set to each of a few
  // values: no crash, no overread (run under the sanitizer build).
  const bytes base = erspan(3, with_payload(roce(op::rc_rdma_write_first), bytes(8, 1)), 0, true);
  for (std::size_t at = 0; at < base.size(); ++at) {
    for (std::uint8_t v : {0x00, 0x01, 0x0F, 0x45, 0x81, 0xFF}) {
      bytes f = base;
      f[at] = v;
      (void)run(f);
    }
  }
}

}  // namespace
}  // namespace rocelab::captures
