#include "job_runner.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "soft_job.hpp"
#if ROCELAB_HAVE_VERBS
#include "rocelab/traffic/verbs/rc_endpoint.hpp"
#include "verbs_job.hpp"
#endif

namespace rocelab::agents::agent {


namespace {

// Waits for the agreed instant on the agent's start gate and reports when it actually
// started: the scale bench and the clock tests measure start skew with it. After the
// instant the gate's thread only reads the clock and posts; the report is built and sent
// on the executor.
class timer_job final : public agent::job, public std::enable_shared_from_this<timer_job> {
 public:
  timer_job(asio::any_io_executor ex, protocol::start_job spec, protocol::clock_source clock,
            std::shared_ptr<start_gate> gate, job_report_fn report)
      : executor_(std::move(ex)), spec_(std::move(spec)), clock_(clock), gate_(std::move(gate)), report_(std::move(report)) {}

  void start() override {
    // The instant in CLOCK_MONOTONIC: the agent's clock is CLOCK_MONOTONIC + offset_ns.
    const std::int64_t at_monotonic_ns = spec_.start_at_ns - clock_.offset_ns;
    armed_ = gate_->arm(at_monotonic_ns, [weak = weak_from_this(), ex = executor_](std::int64_t fired_ns) {
      asio::post(ex, [weak, fired_ns] {
        if (auto self = weak.lock()) self->fired(fired_ns);
      });
    });
  }
  // The report goes out from the executor, not from inside the caller (which may be
  // walking the agent's job map).
  void cancel() override {
    gate_->cancel(armed_);
    asio::post(executor_, [self = shared_from_this()] { self->finish(0, "stopped before its start instant"); });
  }

 private:
  void fired(std::int64_t fired_monotonic_ns) { finish(fired_monotonic_ns + clock_.offset_ns, {}); }

  void finish(std::int64_t started_ns, std::string error) {
    if (done_) return;
    done_ = true;
    protocol::job_report r;
    r.started_ns = started_ns;
    r.done = true;
    r.error = std::move(error);
    report_(std::move(r));
  }

  asio::any_io_executor executor_;
  protocol::start_job spec_;
  protocol::clock_source clock_;
  std::shared_ptr<start_gate> gate_;
  job_report_fn report_;
  std::uint64_t armed_ = 0;
  bool done_ = false;
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
          std::make_shared<timer_job>(context.executor, spec, context.clock, context.gate, std::move(context.report)));
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
