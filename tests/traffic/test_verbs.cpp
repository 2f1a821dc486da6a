#include "rocelab/traffic/verbs/rc_endpoint.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <type_traits>

#include "rocelab/traffic/verbs/path_mtu.hpp"
#include "rocelab/traffic/verbs/signal_schedule.hpp"

namespace rocelab::traffic::verbs {
namespace {

const std::string recorded_sysfs = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/mlx5-sysfs";

// ---- GID selection on the recorded mlx5 tree (tests/data/mlx5-sysfs) ----

TEST(gid_table, reads_the_used_entries_with_their_roce_version_and_netdev) {
  auto table = read_gid_table(recorded_sysfs, "mlx5_0", 1);
  ASSERT_TRUE(table.ok()) << table.error().message();
  ASSERT_EQ(table->size(), 4u) << "entries 4-7 are unused (zero GID, no type)";
  EXPECT_EQ((*table)[0].type, gid_type::ib_roce_v1);
  EXPECT_EQ((*table)[1].type, gid_type::roce_v2);
  EXPECT_EQ((*table)[3].type, gid_type::roce_v2);
  EXPECT_EQ((*table)[3].netdev, "enp1s0f0np0");
  EXPECT_EQ(format_gid((*table)[3].gid), "0000:0000:0000:0000:0000:ffff:c612:0001");
}

TEST(gid_table, selects_the_roce_v2_entry_of_the_traffics_address) {
  auto table = read_gid_table(recorded_sysfs, "mlx5_0", 1);
  ASSERT_TRUE(table.ok());
  auto v4 = select_roce_v2_gid(*table, "198.18.0.1");
  ASSERT_TRUE(v4.ok()) << v4.error().message();
  EXPECT_EQ(v4->index, 3u) << "index 2 is the same address as RoCE v1";
  auto ll = select_roce_v2_gid(*table, "fe80::e42:a1ff:fe01:203");
  ASSERT_TRUE(ll.ok()) << ll.error().message();
  EXPECT_EQ(ll->index, 1u);
  auto none = select_roce_v2_gid(*table, "198.18.0.9");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code(), error_code::not_found);
  EXPECT_NE(none.error().message().find("3: 0000:0000:0000:0000:0000:ffff:c612:0001 v2"), std::string::npos)
      << none.error().message();
  EXPECT_EQ(select_roce_v2_gid(*table, "not-an-ip").error().code(), error_code::invalid_argument);
}

TEST(gid_table, a_missing_device_or_port_names_the_path) {
  auto t = read_gid_table(recorded_sysfs, "mlx5_9", 1);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code(), error_code::not_found);
  EXPECT_NE(t.error().message().find("class/infiniband/mlx5_9/ports/1/gids"), std::string::npos);
}

struct gid_text_case {
  const char* text;
  bool ok;
};
class sysfs_gid_text : public ::testing::TestWithParam<gid_text_case> {};
TEST_P(sysfs_gid_text, parses_only_eight_groups_of_four_hex_digits) {
  const auto& c = GetParam();
  auto g = parse_sysfs_gid(c.text);
  EXPECT_EQ(g.ok(), c.ok) << c.text;
  if (g.ok()) {
    EXPECT_EQ(format_gid(*g), std::string(c.text));
  }
}
INSTANTIATE_TEST_SUITE_P(table, sysfs_gid_text,
                         ::testing::Values(gid_text_case{"fe80:0000:0000:0000:0e42:a1ff:fe01:0203", true},
                                           gid_text_case{"0000:0000:0000:0000:0000:ffff:c612:0001", true},
                                           gid_text_case{"fe80::e42:a1ff:fe01:203", false},
                                           gid_text_case{"fe80:0000:0000:0000:0e42:a1ff:fe01:020g", false},
                                           gid_text_case{"fe80-0000:0000:0000:0e42:a1ff:fe01:0203", false},
                                           gid_text_case{"", false}),
                         [](const auto& info) { return "case" + std::to_string(info.index); });

TEST(gid_table, roce_version_names_are_the_kernels) {
  EXPECT_EQ(parse_gid_type("RoCE v2"), gid_type::roce_v2);
  EXPECT_EQ(parse_gid_type("IB/RoCE v1"), gid_type::ib_roce_v1);
  EXPECT_EQ(parse_gid_type("roce v2"), gid_type::unknown);
}

// ---- connection data, as exchanged through the controller ----

connection_data sample() {
  connection_data c;
  c.qpn = 0x00ABCD;
  c.psn = 0xFFFFFE;
  c.gid = *gid_of_address("198.18.0.1");
  c.rkey = 0xDEADBEEF;
  c.addr = 0x00007F12'34567000ull;
  c.length = 1 << 20;
  c.mtu = IBV_MTU_4096;
  return c;
}

