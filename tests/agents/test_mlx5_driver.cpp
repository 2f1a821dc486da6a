#include "rocelab/agents/nic/mlx5_driver.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "nic_test_support.hpp"
#include "rocelab/agents/agent/settings_guard.hpp"
#include "rocelab/agents/nic/counter_sampler.hpp"

namespace rocelab::agents::nic {
namespace {

using testing::copy_recorded_tree;
using testing::picture;
using testing::temp_dir;
namespace fs = std::filesystem;

constexpr const char* ifname = "enp1s0f0np0";
const std::string ecn_dir = "devices/pci0000:00/0000:00:02.0/0000:01:00.0/net/enp1s0f0np0/ecn/";

// Recorded `ethtool -S` lines of an mlx5 port (a few of its ~1,000), served instead of the
// ioctl, since the recorded port does not exist on this host.
result<std::vector<nic_counter>> recorded_ethtool(const std::string&) {
  return std::vector<nic_counter>{{"rx_packets", 9990000},         {"rx_bytes", 40012345678},
                                  {"rx_prio3_bytes", 40000000000}, {"rx_prio3_packets", 9980000},
                                  {"rx_prio3_pause", 120},         {"rx_prio3_pause_duration", 61440},
                                  {"tx_prio3_pause", 7},           {"tx_prio3_pause_transition", 7},
                                  {"rx_discards_phy", 0},          {"rx_out_of_buffer", 0},
                                  {"tx_pause_ctrl_phy", 7},        {"link_down_events_phy", 0}};
}

result<std::unique_ptr<mlx5_driver>> open_recorded(const std::string& root, std::shared_ptr<sysfs_io> io = nullptr) {
  mlx5_options o;
  o.ifname = ifname;
  o.sysfs_root = root;
  o.ethtool = recorded_ethtool;
  o.io = std::move(io);
  return mlx5_driver::open(std::move(o));
}

// The real file access, except that writing one chosen file (one chosen value, or any when
// `rejected` is empty) fails with EINVAL, as an mlx5 knob does when it rejects a value.
class failing_write_io final : public sysfs_io {
 public:
  explicit failing_write_io(std::string suffix, std::string rejected = {})
      : inner_(posix_sysfs_io()), suffix_(std::move(suffix)), rejected_(std::move(rejected)) {}
  result<std::string> read(const std::string& path) override { return inner_->read(path); }
  status write(const std::string& path, const std::string& value) override {
    if (armed && path.ends_with(suffix_) && (rejected_.empty() || value == rejected_)) return {error_code::io_error, "writing " + path + ": Invalid argument", EINVAL};
    return inner_->write(path, value);
  }
  result<std::vector<std::string>> list_files(const std::string& dir) override { return inner_->list_files(dir); }
  bool armed = true;

