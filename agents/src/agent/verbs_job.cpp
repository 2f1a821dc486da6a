#include "verbs_job.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "rocelab/fabric/lossless_class.hpp"
#include "rocelab/traffic/verbs/path_mtu.hpp"
#include "rocelab/traffic/verbs/rc_endpoint.hpp"
#include "verbs_worker.hpp"

namespace rocelab::agents::agent {

namespace verbs = rocelab::traffic::verbs;
using json = nlohmann::json;

namespace {

struct verbs_config {
  std::uint32_t host = 0;
  std::uint32_t hosts = 0;
  verbs::endpoint_options endpoint;
  std::uint32_t tx_depth = 64;
};

result<verbs_config> parse_config(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return status(error_code::invalid_argument, "verbs job: transport_config is not a JSON object");
  verbs_config c;
  try {
    c.host = j.at("host").get<std::uint32_t>();
    c.hosts = j.at("hosts").get<std::uint32_t>();
    c.endpoint.netdev = j.value("netdev", std::string());
    c.endpoint.device = j.value("device", std::string());
    c.endpoint.local_ip = j.at("local_ip").get<std::string>();
    c.endpoint.buffer_bytes = j.value("buffer_bytes", std::size_t{1} << 20);
    c.tx_depth = j.value("tx_depth", 64u);
    auto mtu = verbs::mtu_from_bytes(j.value("mtu", std::int64_t{1024}));
    if (!mtu) return mtu.error().with_context("verbs job: transport_config");
    c.endpoint.mtu = *mtu;
    // The lossless class (fabric/lossless_class.hpp): GRH traffic class from the DSCP, SL = priority.
    const auto data_dscp = j.value("data_dscp", 26u);
    const auto data_priority = j.value("data_priority", 3u);
    if (data_dscp > 63 || data_priority > 7)
      return status(error_code::invalid_argument, "verbs job: transport_config: data_dscp must be 0..63 and "
                                                  "data_priority 0..7");
    c.endpoint.traffic_class = fabric::traffic_class_of(static_cast<std::uint8_t>(data_dscp));
    c.endpoint.service_level = static_cast<std::uint8_t>(data_priority);
  } catch (const json::exception& e) {
    return status(error_code::invalid_argument, std::string("verbs job: transport_config: ") + e.what());
  }
  if (c.hosts < 2 || c.host >= c.hosts)
    return status(error_code::invalid_argument, "verbs job: transport_config: host must index hosts (at least 2)");
  if (c.tx_depth == 0 || c.tx_depth > c.endpoint.max_send_wr)
    return status(error_code::invalid_argument, "verbs job: tx_depth must be 1.." + std::to_string(c.endpoint.max_send_wr));
  return c;
}

// The QPs of one host, one rc_endpoint per peer host, on the job's worker thread.
class endpoint_transport final : public verbs_transport {
 public:
  endpoint_transport(verbs_config config, std::map<std::uint32_t, std::unique_ptr<verbs::rc_endpoint>> endpoints)
      : config_(std::move(config)), endpoints_(std::move(endpoints)) {
    hw_counters_dir_ = config_.endpoint.sysfs_root + "/class/infiniband/" + endpoints_.begin()->second->device_name() +
                       "/ports/" + std::to_string(config_.endpoint.port) + "/hw_counters";
    at_open_ = read_port_counters();
  }

  std::string device_name() const override { return endpoints_.begin()->second->device_name(); }

  json connections() const override {
    json out = json::object();
    for (const auto& [peer, ep] : endpoints_) out[std::to_string(peer)] = verbs::to_json(ep->local());
    return out;
  }

  status connect(const json& peers) override {
    for (auto& [peer, ep] : endpoints_) {
      const auto it = peers.find(std::to_string(peer));
      if (it == peers.end()) return status(error_code::invalid_argument, "connect: no connection data for host " + std::to_string(peer));
      auto data = verbs::connection_data_from_json(*it);
      if (!data) return data.error().with_context("connect: host " + std::to_string(peer));
      ROCELAB_RETURN_IF_ERROR(ep->connect(*data).with_context("connecting to host " + std::to_string(peer)));
    }
    return status::success();
  }

