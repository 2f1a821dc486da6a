#include "verbs_worker.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <boost/asio/post.hpp>

namespace rocelab::agents::agent {

using json = nlohmann::json;

namespace {

constexpr std::uint32_t send_qpn_base = 0x100;  // nic_fleet's send_qpn(dst)

class verbs_worker_job final : public agent::job {
 public:
  verbs_worker_job(job_context context, std::unique_ptr<verbs_transport> transport)
      : context_(std::move(context)), transport_(std::move(transport)) {}

  // Never runs on worker_ (the thread holds no reference to the job), so the join below
  // never waits for the calling thread itself.
  ~verbs_worker_job() override {
    request_stop();
    if (worker_.joinable()) worker_.join();
  }

  void start() override {
    emit({{"ev", "endpoints"}, {"device", transport_->device_name()}, {"connections", transport_->connections()}});
    // The thread borrows the job: the job's owner outlives it by joining it.
    worker_ = std::thread([this] { work(); });
  }

  void cancel() override { request_stop(); }

  void command(const std::vector<std::string>& lines) override {
    {
      std::lock_guard lock(mutex_);
      for (const auto& l : lines) commands_.push_back(l);
    }
    wake_.notify_all();
  }

 private:
  void request_stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
  }

  [[nodiscard]] bool stopping() {
    std::lock_guard lock(mutex_);
    return stopping_;
  }

  // Lines go out on the agent's executor, in the order emitted; the posted handlers hold
  // copies of the callbacks, never the job.
  void emit(json line) {
    asio::post(context_.executor, [events = context_.events, line = line.dump()] { events({line}); });
  }

  void finish(const std::string& error) {
    json counters = transport_->port_counters();
    if (!counters.is_object()) counters = json::object();
    counters["ev"] = "counters";
    emit(std::move(counters));
    protocol::job_report r;
    r.started_ns = started_ns_;
    r.done = true;
    r.error = error;
    asio::post(context_.executor, [report = context_.report, r] { report(r); });
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
        if (auto st = transport_->connect(c.value("peers", json::object())); !st.ok()) {
          error = st.message();
          emit({{"ev", "error"}, {"error", error}});
          break;
        }
        emit({{"ev", "ready"}, {"t_ns", context_.clock.now_ns()}});
      } else if (op == "post") {
        const auto qpn = c.value("qpn", 0u);
        const auto peer = qpn - send_qpn_base;
        const auto bytes = c.value("bytes", std::uint64_t{0});
        if (!transport_->has_peer(peer) || bytes == 0) {
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
        if (auto st = transport_->write_message(peer, bytes, [this] { return stopping(); }); !st.ok()) {
          error = "host " + std::to_string(peer) + ": " + st.message();
          emit({{"ev", "error"}, {"error", error}});
          break;
        }
        // A hardware NIC counts retransmits and CNPs per port, not per QP: null is "not
        // measured" for nic_fleet, never 0.
        emit({{"ev", "sent"},    {"ref", c.value("ref", std::uint64_t{0})}, {"qpn", qpn},
              {"peer", peer},    {"bytes", bytes},                          {"start_ns", start},
              {"end_ns", context_.clock.now_ns()}, {"retransmits", nullptr}, {"cnps", nullptr}});
      } else {
        emit({{"ev", "error"}, {"error", "unknown command: " + line.substr(0, 200)}});
      }
    }
    finish(error);
  }

  job_context context_;
  std::unique_ptr<verbs_transport> transport_;
  std::int64_t started_ns_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> commands_;
  bool stopping_ = false;
  std::thread worker_;  // last: started after, and joined before, everything it uses
};

}  // namespace

std::shared_ptr<agent::job> make_verbs_worker_job(job_context context, std::unique_ptr<verbs_transport> transport) {
  return std::make_shared<verbs_worker_job>(std::move(context), std::move(transport));
}

}  // namespace rocelab::agents::agent
