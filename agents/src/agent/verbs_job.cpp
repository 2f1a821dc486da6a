#include "verbs_job.hpp"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "rocelab/fabric/lossless_class.hpp"
#include "rocelab/traffic/verbs/rc_endpoint.hpp"

namespace rocelab::agents::agent {

namespace verbs = rocelab::traffic::verbs;
using json = nlohmann::json;

namespace {

constexpr std::uint32_t send_qpn_base = 0x100;  // nic_fleet's send_qpn(dst)

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
    // The lossless class (fabric/lossless_class.hpp): GRH traffic class from the DSCP, SL = priority.
    const auto data_dscp = j.value("data_dscp", 26u);
    const auto data_priority = j.value("data_priority", 3u);
    if (data_dscp > 63 || data_priority > 7)
      return status(error_code::invalid_argument, "verbs job: transport_config: data_dscp must be 0..63 and "
                                                  "data_priority 0..7");
    c.endpoint.traffic_class = fabric::traffic_class_of(static_cast<std::uint8_t>(data_dscp));
    c.endpoint.service_level = static_cast<std::uint8_t>(data_priority);
    const int mtu = j.value("mtu", 1024);
    c.endpoint.mtu = mtu == 4096 ? IBV_MTU_4096 : mtu == 2048 ? IBV_MTU_2048 : mtu == 512 ? IBV_MTU_512 : IBV_MTU_1024;
  } catch (const json::exception& e) {
    return status(error_code::invalid_argument, std::string("verbs job: transport_config: ") + e.what());
  }
  if (c.hosts < 2 || c.host >= c.hosts)
    return status(error_code::invalid_argument, "verbs job: transport_config: host must index hosts (at least 2)");
  if (c.tx_depth == 0 || c.tx_depth > c.endpoint.max_send_wr)
    return status(error_code::invalid_argument, "verbs job: tx_depth must be 1.." + std::to_string(c.endpoint.max_send_wr));
  return c;
}

class verbs_job final : public agent::job, public std::enable_shared_from_this<verbs_job> {
 public:
  verbs_job(protocol::start_job spec, job_context context, verbs_config config,
            std::map<std::uint32_t, std::unique_ptr<verbs::rc_endpoint>> endpoints)
      : spec_(std::move(spec)), context_(std::move(context)), config_(std::move(config)), endpoints_(std::move(endpoints)) {}

  ~verbs_job() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  void start() override {
    json connections = json::object();
    for (const auto& [peer, ep] : endpoints_) connections[std::to_string(peer)] = verbs::to_json(ep->local());
    emit({{"ev", "endpoints"}, {"device", endpoints_.begin()->second->device_name()}, {"connections", connections}});
    worker_ = std::thread([self = shared_from_this()] { self->work(); });
  }

  void cancel() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
  }

  void command(const std::vector<std::string>& lines) override {
    {
      std::lock_guard lock(mutex_);
      for (const auto& l : lines) commands_.push_back(l);
    }
    wake_.notify_all();
  }

 private:
  // Lines go out on the agent's executor, in the order emitted.
  void emit(json line) {
    asio::post(context_.executor, [events = context_.events, line = line.dump()] { events({line}); });
  }

  void finish(const std::string& error) {
    emit({{"ev", "counters"}});
    protocol::job_report r;
    r.started_ns = started_ns_;
    r.done = true;
    r.error = error;
    asio::post(context_.executor, [report = context_.report, r] { report(r); });
  }

  status connect(const json& peers) {
    for (auto& [peer, ep] : endpoints_) {
      const auto it = peers.find(std::to_string(peer));
      if (it == peers.end()) return status(error_code::invalid_argument, "connect: no connection data for host " + std::to_string(peer));
      auto data = verbs::connection_data_from_json(*it);
      if (!data) return data.error().with_context("connect: host " + std::to_string(peer));
      ROCELAB_RETURN_IF_ERROR(ep->connect(*data).with_context("connecting to host " + std::to_string(peer)));
    }
    return status::success();
  }

  // One message: consecutive writes of at most the buffer's size, tx_depth in flight.
  status write_message(verbs::rc_endpoint& ep, std::uint64_t bytes) {
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
      std::unique_lock lock(mutex_);
      if (stopping_) return status(error_code::cancelled, "stopped");
    }
    return status::success();
  }

  void work() {
    started_ns_ = context_.clock.now_ns();
    std::string error;
    for (;;) {
      std::string line;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !commands_.empty(); });
        if (commands_.empty()) break;  // stopping
        line = std::move(commands_.front());
        commands_.pop_front();
      }
      const json c = json::parse(line, nullptr, false);
      const std::string op = c.is_object() ? c.value("op", "") : "";
      if (op == "stop") break;
      if (op == "connect") {
        if (auto st = connect(c.value("peers", json::object())); !st.ok()) {
          error = st.message();
          emit({{"ev", "error"}, {"error", error}});
          break;
        }
        emit({{"ev", "ready"}, {"t_ns", context_.clock.now_ns()}});
      } else if (op == "post") {
        const auto qpn = c.value("qpn", 0u);
        const auto peer = qpn - send_qpn_base;
        const auto bytes = c.value("bytes", std::uint64_t{0});
        auto ep = endpoints_.find(peer);
        if (ep == endpoints_.end() || bytes == 0) {
          emit({{"ev", "error"}, {"error", "post: no QP " + std::to_string(qpn) + " or no bytes"}});
          continue;
        }
        // Armed start: an at_ns (the agent's clock) holds the post until that instant.
        if (const auto at_ns = c.value("at_ns", std::int64_t{0}); at_ns > context_.clock.now_ns()) {
          std::unique_lock lock(mutex_);
          if (wake_.wait_for(lock, std::chrono::nanoseconds(at_ns - context_.clock.now_ns()), [&] { return stopping_; }))
            break;
        }
        const std::int64_t start = context_.clock.now_ns();
        if (auto st = write_message(*ep->second, bytes); !st.ok()) {
          error = "host " + std::to_string(peer) + ": " + st.message();
          emit({{"ev", "error"}, {"error", error}});
          break;
        }
        emit({{"ev", "sent"},    {"ref", c.value("ref", std::uint64_t{0})}, {"qpn", qpn},
              {"peer", peer},    {"bytes", bytes},                          {"start_ns", start},
              {"end_ns", context_.clock.now_ns()}, {"retransmits", 0},      {"cnps", 0}});
      } else {
        emit({{"ev", "error"}, {"error", "unknown command: " + line.substr(0, 200)}});
      }
    }
    finish(error);
  }

  protocol::start_job spec_;
  job_context context_;
  verbs_config config_;
  std::map<std::uint32_t, std::unique_ptr<verbs::rc_endpoint>> endpoints_;  // by peer host
  std::int64_t started_ns_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> commands_;
  bool stopping_ = false;
  std::thread worker_;
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
  return std::shared_ptr<agent::job>(
      std::make_shared<verbs_job>(spec, std::move(context), std::move(*config), std::move(endpoints)));
}

}  // namespace rocelab::agents::agent
