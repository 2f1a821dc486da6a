#pragma once
// The thread and command loop of a verbs job (verbs_job.hpp), apart from the NIC it drives,
// so that its threading and lifetime are tested without an RDMA device.
//
// Ownership: the job owns its worker thread and the thread only borrows the job. The job is
// destroyed by whoever drops its last reference (the agent, when the final report arrives or
// its session ends); that destructor stops the loop and joins the thread. The thread holds no
// reference, so it never runs the destructor and never joins itself.
//
// Lines (see verbs_job.hpp): "endpoints" at start(); "ready" after connect; "sent" per post,
// with "retransmits" and "cnps" null (a hardware NIC keeps no per-QP count of either: not
// measured, never 0); at the end "counters" with the port's run-level counts the transport
// could read, then the final report.
// Private to agents/src/agent.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "job_runner.hpp"

namespace rocelab::agents::agent {

// One host's queue pairs, one per peer host. Called from the job's worker thread only.
class verbs_transport {
 public:
  virtual ~verbs_transport() = default;
  [[nodiscard]] virtual std::string device_name() const = 0;
  // {"<peer>": connection_data as JSON} for every peer.
  [[nodiscard]] virtual nlohmann::json connections() const = 0;
  // Moves every QP to RTS with the peers' ends ({"<peer>": connection_data}).
  [[nodiscard]] virtual status connect(const nlohmann::json& peers) = 0;
  [[nodiscard]] virtual bool has_peer(std::uint32_t peer) const = 0;
  // One message of `bytes` to `peer`, returning once its last write completed; `stopping`
  // is asked between completions and ends the message (cancelled) when it says true.
  [[nodiscard]] virtual status write_message(std::uint32_t peer, std::uint64_t bytes,
                                             const std::function<bool()>& stopping) = 0;
  // The port's counts since the transport was opened, as nic_fleet reads a NIC's counters
  // line ("tx_cnps", "rx_cnps"); a count the host cannot read is absent, not 0.
  [[nodiscard]] virtual nlohmann::json port_counters() = 0;
};

[[nodiscard]] std::shared_ptr<agent::job> make_verbs_worker_job(job_context context,
                                                                std::unique_ptr<verbs_transport> transport);

}  // namespace rocelab::agents::agent
