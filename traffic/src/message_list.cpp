#include "rocelab/traffic/message_list.hpp"

namespace rocelab::traffic {

void message_list_workload::start(fabric::twin::twin_context& ctx) {
  for (const auto& m : messages_) ctx.post(m);
}

}  // namespace rocelab::traffic