TEST(connection_data, round_trips_through_48_big_endian_bytes) {
  const auto bytes = to_bytes(sample());
  static_assert(std::tuple_size_v<decltype(bytes)> == 48);
  EXPECT_EQ(bytes[0], 1) << "version";
  EXPECT_EQ(bytes[4], 0x00);  // qpn, big-endian
  EXPECT_EQ(bytes[5], 0x00);
  EXPECT_EQ(bytes[6], 0xAB);
  EXPECT_EQ(bytes[7], 0xCD);
  auto back = connection_data_from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, sample());
}

TEST(connection_data, rejects_what_is_not_a_record) {
  auto bytes = to_bytes(sample());
  EXPECT_EQ(connection_data_from_bytes(bytes.data(), 47).error().code(), error_code::malformed_input);
  bytes[0] = 9;
  EXPECT_NE(connection_data_from_bytes(bytes.data(), bytes.size()).error().message().find("version 9"), std::string::npos);
  bytes = to_bytes(sample());
  bytes[4] = 0x01;  // QPN 0x0100ABCD: beyond 24 bits
  EXPECT_FALSE(connection_data_from_bytes(bytes.data(), bytes.size()).ok());
}

TEST(connection_data, round_trips_through_json_with_a_readable_gid) {
  const auto j = to_json(sample());
  EXPECT_EQ(j["gid"], "0000:0000:0000:0000:0000:ffff:c612:0001");
  auto back = connection_data_from_json(j);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, sample());
  auto bad = j;
  bad["gid"] = "nonsense";
  EXPECT_FALSE(connection_data_from_json(bad).ok());
  bad = j;
  bad.erase("rkey");
  EXPECT_FALSE(connection_data_from_json(bad).ok());
}

// ---- RAII handles ----

TEST(verbs_handles, are_move_only_owners_that_ignore_null) {
  static_assert(!std::is_copy_constructible_v<qp_ptr> && std::is_nothrow_move_constructible_v<qp_ptr>);
  static_assert(!std::is_copy_constructible_v<rc_endpoint>);
  // Empty owners call no destroy verb (which would crash on a null handle).
  context_ptr c;
  pd_ptr pd;
  mr_ptr mr;
  cq_ptr cq;
  qp_ptr qp;
  comp_channel_ptr ch;
  EXPECT_FALSE(c || pd || mr || cq || qp || ch);
}

// ---- this host ----

// With no RDMA device (this machine has none, and its kernel offers no rdma_rxe), both
// the listing and an endpoint say so in those words; on a host with a device, the
// endpoint opens and its QP number and buffer are usable.
TEST(verbs_endpoint, says_clearly_when_there_is_no_rdma_device) {
  auto devices = list_devices();
  endpoint_options o;
  o.local_ip = "198.18.0.1";
  auto ep = rc_endpoint::open(o);
  if (devices.ok()) {
    GTEST_SKIP() << "this host has RDMA devices (" << devices->front() << "); the no-device path is not reachable";
  }
  EXPECT_EQ(devices.error().code(), error_code::unavailable);
  EXPECT_NE(devices.error().message().find("no RDMA device found"), std::string::npos) << devices.error().message();
  EXPECT_NE(devices.error().message().find("/sys/class/infiniband"), std::string::npos) << devices.error().message();
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.error().code(), error_code::unavailable);
  EXPECT_NE(ep.error().message().find("no RDMA device found"), std::string::npos) << ep.error().message();
}

TEST(verbs_endpoint, needs_an_address_to_choose_a_gid) {
  auto ep = rc_endpoint::open({});
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.error().code(), error_code::invalid_argument);
}

// ---- path MTU (path_mtu.hpp): perftest's set_mtu, refusing what it would guess at ----

TEST(path_mtu, takes_only_the_ib_mtu_sizes_and_names_them_otherwise) {
  const std::pair<std::int64_t, ibv_mtu> good[] = {
      {256, IBV_MTU_256}, {512, IBV_MTU_512}, {1024, IBV_MTU_1024}, {2048, IBV_MTU_2048}, {4096, IBV_MTU_4096}};
  for (const auto& [bytes, mtu] : good) {
    auto m = mtu_from_bytes(bytes);
    ASSERT_TRUE(m.ok()) << bytes;
    EXPECT_EQ(*m, mtu);
    EXPECT_EQ(mtu_bytes(mtu), static_cast<std::uint32_t>(bytes));
  }
  for (std::int64_t bytes : {0, 128, 1500, 3000, 8192, 9000, -1}) {
    auto m = mtu_from_bytes(bytes);
    ASSERT_FALSE(m.ok()) << bytes << " must not become some other MTU";
    EXPECT_EQ(m.error().code(), error_code::invalid_argument);
    EXPECT_NE(m.error().message().find("256, 512, 1024, 2048 or 4096"), std::string::npos) << m.error().message();
  }
}

struct mtu_case {
  const char* name;
  ibv_mtu requested, active;
  std::uint8_t peer;
  ibv_mtu expected;
  bool lowered;
};

