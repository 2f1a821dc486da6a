#include "job_runner.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "soft_job.hpp"
#if ROCELAB_HAVE_VERBS
#include "rocelab/traffic/verbs/rc_endpoint.hpp"
#include "verbs_job.hpp"
#endif

namespace rocelab::agents::agent {


namespace {

// Waits for the agreed instant and reports when it actually started: the scale bench and
// the clock tests measure start skew with it.
class timer_job final : public agent::job, public std::enable_shared_from_this<timer_job> {
 public:
  timer_job(asio::any_io_executor ex, protocol::start_job spec, protocol::clock_source clock, job_report_fn report)
      : timer_(ex), spec_(std::move(spec)), clock_(clock), report_(std::move(report)) {}

  void start() override {
    asio::co_spawn(timer_.get_executor(), [self = shared_from_this()] { return self->run(); }, asio::detached);
  }
  void cancel() override {
    cancelled_ = true;
    timer_.cancel();
  }

 private:
  asio::awaitable<void> run() {
    const std::int64_t wait_ns = spec_.start_at_ns - clock_.now_ns();
    if (wait_ns > 0) {
      timer_.expires_after(std::chrono::nanoseconds(wait_ns));
      co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    protocol::job_report r;
    r.started_ns = clock_.now_ns();
    r.done = true;
    if (cancelled_) r.error = "stopped before its start instant";
    report_(std::move(r));
  }

  asio::steady_timer timer_;
  protocol::start_job spec_;
  protocol::clock_source clock_;
  job_report_fn report_;
  bool cancelled_ = false;
};

}  // namespace

// Only what this agent really runs; the controller plans jobs from this list.
std::vector<std::string> available_transports() {
  std::vector<std::string> out = {"timer", "soft"};
#if ROCELAB_HAVE_VERBS
  if (traffic::verbs::list_devices().ok()) out.push_back("verbs");
#endif
  return out;
}

result<std::shared_ptr<agent::job>> make_job(const protocol::start_job& spec, job_context context) {
  switch (spec.kind) {
    case protocol::job_kind::timer:
      return std::shared_ptr<agent::job>(
          std::make_shared<timer_job>(context.executor, spec, context.clock, std::move(context.report)));
    case protocol::job_kind::soft:
      return make_soft_job(spec, std::move(context));
    case protocol::job_kind::verbs:
#if ROCELAB_HAVE_VERBS
      return make_verbs_job(spec, std::move(context));
#else
      return status(error_code::unavailable,
                    "transport verbs: this agent was built without rdma-core (libibverbs-dev); run soft jobs or "
                    "rebuild with it");
#endif
  }
  return status(error_code::invalid_argument, "unknown job kind");
}

}  // namespace rocelab::agents::agent