 private:
  std::shared_ptr<sysfs_io> inner_;
  std::string suffix_;
  std::string rejected_;
};

TEST(mlx5_driver, finds_the_rdma_device_through_the_netdev_and_reads_every_knob) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ((*d)->rdma_device(), "mlx5_0");
  EXPECT_EQ((*d)->port(), 1u);
  auto settings = (*d)->read_settings();
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  EXPECT_EQ(settings->size(), 16u + 3u + 16u);  // 16 rp knobs (rpg_gd too), 3 np knobs, 2 x 8 enables
  EXPECT_EQ(settings->at("roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(settings->at("roce_rp/rpg_gd"), "11");
  EXPECT_EQ(settings->at("roce_np/min_time_between_cnps"), "4");
  EXPECT_EQ(settings->at("roce_np/enable/3"), "1");
  EXPECT_EQ(settings->at("roce_rp/enable/0"), "0");
}

TEST(mlx5_driver, apply_writes_the_knobs_and_restore_puts_back_exactly_what_was_there) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  const auto before = picture(root);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  auto st = (*d)->apply({{"rpg_time_reset", "100"},  // a bare mlx5 name, as nic.dcqcn.rpg_time_reset
                         {"roce_np/min_time_between_cnps", "0"},
                         {"roce_rp/enable/5", "1"}});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(testing::read_file(fs::path(root) / ecn_dir / "roce_rp/rpg_time_reset"), "100\n");
  EXPECT_EQ(testing::read_file(fs::path(root) / ecn_dir / "roce_np/min_time_between_cnps"), "0\n");
  EXPECT_EQ(testing::read_file(fs::path(root) / ecn_dir / "roce_rp/enable/5"), "1\n");
  EXPECT_EQ((*d)->snapshot().at("roce_rp/rpg_time_reset"), "300");

  // A second apply changes a knob again: restore goes back to the first snapshot.
  ASSERT_TRUE((*d)->apply({{"roce_rp/rpg_time_reset", "55"}, {"dce_tcp_g", "1000"}}).ok());
  EXPECT_EQ((*d)->snapshot().at("roce_rp/rpg_time_reset"), "300");
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_FALSE((*d)->has_snapshot());
  EXPECT_EQ(picture(root), before);
}

TEST(mlx5_driver, a_wrong_name_or_value_writes_nothing) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  const auto before = picture(root);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  struct case_t {
    const char* what;
    nic_settings settings;
    error_code code;
    const char* in_message;
  };
  const case_t cases[] = {
      {"unknown knob", {{"rpg_time_reset", "100"}, {"rpg_nonsense", "1"}}, error_code::not_found, "rpg_nonsense"},
      {"not a number", {{"rpg_time_reset", "abc"}}, error_code::invalid_argument, "not a non-negative integer"},
      {"negative", {{"rpg_ai_rate", "-5"}}, error_code::invalid_argument, "not a non-negative integer"},
      {"outside the model's range", {{"dce_tcp_g", "5000"}}, error_code::invalid_argument, "dce_tcp_g"},
      {"enable is 0 or 1", {{"roce_np/enable/3", "2"}}, error_code::invalid_argument, "0 or 1"},
      {"alpha 1.0 (1024) is the model's, not the firmware's",
       {{"initial_alpha_value", "1024"}},
       error_code::invalid_argument,
       "outside the mlx5 firmware's range 0..1023"},
      {"a path outside ecn/", {{"../../mtu", "1500"}}, error_code::not_found, "../../mtu"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto st = (*d)->apply(c.settings);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_NE(st.message().find(c.in_message), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(ifname), std::string::npos) << st.message();
    EXPECT_FALSE((*d)->has_snapshot());
  }
  EXPECT_EQ(picture(root), before);
}

TEST(mlx5_driver, restore_after_a_partial_apply_undoes_the_writes_that_happened) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  const auto before = picture(root);
  auto io = std::make_shared<failing_write_io>("roce_rp/rpg_threshold", "3");
  auto d = open_recorded(root, io);
  ASSERT_TRUE(d.ok());
  // Written in name order: rpg_ai_rate succeeds, rpg_threshold fails, rpg_time_reset is never reached.
  auto st = (*d)->apply({{"roce_rp/rpg_ai_rate", "10"}, {"roce_rp/rpg_threshold", "3"}, {"roce_rp/rpg_time_reset", "55"}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("roce_rp/rpg_threshold"), std::string::npos) << st.message();
  EXPECT_EQ(st.sys_errno(), EINVAL);
  EXPECT_EQ(testing::read_file(fs::path(root) / ecn_dir / "roce_rp/rpg_ai_rate"), "10\n");
  EXPECT_NE(picture(root), before);
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(picture(root), before);
}

TEST(mlx5_driver, a_failed_restore_keeps_the_snapshot_for_a_retry) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  const auto before = picture(root);
  auto io = std::make_shared<failing_write_io>("roce_np/cnp_dscp");
  io->armed = false;
  auto d = open_recorded(root, io);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->apply({{"cnp_dscp", "26"}, {"rpg_min_rate", "10"}}).ok());
  io->armed = true;
  auto st = (*d)->restore();
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE((*d)->has_snapshot());
  EXPECT_EQ((*d)->snapshot().size(), 1u);  // rpg_min_rate was restored and forgotten
  io->armed = false;
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(picture(root), before);
}

