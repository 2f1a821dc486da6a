#include "soft_job.hpp"

namespace rocelab::agents::agent {

result<std::shared_ptr<agent::job>> make_soft_job(asio::any_io_executor, const controller::start_job&,
                                                  const controller::clock_source&, job_report_fn) {
  // Not built yet (issue 6, open): backend virtual still runs its soft NICs from the
  // controller's process (experiments::run_virtual spawns `rocelab nic-run` per host).
  return status(error_code::unsupported,
                "transport soft: this agent does not run soft NIC jobs yet; backend virtual runs its soft NICs "
                "from the controller (experiments::run_virtual)");
}

}  // namespace rocelab::agents::agent
