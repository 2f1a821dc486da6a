#pragma once
// RAII owners for the ibv_* objects, one deleter per C type (rdma-core's verbs.h). They are
// created in the order context, completion channel, PD, MR, CQ, QP (rc_pingpong.c,
// perftest) and an owner keeps them as members in that order, so destruction runs in
// reverse: QP before CQ and MR, those before the PD, the channel and the context last.
// Deleters never throw; a failed destroy (EBUSY: something still uses it) is logged.

#include <infiniband/verbs.h>

#include <memory>

namespace rocelab::traffic::verbs {

namespace detail {
void log_destroy_failure(const char* what, int rc) noexcept;
}

struct device_list_deleter {
  void operator()(ibv_device** list) const noexcept { ibv_free_device_list(list); }
};
struct context_deleter {
  void operator()(ibv_context* c) const noexcept {
    if (int rc = ibv_close_device(c); rc != 0) detail::log_destroy_failure("ibv_close_device", rc);
  }
};
struct comp_channel_deleter {
  void operator()(ibv_comp_channel* c) const noexcept {
    if (int rc = ibv_destroy_comp_channel(c); rc != 0) detail::log_destroy_failure("ibv_destroy_comp_channel", rc);
  }
};
struct pd_deleter {
  void operator()(ibv_pd* pd) const noexcept {
    if (int rc = ibv_dealloc_pd(pd); rc != 0) detail::log_destroy_failure("ibv_dealloc_pd", rc);
  }
};
struct mr_deleter {
  void operator()(ibv_mr* mr) const noexcept {
    if (int rc = ibv_dereg_mr(mr); rc != 0) detail::log_destroy_failure("ibv_dereg_mr", rc);
  }
};
struct cq_deleter {
  void operator()(ibv_cq* cq) const noexcept {
    if (int rc = ibv_destroy_cq(cq); rc != 0) detail::log_destroy_failure("ibv_destroy_cq", rc);
  }
};
struct qp_deleter {
  void operator()(ibv_qp* qp) const noexcept {
    if (int rc = ibv_destroy_qp(qp); rc != 0) detail::log_destroy_failure("ibv_destroy_qp", rc);
  }
};

using device_list_ptr = std::unique_ptr<ibv_device*, device_list_deleter>;
using context_ptr = std::unique_ptr<ibv_context, context_deleter>;
using comp_channel_ptr = std::unique_ptr<ibv_comp_channel, comp_channel_deleter>;
using pd_ptr = std::unique_ptr<ibv_pd, pd_deleter>;
using mr_ptr = std::unique_ptr<ibv_mr, mr_deleter>;
using cq_ptr = std::unique_ptr<ibv_cq, cq_deleter>;
using qp_ptr = std::unique_ptr<ibv_qp, qp_deleter>;

}  // namespace rocelab::traffic::verbs
