#include "rocelab/traffic/flow_list.hpp"

#include <gtest/gtest.h>

#include <string>

#include "rocelab/traffic/message_list.hpp"
#include "fake_twin_context.hpp"

namespace rocelab::traffic {
namespace {

using fabric::twin::message;

std::string data_file(const std::string& relative) { return std::string(ROCELAB_SOURCE_DIR) + "/" + relative; }

// --- csv ---

TEST(flow_list_csv, reads_each_row_as_a_message_with_its_start_and_its_position_as_tag) {
  const auto list = parse_flow_list(
      "src,dst,bytes,start_ns\n"
      "1,0,1000,0\n"
      "2,0,2500,1500\n"
      "3,1,64,20000\n",
      "f.csv", 4);
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list->format, flow_list_format::csv);
  ASSERT_EQ(list->messages.size(), 3u);
  const message& m = list->messages[1];
  EXPECT_EQ(m.src, 2u);
  EXPECT_EQ(m.dst, 0u);
  EXPECT_EQ(m.bytes, 2500u);
  EXPECT_EQ(m.start_ns, 1500);
  EXPECT_EQ(m.tag, 1u);
  EXPECT_EQ(m.priority, -1);
  EXPECT_EQ(m.kind, workload_kind::flow_list);
  EXPECT_EQ(list->messages[2].start_ns, 20000);
  EXPECT_EQ(list->lines, (std::vector<std::uint32_t>{2, 3, 4}));
}

TEST(flow_list_csv, optional_columns_in_any_order_set_priority_and_class) {
  const auto list = parse_flow_list(
      "tag,start_ns,dst,src,priority,bytes\n"
      "incast,0,0,1,3,1000\n"
      ",10,0,2,,2000\n"
      "background,20,3,2,-1,3000\n",
      "f.csv", 4);
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->messages.size(), 3u);
  EXPECT_EQ(list->messages[0].kind, workload_kind::incast);
  EXPECT_EQ(list->messages[0].priority, 3);
  EXPECT_EQ(list->messages[0].src, 1u);
  EXPECT_EQ(list->messages[0].bytes, 1000u);
  EXPECT_EQ(list->messages[1].kind, workload_kind::flow_list);
  EXPECT_EQ(list->messages[1].priority, -1);
  EXPECT_EQ(list->messages[2].kind, workload_kind::background);
  EXPECT_EQ(list->messages[2].priority, -1);
  EXPECT_EQ(list->messages[2].dst, 3u);
}

TEST(flow_list_csv, crlf_comments_blank_lines_and_a_byte_order_mark_change_nothing_but_line_numbers) {
  const std::string plain = "src,dst,bytes,start_ns\n1,0,1000,0\n2,0,2000,5\n";
  const std::string dressed =
      "\xEF\xBB\xBF# written by hand\r\nsrc, dst, bytes, start_ns\r\n\r\n  # the incast\r\n1,0,1000,0\r\n2,0,2000,5\r\n";
  const auto a = parse_flow_list(plain, "a.csv", 3);
  const auto b = parse_flow_list(dressed, "b.csv", 3);
  ASSERT_TRUE(a.ok()) << a.error().message();
  ASSERT_TRUE(b.ok()) << b.error().message();
  ASSERT_EQ(a->messages.size(), b->messages.size());
  for (std::size_t i = 0; i < a->messages.size(); ++i) {
    EXPECT_EQ(a->messages[i].src, b->messages[i].src);
    EXPECT_EQ(a->messages[i].bytes, b->messages[i].bytes);
    EXPECT_EQ(a->messages[i].start_ns, b->messages[i].start_ns);
  }
  EXPECT_EQ(b->lines, (std::vector<std::uint32_t>{5, 6}));
}

// --- htsim connection matrix ---

TEST(flow_list_htsim, reads_the_fidelity_tests_incast_matrix) {
  const auto list = load_flow_list(data_file("tests/data/uec-htsim/incast_32to1_1MB.cm"), 64);
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list->format, flow_list_format::htsim);
  ASSERT_EQ(list->messages.size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(list->messages[i].src, 32 + i);
    EXPECT_EQ(list->messages[i].dst, 0u);
    EXPECT_EQ(list->messages[i].bytes, 1'000'000u);
    EXPECT_EQ(list->messages[i].start_ns, 0);
    EXPECT_EQ(list->messages[i].tag, i);
  }
  EXPECT_EQ(list->lines.front(), 3u);  // after Nodes and Connections
}

