#include "soft_job.hpp"

#include <signal.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <nlohmann/json.hpp>

#include "rocelab/traffic/soft_nic/nic_line_times.hpp"
#include "rocelab/traffic/soft_nic/nic_links.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace rocelab::agents::agent {

namespace nic = rocelab::traffic::soft_nic;
using json = nlohmann::json;

namespace {

constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);
// After the stop line (or EOF) the NIC writes its counters and exits within
// milliseconds; past this it is killed.
constexpr std::chrono::milliseconds stop_grace{2000};

class soft_job final : public agent::job, public std::enable_shared_from_this<soft_job> {
 public:
  soft_job(protocol::start_job spec, job_context context, nic::nic_child child)
      : spec_(std::move(spec)),
        context_(std::move(context)),
        pid_(child.pid),
        to_nic_(std::move(child.to_child)),
        from_nic_(context_.executor, child.from_child.release()),
        timeout_(context_.executor),
        kill_timer_(context_.executor) {}

  ~soft_job() override {
    if (pid_ > 0) (void)nic::reap_nic_process(pid_, std::chrono::milliseconds(0));
  }

  void start() override {
    started_ns_ = context_.clock.now_ns();
    asio::co_spawn(context_.executor, [self = shared_from_this()] { return self->read_loop(); }, asio::detached);
    if (spec_.timeout_ms > 0) {
      timeout_.expires_after(std::chrono::milliseconds(spec_.timeout_ms));
      timeout_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
        if (auto self = weak.lock(); self && !ec) self->stop("timeout of " + std::to_string(self->spec_.timeout_ms) + " ms");
      });
    }
  }

  void cancel() override { stop("stopped"); }

  void command(const std::vector<std::string>& lines) override {
    if (!to_nic_.valid()) return;
    std::string batch;
    for (const auto& l : lines) {
      if (l.find('\n') != std::string::npos) continue;  // one line is one command
      batch += to_nic_clock(l);
      batch += '\n';
    }
    if (!nic::write_line(to_nic_.get(), batch)) to_nic_.reset();
  }

 private:
  // Closing the NIC's stdin stops it (nic_process.hpp: EOF does what stop does); the kill
  // timer ends one that does not.
  void stop(const std::string& why) {
    if (stopping_) return;
    stopping_ = true;
    if (error_.empty() && why != "stopped") error_ = why;
    to_nic_.reset();
    kill_timer_.expires_after(stop_grace);
    kill_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
      auto self = weak.lock();
      if (!self || ec || self->pid_ <= 0) return;
      ::kill(self->pid_, SIGKILL);
    });
  }

  // An armed post's at_ns, from the agent's clock to the NIC's CLOCK_MONOTONIC.
  std::string to_nic_clock(const std::string& line) const {
    if (context_.clock.offset_ns == 0) return line;
    return traffic::soft_nic::map_command_times(line, [this](std::int64_t t) { return t - context_.clock.offset_ns; });
  }

  // Agent clock = CLOCK_MONOTONIC + offset; the NIC's lines carry CLOCK_MONOTONIC times.
  std::string to_agent_clock(const std::string& line) const {
    if (context_.clock.offset_ns == 0) return line;
    return traffic::soft_nic::map_event_times(line, [this](std::int64_t t) { return t + context_.clock.offset_ns; });
  }

  asio::awaitable<void> read_loop() {
    auto self = shared_from_this();
    std::string buffer;
    char chunk[16384];
    for (;;) {
      auto [ec, n] = co_await from_nic_.async_read_some(asio::buffer(chunk), nothrow);
      if (n > 0) buffer.append(chunk, n);
      std::vector<std::string> lines;
      std::size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        lines.push_back(to_agent_clock(buffer.substr(0, nl)));
        buffer.erase(0, nl + 1);
        if (lines.size() == protocol::max_lines_per_relay) {
          context_.events(std::move(lines));
          lines.clear();
        }
      }
      if (!lines.empty()) context_.events(std::move(lines));
      if (ec) break;  // EOF: the NIC has exited (or is about to)
    }
    timeout_.cancel();
    const std::string how = nic::reap_nic_process(pid_, stop_grace);
    pid_ = -1;
    kill_timer_.cancel();
    to_nic_.reset();
    protocol::job_report r;
    r.started_ns = started_ns_;
    r.done = true;
    if (!error_.empty())
      r.error = error_;
    else if (how != "exit 0")
      r.error = "the soft NIC ended (" + how + "); see its log";
    context_.report(std::move(r));
  }

  protocol::start_job spec_;
  job_context context_;
  pid_t pid_ = -1;
  unique_fd to_nic_;
  asio::posix::stream_descriptor from_nic_;
  asio::steady_timer timeout_;
  asio::steady_timer kill_timer_;
  std::int64_t started_ns_ = 0;
  bool stopping_ = false;
  std::string error_;
};

}  // namespace

result<std::shared_ptr<agent::job>> make_soft_job(const protocol::start_job& spec, job_context context) {
  const json config = json::parse(spec.transport_config, nullptr, false);
  if (!config.is_object())
    return status(error_code::invalid_argument, "soft job " + std::to_string(spec.job) + ": transport_config is not a JSON object");
  if (auto c = nic::nic_process_config_from_json(config); !c)
    return c.error().with_context("soft job " + std::to_string(spec.job) + ": transport_config");
  const std::string log = context.log_dir.empty()
                              ? std::string()
                              : context.log_dir + "/nic-" + context.agent_name + "-" + std::to_string(spec.job) + ".log";
  auto child = nic::spawn_nic_process(context.rocelab_binary, context.netns, log);
  if (!child) return child.error().with_context("soft job: starting the NIC in " +
                                                 (context.netns.empty() ? std::string("this namespace") : context.netns));
  if (!nic::write_line(child->to_child.get(), config.dump() + "\n")) {
    const std::string how = nic::reap_nic_process(child->pid, std::chrono::milliseconds(500));
    return status(error_code::unavailable, "soft job: the NIC took no config (" + how + ")");
  }
  return std::shared_ptr<agent::job>(std::make_shared<soft_job>(spec, std::move(context), std::move(*child)));
}

}  // namespace rocelab::agents::agent