TEST(mlx5_driver, counters_are_hw_counters_and_the_ethtool_pause_counters) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  auto counters = (*d)->read_counters();
  ASSERT_TRUE(counters.ok()) << counters.error().message();
  std::map<std::string, std::uint64_t> by_name;
  for (const auto& c : *counters) by_name[c.name] = c.value;
  EXPECT_EQ(by_name.at("np_cnp_sent"), 18234u);
  EXPECT_EQ(by_name.at("rp_cnp_handled"), 17990u);
  EXPECT_EQ(by_name.at("np_ecn_marked_roce_packets"), 20511u);
  EXPECT_EQ(by_name.at("out_of_sequence"), 37u);
  EXPECT_FALSE(by_name.contains("lifespan")) << "lifespan is a setting, not a counter";
  EXPECT_EQ(by_name.at("rx_prio3_pause"), 120u);
  EXPECT_EQ(by_name.at("rx_prio3_pause_duration"), 61440u);
  EXPECT_EQ(by_name.at("tx_prio3_pause"), 7u);
  EXPECT_EQ(by_name.at("tx_pause_ctrl_phy"), 7u);
  EXPECT_TRUE(by_name.contains("rx_discards_phy"));
  EXPECT_FALSE(by_name.contains("rx_bytes")) << "only the congestion counters of ethtool -S";
  EXPECT_FALSE(by_name.contains("link_down_events_phy"));
}

TEST(mlx5_driver, a_damaged_counter_file_is_an_error_naming_it) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  std::ofstream(fs::path(root) / "class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent") << "n/a\n";
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  auto counters = (*d)->read_counters();
  ASSERT_FALSE(counters.ok());
  EXPECT_EQ(counters.error().code(), error_code::malformed_input);
  EXPECT_NE(counters.error().message().find("np_cnp_sent"), std::string::npos);
}

TEST(mlx5_driver, says_clearly_what_is_missing) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  {
    mlx5_options o;
    o.ifname = "eth9";
    o.sysfs_root = root;
    auto d = mlx5_driver::open(o);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code(), error_code::not_found);
    EXPECT_NE(d.error().message().find("no interface eth9"), std::string::npos) << d.error().message();
  }
  {
    mlx5_options o;
    o.ifname = "../net";
    o.sysfs_root = root;
    EXPECT_EQ(mlx5_driver::open(o).error().code(), error_code::invalid_argument);
  }
  // Without the links from the netdev to an RDMA device.
  fs::remove(fs::path(root) / "class/infiniband/mlx5_0");
  fs::remove_all(fs::path(root) / "devices/pci0000:00/0000:00:02.0/0000:01:00.0/infiniband");
  mlx5_options o;
  o.ifname = ifname;
  o.sysfs_root = root;
  auto d = mlx5_driver::open(o);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code(), error_code::unavailable);
  EXPECT_NE(d.error().message().find("no RDMA device found for enp1s0f0np0"), std::string::npos) << d.error().message();
  EXPECT_NE(d.error().message().find(root + "/class/net/enp1s0f0np0/device/infiniband"), std::string::npos)
      << d.error().message();
}

// ---- upstream kernels: the DCQCN knobs in debugfs (tests/data/mlx5-debugfs) ----

const std::string cc_params_dir = "kernel/debug/mlx5/0000:01:00.0/cc_params/";

