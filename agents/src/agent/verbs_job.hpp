#pragma once
// A verbs job: RDMA WRITE traffic over rdma-core RC queue pairs on this host's RDMA NIC
// (traffic/verbs/rc_endpoint.hpp), as perftest's ib_write_bw moves it, driven by the
// controller with the same lines as a soft NIC (nic_process.hpp) so that nic_fleet runs
// the twin's workloads on real NICs unchanged. Lines (JSON, relayed as nic_command and
// nic_event):
//   out first:  {"ev":"endpoints","device":D,"connections":{"<peer>":{connection_data}}}
//               one RC QP per peer host, in RESET with its buffer registered
//   in:         {"op":"connect","peers":{"<peer>":{connection_data}}}   the peers' ends
//   out:        {"ev":"ready","t_ns":T}                                  every QP in RTS
//   in:         {"op":"post","qpn":Q,"verb":"write","bytes":B,"ref":R}   Q = 0x100 + peer
//   out:        {"ev":"sent","ref":R,"qpn":Q,"peer":P,"bytes":B,"start_ns":S,"end_ns":E,
//                "retransmits":null,"cnps":null}   the last write's completion arrived; null:
//               not measured (the NIC counts both per port, not per QP)
//   in:         {"op":"stop"}; out: {"ev":"counters","tx_cnps":N,"rx_cnps":M} (the port's
//               hw_counters np_cnp_sent / rp_cnp_handled since the job opened, where the
//               host has them) and the job's final report
// A message larger than the QP's buffer goes as consecutive writes of the buffer's size,
// each signalled, at most tx_depth in flight. Posts run one after another on the job's
// thread (one host's messages are serialized; perftest runs one stream per process too).
// The NIC's congestion counters come from the mlx5 driver (agents/nic), not from here.
// The thread, command loop and lifetime are verbs_worker.hpp's.
//
// transport_config: {"host": i, "hosts": n, "netdev": "eth2", "device": "" (optional),
// "local_ip": "198.18.0.1", "mtu": 1024|4096, "buffer_bytes": B, "tx_depth": D,
// "data_dscp": 26, "data_priority": 3} (the lossless class: GRH traffic class
// traffic_class_of(data_dscp), service level data_priority).
// With no RDMA device the job fails at once: "no RDMA device found (...)".
// Private to agents/src/agent.

#include "job_runner.hpp"

namespace rocelab::agents::agent {

[[nodiscard]] result<std::shared_ptr<agent::job>> make_verbs_job(const protocol::start_job& spec, job_context context);

}  // namespace rocelab::agents::agent
