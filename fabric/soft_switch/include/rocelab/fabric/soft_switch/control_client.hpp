#pragma once
// A client of the soft switch's control socket (control_api.hpp): one connection, one
// request line out, one response line back, with a deadline on each call. Used by
// `rocelab switch-ctl`, `rocelab lab status`, the tests and the switch driver.

#include <chrono>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::fabric::soft_switch {

class control_client {
 public:
  [[nodiscard]] static result<control_client> connect(const std::string& socket_path,
                                                      std::chrono::milliseconds timeout = std::chrono::seconds(2));
  // Sends `request` (one JSON object) and returns the response object; a transport
  // failure or a response that is not JSON is an error, {"ok":false,...} is not.
  [[nodiscard]] result<nlohmann::json> call(const nlohmann::json& request,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The same with a raw line (for the CLI, which passes the user's JSON through).
  [[nodiscard]] result<std::string> call_line(std::string_view line,
                                              std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  explicit control_client(unique_fd fd) : fd_(std::move(fd)) {}
  unique_fd fd_;
  std::string pending_;
};

}  // namespace rocelab::fabric::soft_switch