std::string copy_upstream_tree(const temp_dir& dir) {
  const fs::path root = dir.path() / "sys";
  fs::copy(fs::path(ROCELAB_SOURCE_DIR) / "tests/data/mlx5-debugfs", root,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return root.string();
}

TEST(mlx5_driver_debugfs, an_upstream_host_is_driven_through_cc_params_under_the_sysfs_names) {
  temp_dir dir;
  const auto root = copy_upstream_tree(dir);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ((*d)->knob_source(), "debugfs");
  EXPECT_EQ((*d)->knob_directory(), root + "/" + cc_params_dir.substr(0, cc_params_dir.size() - 1));
  EXPECT_EQ((*d)->rdma_device(), "mlx5_0");
  auto settings = (*d)->read_settings();
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  EXPECT_EQ(settings->size(), 22u);  // 16 rp, 4 np, 2 without a sysfs name; no enables
  EXPECT_EQ(settings->at("roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(settings->at("roce_rp/clamp_tgt_rate_after_time_inc"), "1");
  EXPECT_EQ(settings->at("roce_np/cnp_802p_prio"), "6");
  EXPECT_EQ(settings->at("roce_np/cnp_dscp"), "48");
  EXPECT_EQ(settings->at("cc_params/rtt_resp_dscp"), "0");
}

TEST(mlx5_driver_debugfs, apply_and_restore_work_on_cc_params_as_on_sysfs) {
  temp_dir dir;
  const auto root = copy_upstream_tree(dir);
  const auto before = picture(root);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_TRUE((*d)->apply({{"rpg_time_reset", "100"}, {"roce_np/cnp_802p_prio", "3"}, {"initial_alpha_value", "512"}}).ok());
  EXPECT_EQ(testing::read_file(fs::path(root) / cc_params_dir / "rp_time_reset"), "100\n");
  EXPECT_EQ(testing::read_file(fs::path(root) / cc_params_dir / "np_cnp_prio"), "3\n");
  EXPECT_EQ(testing::read_file(fs::path(root) / cc_params_dir / "rp_initial_alpha_value"), "512\n");
  EXPECT_EQ((*d)->snapshot().at("roce_np/cnp_802p_prio"), "6");
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(picture(root), before);
}

TEST(mlx5_driver_debugfs, a_per_priority_enable_of_1_is_accepted_unwritten_and_said_so) {
  temp_dir dir;
  const auto root = copy_upstream_tree(dir);
  const auto before = picture(root);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok()) << d.error().message();
  auto st = (*d)->apply({{"roce_rp/enable/3", "1"}, {"roce_np/enable/3", "1"}, {"rpg_time_reset", "100"}});
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(testing::read_file(fs::path(root) / cc_params_dir / "rp_time_reset"), "100\n");
  ASSERT_EQ((*d)->not_set().size(), 2u);
  EXPECT_TRUE((*d)->not_set()[0].starts_with("roce_np/enable/3 = 1 not set: ")) << (*d)->not_set()[0];
  EXPECT_NE((*d)->not_set()[1].find("no per-priority enable"), std::string::npos) << (*d)->not_set()[1];
  EXPECT_NE((*d)->not_set()[1].find("ROCE_CC_PRIO_MASK_P1"), std::string::npos) << (*d)->not_set()[1];
  EXPECT_FALSE((*d)->snapshot().contains("roce_rp/enable/3"));  // nothing of it to put back
  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_EQ(picture(root), before);
}

TEST(mlx5_driver_debugfs, a_per_priority_enable_of_0_is_refused_with_the_reason_and_writes_nothing) {
  temp_dir dir;
  const auto root = copy_upstream_tree(dir);
  const auto before = picture(root);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok()) << d.error().message();
  auto st = (*d)->apply({{"rpg_time_reset", "100"}, {"roce_rp/enable/3", "0"}});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), error_code::unsupported);
  EXPECT_NE(st.message().find("roce_rp/enable/3 = 0"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("cannot be turned off"), std::string::npos) << st.message();
  EXPECT_EQ(picture(root), before);
  // An enable outside 0..7 is no setting at all.
  EXPECT_EQ((*d)->apply({{"roce_rp/enable/8", "1"}}).code(), error_code::not_found);
}

// What the lab backend sends for DCQCN on priority 3 (experiments::mlx5_knob_values: the
// knobs, then enable/<prio> on both points), applied through the agent's settings guard
// on each flavour of host.
TEST(mlx5_settings_guard, the_lab_backends_settings_apply_on_mlnx_ofed_sysfs_and_on_upstream_debugfs) {
  struct flavour {
    const char* name;
    std::string (*copy)(const temp_dir&);
    std::size_t not_set;
  };
  const flavour flavours[] = {{"MLNX_OFED sysfs", copy_recorded_tree, 0}, {"upstream debugfs", copy_upstream_tree, 2}};
  for (const auto& f : flavours) {
    SCOPED_TRACE(f.name);
    temp_dir dir;
    const auto root = f.copy(dir);
    const auto before = picture(root);
    agent::settings_guard guard(root);
    const std::vector<protocol::setting> settings = {{ifname, "roce_rp/rpg_time_reset", "100"},
                                                     {ifname, "roce_rp/rpg_ai_rate", "10"},
                                                     {ifname, "roce_np/min_time_between_cnps", "4"},
                                                     {ifname, "roce_rp/enable/3", "1"},
                                                     {ifname, "roce_np/enable/3", "1"}};
    auto previous = guard.apply("mlx5", settings);
    ASSERT_TRUE(previous.ok()) << previous.error().message();
    EXPECT_EQ(guard.not_set().size(), f.not_set);
    for (const auto& line : guard.not_set()) EXPECT_TRUE(line.starts_with(std::string(ifname) + ": roce_")) << line;
    ASSERT_TRUE(guard.restore().ok());
    EXPECT_EQ(picture(root), before);
  }
}

