#pragma once
// A soft job: the soft RoCEv2 NIC (traffic/soft_nic) in this agent's host namespace.
// Private to agents/src/agent.

#include "job_runner.hpp"

namespace rocelab::agents::agent {

[[nodiscard]] result<std::shared_ptr<agent::job>> make_soft_job(asio::any_io_executor executor,
                                                                const controller::start_job& spec,
                                                                const controller::clock_source& clock,
                                                                job_report_fn report);

}  // namespace rocelab::agents::agent