TEST(flow_list_htsim, starts_are_whole_microseconds_as_htsim_uec_takes_them) {
  const auto list = parse_flow_list(
      "# staggered\r\n"
      "Nodes 8\r\n"
      "Connections 4\r\n"
      "0->1 start 0 size 4096\r\n"
      "2->1 start 5 size 8192 id 7\r\n"
      "3->1 size 100 start 12.9\r\n"
      "4->5 start 0.000000 size 1\r\n",
      "m.cm", 8);
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->messages.size(), 4u);
  EXPECT_EQ(list->messages[1].start_ns, 5'000);
  EXPECT_EQ(list->messages[1].bytes, 8192u);
  // htsim_uec: timeFromUs((uint32_t)12.9) is 12 us.
  EXPECT_EQ(list->messages[2].start_ns, 12'000);
  EXPECT_EQ(list->messages[2].bytes, 100u);
  EXPECT_EQ(list->messages[3].start_ns, 0);  // ConnectionMatrix::save writes "%f"
  EXPECT_EQ(list->messages[3].kind, workload_kind::flow_list);
}

// --- HPCC ns-3 flow.txt ---

TEST(flow_list_hpcc_ns3, reads_the_example_scenarios_flow_file) {
  const auto list = load_flow_list(data_file("examples/hpcc-ns3/incast16_buf2MB/flow.txt"), 17);
  ASSERT_TRUE(list.ok()) << list.error().message();
  EXPECT_EQ(list->format, flow_list_format::hpcc_ns3);
  ASSERT_EQ(list->messages.size(), 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(list->messages[i].src, i + 1);
    EXPECT_EQ(list->messages[i].dst, 0u);
    EXPECT_EQ(list->messages[i].bytes, 8'000'000u);
    EXPECT_EQ(list->messages[i].start_ns, 2'000'000'000);
    EXPECT_EQ(list->messages[i].priority, 3);
    EXPECT_EQ(list->messages[i].udp_dport, 100);
    EXPECT_EQ(list->messages[i].udp_sport, 0);  // the simulator's to assign
  }
}

TEST(flow_list_hpcc_ns3, staggered_starts_to_the_nanosecond_with_crlf_and_comments) {
  const auto list = parse_flow_list(
      "# from generate_traffic.py\r\n"
      "3\r\n"
      "24 20 3 100 2546 2.000001287\r\n"
      "\r\n"
      "58 18 3 100 22581 2.000002365\r\n"
      "49 41 0 200 29393 2.5\r\n",
      "flow.txt", 64);
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->messages.size(), 3u);
  EXPECT_EQ(list->messages[0].start_ns, 2'000'001'287);
  EXPECT_EQ(list->messages[1].start_ns, 2'000'002'365);
  EXPECT_EQ(list->messages[2].start_ns, 2'500'000'000);
  EXPECT_EQ(list->messages[2].priority, 0);
  EXPECT_EQ(list->messages[2].udp_dport, 200);
  EXPECT_EQ(list->lines, (std::vector<std::uint32_t>{3, 5, 6}));
}

// --- format detection and errors ---

struct detect_case {
  const char* name;
  const char* text;
  flow_list_format format;
};

class flow_list_detection : public ::testing::TestWithParam<detect_case> {};

TEST_P(flow_list_detection, tells_the_format_by_content) {
  const auto f = detect_flow_list_format(GetParam().text, "x");
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(*f, GetParam().format);
}

INSTANTIATE_TEST_SUITE_P(
    cases, flow_list_detection,
    ::testing::Values(detect_case{"csv_header", "src,dst,bytes,start_ns\n", flow_list_format::csv},
                      detect_case{"csv_after_comment", "# a.csv\ndst,src,start_ns,bytes\n", flow_list_format::csv},
                      detect_case{"htsim_nodes", "Nodes 64\nConnections 1\n0->1 start 0 size 1\n", flow_list_format::htsim},
                      detect_case{"htsim_connection_first", "0->1 start 0 size 1\n", flow_list_format::htsim},
                      detect_case{"hpcc_count", "1\n0 1 3 100 1000 2.0\n", flow_list_format::hpcc_ns3}),
    [](const auto& info) { return std::string(info.param.name); });

struct error_case {
  const char* name;
  std::string text;
  std::string expected;  // a part of the message
};

class flow_list_errors : public ::testing::TestWithParam<error_case> {};

TEST_P(flow_list_errors, name_the_file_line_and_what_is_wrong) {
  const auto list = parse_flow_list(GetParam().text, "flows.txt", 8);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().code(), error_code::malformed_input);
  EXPECT_NE(list.error().message().find(GetParam().expected), std::string::npos) << list.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    cases, flow_list_errors,
    ::testing::Values(
        error_case{"unknown_format_quotes_its_first_line", "# mine\nhello world\n",
                   "flows.txt:2: not a flow list this reads: 'hello world'"},
        error_case{"empty", "# only a comment\n", "flows.txt: no flows"},
        error_case{"csv_host_out_of_range", "src,dst,bytes,start_ns\n1,0,10,0\n9,0,10,0\n",
                   "flows.txt:3: src 9 is not a host (the fabric has hosts 0..7)"},
        error_case{"csv_negative_size", "src,dst,bytes,start_ns\n1,0,-10,0\n", "flows.txt:2: bytes '-10': a negative size"},
        error_case{"csv_negative_start", "src,dst,bytes,start_ns\n1,0,10,-5\n", "flows.txt:2: start_ns '-5'"},
        error_case{"csv_zero_bytes", "src,dst,bytes,start_ns\n1,0,0,0\n", "flows.txt:2: a flow of 0 bytes"},
        error_case{"csv_to_itself", "src,dst,bytes,start_ns\n1,1,10,0\n", "flows.txt:2: src and dst are the same host"},
        error_case{"csv_missing_column", "src,dst,bytes\n", "flows.txt:1: the header has no start_ns column"},
        error_case{"csv_unknown_column", "src,dst,bytes,start_ns,prio\n", "flows.txt:1: unknown column 'prio'"},
        error_case{"csv_short_row", "src,dst,bytes,start_ns\n1,0,10\n", "flows.txt:2: expected 4 fields"},
        error_case{"csv_unknown_class", "src,dst,bytes,start_ns,tag\n1,0,10,0,elephants\n",
                   "flows.txt:2: tag 'elephants' is not a traffic class"},
        error_case{"csv_priority_out_of_range", "src,dst,bytes,start_ns,priority\n1,0,10,0,8\n",
                   "flows.txt:2: priority '8'"},
        error_case{"htsim_host_out_of_range", "Nodes 64\nConnections 1\n40->0 start 0 size 10\n",
                   "flows.txt:3: src 40 is not a host"},
        error_case{"htsim_beyond_its_nodes", "Nodes 4\nConnections 1\n5->0 start 0 size 10\n",
                   "flows.txt:3: src 5 is not one of the matrix's 4 nodes"},
        error_case{"htsim_negative_size", "0->1 start 0 size -3\n", "flows.txt:1: size '-3': a negative size"},
        error_case{"htsim_no_start", "0->1 size 3\n", "flows.txt:1: the connection has no start"},
        error_case{"htsim_trigger", "Nodes 8\n0->1 id 1 trigger 2 size 3\n", "flows.txt:2: trigger"},
        error_case{"htsim_count_mismatch", "Nodes 8\nConnections 2\n0->1 start 0 size 3\n",
                   "flows.txt:2: Connections 2, but the matrix has 1"},
        error_case{"hpcc_host_out_of_range", "1\n0 8 3 100 1000 2.0\n", "flows.txt:2: dst 8 is not a host"},
        error_case{"hpcc_short_file", "2\n0 1 3 100 1000 2.0\n", "expected 2 flows, found 1"},
        error_case{"hpcc_bad_start", "1\n0 1 3 100 1000 soon\n", "flows.txt:2: start 'soon'"},
        error_case{"hpcc_start_beyond_int64_ns", "1\n0 1 3 100 1000 25009482608.5\n", "flows.txt:2: start"},
        error_case{"hpcc_extra_flow", "1\n0 1 3 100 1000 2.0\n0 2 3 100 1000 2.0\n", "flows.txt:3: a flow beyond the 1"}),
    [](const auto& info) { return std::string(info.param.name); });

// Beside generated classes the list posts through the same workload as any fixed schedule.
TEST(flow_list, posts_its_messages_through_a_message_list_workload) {
  auto list = parse_flow_list("src,dst,bytes,start_ns\n1,0,1000,0\n2,0,2000,300\n", "f.csv", 3);
  ASSERT_TRUE(list.ok()) << list.error().message();
  message_list_workload w(list->messages);
  testing::fake_twin_context ctx(3);
  w.start(ctx);
  ASSERT_EQ(ctx.posts.size(), 2u);
  EXPECT_EQ(ctx.posts[1].m.start_ns, 300);
  EXPECT_EQ(ctx.posts[1].m.tag, 1u);
  EXPECT_EQ(ctx.posts[1].m.kind, workload_kind::flow_list);
}

TEST(flow_list, a_missing_file_is_an_error_naming_it) {
  const auto list = load_flow_list("/nonexistent/flows.csv", 4);
  ASSERT_FALSE(list.ok());
  EXPECT_NE(list.error().message().find("/nonexistent/flows.csv"), std::string::npos) << list.error().message();
}

}  // namespace
}  // namespace rocelab::traffic
