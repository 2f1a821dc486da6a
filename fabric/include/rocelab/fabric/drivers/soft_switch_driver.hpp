#pragma once
// The switch driver of the virtual lab's soft switch, through its control socket
// (fabric/soft_switch/control_api.hpp). Settings map onto the soft switch's fields:
//   ECN:     queue.ecn.enabled / kmin_bytes / kmax_bytes / pmax (port, priority = queue)
//   PFC:     lossless_priorities. The soft switch's PFC enable is switch-wide, so every
//            pfc_setting of one apply must name the same priorities (else unsupported).
//   buffers: pg.reserve_bytes (size), pg.headroom_bytes (xoff), pg.xon_bytes,
//            pg.xon_offset_bytes, pg.dynamic_th
//   DSCP:    dscp_to_tc entries (switch-wide like PFC: every dscp_map_setting of one
//            apply must name the same entries, else unsupported)
//   mirror:  the mirror op (enabled, direction, truncate_bytes, erspan 0|2 by dst_ip);
//            the session always mirrors every port to the lab's mirror port.
// The snapshot holds each touched (field, port, priority)'s previous value and the
// previous mirror session; apply sends all its fields as one all-or-none "set".

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/fabric/drivers/switch_driver.hpp"

namespace rocelab::fabric::drivers {

struct soft_switch_driver_options {
  std::string control_socket;  // the lab's control socket (lab_state::control_socket)
  std::chrono::milliseconds timeout{5000};
};

class soft_switch_driver final : public switch_driver {
 public:
  // Connects and reads the port names; errors name the socket.
  [[nodiscard]] static result<std::unique_ptr<soft_switch_driver>> connect(soft_switch_driver_options options);

  [[nodiscard]] std::string_view kind() const noexcept override { return "soft"; }
  [[nodiscard]] result<switch_settings> read_settings(const std::vector<std::string>& ports) override;
  [[nodiscard]] status apply(const switch_settings& settings) override;
  [[nodiscard]] status restore() override;
  // Sets raw control-API fields ([{field, value, port?, priority?}], the switch's own
  // names, e.g. pfc.watchdog.enabled), snapshotted like apply's and put back by restore().
  [[nodiscard]] status apply_fields(const nlohmann::json& fields);
  [[nodiscard]] bool has_snapshot() const noexcept override { return !snapshot_fields_.empty() || snapshot_mirror_; }
  [[nodiscard]] result<std::vector<switch_counter>> read_counters() override;

  [[nodiscard]] const std::vector<std::string>& ports() const noexcept { return port_names_; }

 private:
  explicit soft_switch_driver(soft_switch_driver_options options) : options_(std::move(options)) {}
  // One request, one response; {"ok":false} becomes an error carrying the switch's message.
  [[nodiscard]] result<nlohmann::json> call(const nlohmann::json& request);
  [[nodiscard]] result<int> port_index(const std::string& name) const;

  soft_switch_driver_options options_;
  std::vector<std::string> port_names_;
  nlohmann::json snapshot_fields_ = nlohmann::json::array();  // [{field, value, port, priority?}]
  std::optional<nlohmann::json> snapshot_mirror_;
};

}  // namespace rocelab::fabric::drivers
