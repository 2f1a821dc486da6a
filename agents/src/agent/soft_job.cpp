#include "soft_job.hpp"

namespace rocelab::agents::agent {

result<std::shared_ptr<agent::job>> make_soft_job(asio::any_io_executor, const controller::start_job&,
                                                  const controller::clock_source&, job_report_fn) {
  return status(error_code::unavailable, "transport soft: not available in this agent yet");
}

}  // namespace rocelab::agents::agent
