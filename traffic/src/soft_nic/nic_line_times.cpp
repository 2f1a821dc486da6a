#include "rocelab/traffic/soft_nic/nic_line_times.hpp"

#include <array>
#include <string_view>

namespace rocelab::traffic::soft_nic {

namespace {

constexpr std::array<const char*, 1> command_fields{"at_ns"};
constexpr std::array<const char*, 5> event_fields{"t_ns", "start_ns", "first_tx_ns", "last_tx_ns", "end_ns"};

template <std::size_t n>
void map_fields(nlohmann::json& j, const std::array<const char*, n>& fields, const clock_map& map) {
  if (!j.is_object()) return;
  for (const char* k : fields)
    if (auto f = j.find(k); f != j.end() && f->is_number_integer()) *f = map(f->get<std::int64_t>());
}

template <std::size_t n>
std::string map_line(const std::string& line, const std::array<const char*, n>& fields, const clock_map& map) {
  bool named = false;
  for (const char* k : fields) named = named || line.find("\"" + std::string(k) + "\"") != std::string::npos;
  if (!named) return line;
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object()) return line;
  map_fields(j, fields, map);
  return j.dump();
}

}  // namespace

void map_command_times(nlohmann::json& command, const clock_map& map) { map_fields(command, command_fields, map); }
void map_event_times(nlohmann::json& event, const clock_map& map) { map_fields(event, event_fields, map); }

std::string map_command_times(const std::string& line, const clock_map& map) {
  return map_line(line, command_fields, map);
}
std::string map_event_times(const std::string& line, const clock_map& map) { return map_line(line, event_fields, map); }

}  // namespace rocelab::traffic::soft_nic
