// A soft NIC's lines moved between clocks by the carriers that relay them
// (traffic/soft_nic/nic_line_times.hpp): commands' armed instants, events' times.
#include "rocelab/traffic/soft_nic/nic_line_times.hpp"

#include <gtest/gtest.h>

namespace rocelab::traffic::soft_nic {
namespace {

const clock_map plus_1000 = [](std::int64_t t) { return t + 1000; };

TEST(nic_line_times, a_commands_armed_instant_moves_and_nothing_else) {
  const auto moved = nlohmann::json::parse(
      map_command_times(R"({"op":"post","at_ns":5000,"t_ns":7,"bytes":4096})", plus_1000));
  EXPECT_EQ(moved["at_ns"], 6000);
  EXPECT_EQ(moved["t_ns"], 7) << "a command's other fields are not times to move";
  EXPECT_EQ(moved["bytes"], 4096);
  const std::string plain = R"({"op":"post","bytes":4096})";
  EXPECT_EQ(map_command_times(plain, plus_1000), plain) << "a post sent at once is passed on as it is";
}

TEST(nic_line_times, an_events_times_move) {
  nlohmann::json e{{"ev", "done"}, {"t_ns", 10},   {"start_ns", 20},   {"first_tx_ns", 25}, {"last_tx_ns", 27},
                   {"end_ns", 30},  {"at_ns", 40}, {"bytes", 50}, {"wire_bytes", 60}};
  map_event_times(e, plus_1000);
  EXPECT_EQ(e["t_ns"], 1010);
  EXPECT_EQ(e["start_ns"], 1020);
  EXPECT_EQ(e["first_tx_ns"], 1025) << "the sender's first transmission, as the fleet's start offsets use it";
  EXPECT_EQ(e["last_tx_ns"], 1027) << "its last, as a calibration's achieved rate uses it";
  EXPECT_EQ(e["end_ns"], 1030);
  EXPECT_EQ(e["at_ns"], 40);
  EXPECT_EQ(e["bytes"], 50);
  EXPECT_EQ(e["wire_bytes"], 60);
}

TEST(nic_line_times, lines_that_are_not_json_objects_or_carry_no_integer_time_are_unchanged) {
  for (const std::string& line : {std::string("not json \"t_ns\""), std::string(R"([1,"t_ns"])"),
                                 std::string(R"({"ev":"ready","t_ns":"soon"})")})
    EXPECT_EQ(nlohmann::json::parse(map_event_times(line, plus_1000), nullptr, false).dump(),
              nlohmann::json::parse(line, nullptr, false).dump())
        << line;
  EXPECT_EQ(map_event_times("not json \"t_ns\"", plus_1000), "not json \"t_ns\"");
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic
