// One request to a virtual lab's soft switch over its control socket, for lab tests: the
// reply, or {"ok": false, "error": ...} when the socket or the call fails.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rocelab/fabric/soft_switch/control_client.hpp"

namespace rocelab::test {

inline nlohmann::json switch_call(const std::string& control_socket, const nlohmann::json& req) {
  auto c = fabric::soft_switch::control_client::connect(control_socket);
  if (!c) return {{"ok", false}, {"error", c.error().message()}};
  auto r = c->call(req);
  if (!r) return {{"ok", false}, {"error", r.error().message()}};
  return *r;
}

}  // namespace rocelab::test
