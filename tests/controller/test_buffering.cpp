// Token holders cannot make the controller hold memory they did not send: a declared body
// is held as its bytes arrive, and what frames being read hold together is capped.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using namespace rocelab::protocol;
using test::authenticated_peer;

std::size_t rss_bytes() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  return 0;
}

// A frame header declaring `body` bytes of a submit_run, and the first of them.
std::vector<std::uint8_t> declared_body(std::uint32_t body) {
  auto f = encode(submit_run{1, "name: x\n", "x.yaml", {}, ""});
  std::vector<std::uint8_t> out(f->begin(), f->begin() + static_cast<std::ptrdiff_t>(frame_header_bytes));
  out[0] = std::uint8_t(body >> 24);
  out[1] = std::uint8_t(body >> 16);
  out[2] = std::uint8_t(body >> 8);
  out[3] = std::uint8_t(body);
  out.push_back('{');
  return out;
}

TEST(buffering, declared_bodies_hold_what_arrived_and_the_total_is_capped) {
  test::temp_dir dir("buf");
  auto o = test::quick_controller_options(dir);
  o.max_buffered_bytes = 1u << 20;
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  boost::asio::io_context io;
  constexpr std::size_t peers = 40;
  const std::size_t rss_before = rss_bytes();
  std::vector<std::unique_ptr<authenticated_peer>> holders;
  for (std::size_t i = 0; i < peers; ++i) {
    auto p = std::make_unique<authenticated_peer>(io, (*c)->port());
    ASSERT_TRUE(p->ok());
    ASSERT_TRUE(p->send(hello{peer_role::client, "holder", {}, 1}));
    auto welcomed = p->read();
    ASSERT_TRUE(welcomed.ok()) << welcomed.error().message();
    ASSERT_TRUE(p->write(declared_body(max_body_bytes)));
    holders.push_back(std::move(p));
  }
  // Every holder's first byte is in: each holds at most its frame's free allowance.
  // Declared: 40 x 4 MiB = 160 MiB; held: 40 x 64 KiB.
  EXPECT_TRUE(test::eventually([&] { return (*c)->buffered_bytes() >= peers; }, 5s));
  std::this_thread::sleep_for(300ms);
  EXPECT_LT(rss_bytes() - std::min(rss_bytes(), rss_before), std::size_t{40} << 20)
      << "the controller (this process) grew by what was declared, not what was sent";
  EXPECT_LE((*c)->buffered_bytes(), peers * read_budget::free_bytes_per_frame + o.max_buffered_bytes);
  // A client with the token is served meanwhile.
  submit_options so;
  so.controller = (*c)->address();
  so.token = test::test_token;
  auto done = submit_spec(so,
                          "name: beside\nbackend: twin\nseed: 1\ntopology: {hosts: 3, link_gbps: 100}\n"
                          "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n",
                          "beside.yaml", {});
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  holders.clear();
  EXPECT_TRUE(test::eventually([&] { return (*c)->buffered_bytes() == 0; }, 10s))
      << (*c)->buffered_bytes() << " bytes still held after every holder left";
}

// Bytes that really arrive beyond the free allowance come from the shared budget: a body
// past what is left waits, and the total never passes the cap plus the allowances.
TEST(buffering, bodies_past_the_budget_wait_for_it) {
  test::temp_dir dir("buf2");
  auto o = test::quick_controller_options(dir);
  o.max_buffered_bytes = 1u << 20;
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  boost::asio::io_context io;
  constexpr std::size_t peers = 4;
  std::vector<std::unique_ptr<authenticated_peer>> senders;
  std::vector<std::thread> writers;
  for (std::size_t i = 0; i < peers; ++i) {
    auto p = std::make_unique<authenticated_peer>(io, (*c)->port());
    ASSERT_TRUE(p->ok());
    ASSERT_TRUE(p->send(hello{peer_role::client, "sender", {}, 1}));
    ASSERT_TRUE(p->read().ok());
    auto bytes = declared_body(2u << 20);
    bytes.resize(bytes.size() + (1u << 20), ' ');  // 1 MiB of the declared 2 MiB
    // The kernel buffers take part of it; the rest of a write blocks while the controller
    // waits for room, so each peer writes from its own thread.
    senders.push_back(std::move(p));
    writers.emplace_back([s = senders.back().get(), bytes] { (void)s->write(bytes); });
  }
  ASSERT_TRUE(test::eventually([&] { return (*c)->buffered_bytes() >= o.max_buffered_bytes / 2; }, 10s));
  std::size_t most = 0;
  for (int i = 0; i < 50; ++i) {
    most = std::max(most, (*c)->buffered_bytes());
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_LE(most, o.max_buffered_bytes + peers * read_budget::free_bytes_per_frame);
  EXPECT_GT(most, peers * read_budget::free_bytes_per_frame) << "the budget was used";
  c->reset();  // closes the connections: the blocked writes end
  for (auto& w : writers) w.join();
}

}  // namespace
}  // namespace rocelab::controller