  bool has_peer(std::uint32_t peer) const override { return endpoints_.contains(peer); }

  // One message: consecutive writes of at most the buffer's size, tx_depth in flight.
  status write_message(std::uint32_t peer, std::uint64_t bytes, const std::function<bool()>& stopping) override {
    verbs::rc_endpoint& ep = *endpoints_.at(peer);
    const auto chunk = static_cast<std::uint64_t>(config_.endpoint.buffer_bytes);
    std::uint64_t posted = 0, completed = 0, wr = 0;
    // A send completion carries no length: the writes of one QP complete in order.
    std::deque<std::uint32_t> in_flight;
    std::array<ibv_wc, 32> wcs{};
    const std::int64_t deadline = protocol::monotonic_ns() + 600'000'000'000;
    while (completed < bytes) {
      while (posted < bytes && in_flight.size() < config_.tx_depth) {
        const auto len = static_cast<std::uint32_t>(std::min(chunk, bytes - posted));
        ROCELAB_RETURN_IF_ERROR(ep.post_write(++wr, 0, 0, len, true));
        posted += len;
        in_flight.push_back(len);
      }
      auto n = ep.poll(wcs);
      if (!n) return n.error();
      for (std::size_t i = 0; i < *n && !in_flight.empty(); ++i) {
        completed += in_flight.front();
        in_flight.pop_front();
      }
      if (protocol::monotonic_ns() > deadline) return status(error_code::cancelled, "a write did not complete in 600 s");
      if (stopping()) return status(error_code::cancelled, "stopped");
    }
    return status::success();
  }

  // mlx5's hw_counters: np_cnp_sent (CNPs this port sent as notification point),
  // rp_cnp_handled (CNPs it acted on as reaction point). Port totals, every QP included.
  json port_counters() override {
    const auto now = read_port_counters();
    json out = json::object();
    for (const auto& [name, key] : {std::pair{"np_cnp_sent", "tx_cnps"}, std::pair{"rp_cnp_handled", "rx_cnps"}}) {
      const auto before = at_open_.find(name);
      const auto after = now.find(name);
      if (before != at_open_.end() && after != now.end() && after->second >= before->second)
        out[key] = after->second - before->second;
    }
    return out;
  }

 private:
  std::map<std::string, std::uint64_t> read_port_counters() const {
    std::map<std::string, std::uint64_t> out;
    for (const char* name : {"np_cnp_sent", "rp_cnp_handled"}) {
      std::ifstream in(hw_counters_dir_ + "/" + name);
      std::uint64_t v = 0;
      if (in >> v) out[name] = v;
    }
    return out;
  }

  verbs_config config_;
  std::map<std::uint32_t, std::unique_ptr<verbs::rc_endpoint>> endpoints_;  // by peer host
  std::string hw_counters_dir_;
  std::map<std::string, std::uint64_t> at_open_;
};

}  // namespace

result<std::shared_ptr<agent::job>> make_verbs_job(const protocol::start_job& spec, job_context context) {
  auto config = parse_config(spec.transport_config);
  if (!config) return config.error();
  // Fails first, and clearly, where there is no RDMA device.
  ROCELAB_RETURN_IF_ERROR(verbs::list_devices(config->endpoint.sysfs_root).error().with_context("transport verbs"));
  std::map<std::uint32_t, std::unique_ptr<verbs::rc_endpoint>> endpoints;
  for (std::uint32_t peer = 0; peer < config->hosts; ++peer) {
    if (peer == config->host) continue;
    auto o = config->endpoint;
    // Initial PSNs differ per direction, as nic_fleet's do for the soft NICs.
    o.initial_psn = (config->host * 0x10000u + peer * 0x100u + 1) & 0xFFFFFFu;
    auto ep = verbs::rc_endpoint::open(std::move(o));
    if (!ep) return ep.error().with_context("transport verbs: the QP to host " + std::to_string(peer));
    endpoints[peer] = std::move(*ep);
  }
  return make_verbs_worker_job(std::move(context),
                               std::make_unique<endpoint_transport>(std::move(*config), std::move(endpoints)));
}

}  // namespace rocelab::agents::agent
