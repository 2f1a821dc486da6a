#pragma once
// The `twin` backend: each repeat is the fabric model in virtual time (fabric/twin), the
// spec built into its config and workload (spec/build.hpp). No I/O; deterministic for a
// seed; safe to run from several threads at once. The cancel hook is polled while the twin
// runs (twin_config::cancel_requested).

#include "rocelab/experiments/run/backend.hpp"

namespace rocelab::experiments {

class twin_backend final : public backend {
 public:
  [[nodiscard]] result<experiment_result> run(const experiment_spec& spec, const run_hooks& hooks) const override;
};

}  // namespace rocelab::experiments