TEST(mlx5_driver_debugfs, the_mlnx_ofed_sysfs_wins_where_the_host_has_both) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  fs::create_directories(fs::path(root) / cc_params_dir);
  { std::ofstream(fs::path(root) / cc_params_dir / "rp_time_reset") << "300\n"; }
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ((*d)->knob_source(), "sysfs");
}

TEST(mlx5_driver_debugfs, with_neither_the_error_names_both_places) {
  temp_dir dir;
  const auto root = copy_upstream_tree(dir);
  fs::remove_all(fs::path(root) / "kernel");
  auto d = open_recorded(root);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code(), error_code::unavailable);
  EXPECT_NE(d.error().message().find("/ecn/roce_rp"), std::string::npos) << d.error().message();
  EXPECT_NE(d.error().message().find(root + "/kernel/debug/mlx5/0000:01:00.0/cc_params"), std::string::npos)
      << d.error().message();
  EXPECT_NE(d.error().message().find("debugfs"), std::string::npos) << d.error().message();
}

// This host: loopback exists but is no mlx5 port.
TEST(mlx5_driver, on_this_host_loopback_has_no_dcqcn_knobs) {
  mlx5_options o;
  o.ifname = "lo";
  auto d = mlx5_driver::open(o);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code(), error_code::unavailable);
  EXPECT_NE(d.error().message().find("/sys/class/net/lo/ecn"), std::string::npos) << d.error().message();
}

TEST(counter_sampler, sample_once_stamps_every_counter_with_the_clock) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  std::int64_t now = 1000;
  counter_sampler sampler(**d, {7, 2, std::chrono::milliseconds(10), [&] { return now; }, 100});
  ASSERT_TRUE(sampler.sample_once().ok());
  std::ofstream(fs::path(root) / "class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent") << "20000\n";
  now = 2000;
  ASSERT_TRUE(sampler.sample_once().ok());
  auto samples = sampler.take();
  std::vector<counter_sample> cnp;
  for (const auto& s : samples)
    if (s.name == "np_cnp_sent") cnp.push_back(s);
  ASSERT_EQ(cnp.size(), 2u);
  EXPECT_EQ(cnp[0].t_ns, 1000);
  EXPECT_EQ(cnp[0].value, 18234u);
  EXPECT_EQ(cnp[1].t_ns, 2000);
  EXPECT_EQ(cnp[1].value, 20000u);
  EXPECT_EQ(cnp[0].device, 7u);
  EXPECT_EQ(cnp[0].port, 2u);
  EXPECT_TRUE(sampler.take().empty());
}

TEST(counter_sampler, the_thread_samples_until_stopped_and_once_more_at_the_end) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  std::atomic<std::int64_t> clock{0};
  counter_sampler sampler(**d, {0, 0, std::chrono::milliseconds(1), [&] { return clock.fetch_add(10); }, 1000});
  sampler.start();
  // Bounded wait for three rounds (not a timing assertion: it only needs them to happen).
  for (int i = 0; i < 5000 && sampler.rounds() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto before_stop = sampler.rounds();
  ASSERT_GE(before_stop, 3u);
  ASSERT_TRUE(sampler.stop().ok());
  EXPECT_GT(sampler.rounds(), before_stop - 1);
  const auto samples = sampler.take();
  const std::size_t per_round = samples.size() / sampler.rounds();
  EXPECT_EQ(samples.size() % sampler.rounds(), 0u);
  EXPECT_GT(per_round, 30u);
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_GE(samples[i].t_ns, samples[i - 1].t_ns);
}

TEST(counter_sampler, stops_by_itself_after_max_samples_rounds) {
  temp_dir dir;
  const auto root = copy_recorded_tree(dir);
  auto d = open_recorded(root);
  ASSERT_TRUE(d.ok());
  counter_sampler sampler(**d, {0, 0, std::chrono::milliseconds(0), [] { return std::int64_t{0}; }, 5});
  sampler.start();
  for (int i = 0; i < 5000 && sampler.rounds() < 5; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(sampler.stop().ok());
  EXPECT_EQ(sampler.rounds(), 5u);
}

}  // namespace
}  // namespace rocelab::agents::nic