TEST(path_mtu, is_the_least_of_request_active_port_and_peer) {
  const mtu_case cases[] = {
      {"request below the port", IBV_MTU_1024, IBV_MTU_4096, 0, IBV_MTU_1024, false},
      {"4096 on a 1500-byte netdev (active 1024)", IBV_MTU_4096, IBV_MTU_1024, 0, IBV_MTU_1024, true},
      {"4096 on a 4200-byte netdev", IBV_MTU_4096, IBV_MTU_4096, 0, IBV_MTU_4096, false},
      {"the peer asks for less", IBV_MTU_4096, IBV_MTU_4096, IBV_MTU_2048, IBV_MTU_2048, true},
      {"port and peer both lower", IBV_MTU_4096, IBV_MTU_2048, IBV_MTU_1024, IBV_MTU_1024, true},
      {"the peer asks for more", IBV_MTU_1024, IBV_MTU_4096, IBV_MTU_4096, IBV_MTU_1024, false},
  };
  for (const auto& c : cases) {
    auto d = decide_path_mtu(c.requested, c.active, c.peer);
    ASSERT_TRUE(d.ok()) << c.name << ": " << d.error().message();
    EXPECT_EQ(d->mtu, c.expected) << c.name;
    EXPECT_EQ(!d->note.empty(), c.lowered) << c.name << ": " << d->note;
  }
  auto d = decide_path_mtu(IBV_MTU_4096, IBV_MTU_1024, 0);
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->note.find("4096 lowered to the port's active MTU 1024"), std::string::npos) << d->note;
}

TEST(path_mtu, refuses_values_that_are_no_ibv_mtu) {
  EXPECT_EQ(decide_path_mtu(static_cast<ibv_mtu>(9), IBV_MTU_4096, 0).error().code(), error_code::invalid_argument);
  EXPECT_EQ(decide_path_mtu(IBV_MTU_1024, static_cast<ibv_mtu>(0), 0).error().code(), error_code::invalid_argument);
  EXPECT_EQ(decide_path_mtu(IBV_MTU_1024, IBV_MTU_4096, 7).error().code(), error_code::invalid_argument);
}

// ---- selective signalling (signal_schedule.hpp): ib_write_bw's cq_mod ----

// Runs a schedule against an in-order CQ: returns the signalled WR indexes and checks the
// accounting; a window full of unsignalled WRs would hang the sender (never completes).
std::vector<std::uint64_t> run_schedule(std::uint32_t every, std::uint32_t depth, std::uint64_t total) {
  signal_schedule s(every, depth);
  std::vector<std::uint64_t> signalled;
  std::deque<std::uint64_t> cq;  // signalled WRs in flight, in order
  for (int guard = 0; s.completed() < total && guard < 1'000'000; ++guard) {
    while (s.posted() < total && s.in_flight() < depth) {
      const std::uint64_t id = s.posted();
      if (s.post(total)) {
        signalled.push_back(id);
        cq.push_back(id);
      }
    }
    if (cq.empty()) {
      ADD_FAILURE() << "every=" << every << " depth=" << depth << ": the window holds no signalled WR";
      break;
    }
    cq.pop_front();
    (void)s.complete();
  }
  EXPECT_EQ(s.completed(), total);
  EXPECT_EQ(s.posted(), total);
  EXPECT_EQ(s.in_flight(), 0u);
  return signalled;
}

TEST(signal_schedule, signals_one_in_cq_mod_and_the_last) {
  const auto sig = run_schedule(100, 128, 1000);
  ASSERT_EQ(sig.size(), 10u);
  for (std::size_t i = 0; i < sig.size(); ++i) EXPECT_EQ(sig[i], i * 100 + 99);
  const auto tail = run_schedule(100, 128, 250);
  EXPECT_EQ(tail, (std::vector<std::uint64_t>{99, 199, 249})) << "the last write is always signalled";
}

TEST(signal_schedule, cq_mod_1_signals_every_write) {
  EXPECT_EQ(run_schedule(1, 8, 20).size(), 20u);
}

TEST(signal_schedule, never_leaves_a_full_window_without_a_signalled_write) {
  for (std::uint32_t every : {1u, 3u, 7u, 64u, 100u, 1000u})
    for (std::uint32_t depth : {1u, 2u, 5u, 64u, 128u})
      for (std::uint64_t total : {1u, 2u, 63u, 64u, 65u, 1000u}) (void)run_schedule(every, depth, total);
  EXPECT_EQ(signal_schedule(1000, 64).every(), 64u) << "cq_mod above tx_depth is lowered to it, as perftest does";
  EXPECT_EQ(signal_schedule(0, 0).every(), 1u);
}

TEST(signal_schedule, a_completion_retires_its_batch) {
  signal_schedule s(4, 16);
  for (int i = 0; i < 10; ++i) (void)s.post(10);
  EXPECT_EQ(s.complete(), 4u);
  EXPECT_EQ(s.complete(), 4u);
  EXPECT_EQ(s.complete(), 2u) << "the last write closes a short batch";
  EXPECT_EQ(s.complete(), 0u) << "no signalled write left";
  EXPECT_EQ(s.completed(), 10u);
}

}  // namespace
}  // namespace rocelab::traffic::verbs
