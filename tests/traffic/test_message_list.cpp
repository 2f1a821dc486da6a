#include "rocelab/traffic/message_list.hpp"

#include <gtest/gtest.h>

#include "fake_twin_context.hpp"

namespace rocelab::traffic {
namespace {

TEST(message_list, posts_every_message_at_start_unchanged_and_in_order) {
  std::vector<fabric::twin::message> list(3);
  for (std::uint32_t i = 0; i < 3; ++i) {
    list[i].src = i + 1;
    list[i].dst = 0;
    list[i].bytes = 1000 * (i + 1);
    list[i].start_ns = 2'000'000'000 + i;
    list[i].tag = 10 + i;
  }
  message_list_workload w(list);
  testing::fake_twin_context ctx(4);
  w.start(ctx);
  ASSERT_EQ(ctx.posts.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ctx.posts[i].m.src, list[i].src);
    EXPECT_EQ(ctx.posts[i].m.bytes, list[i].bytes);
    EXPECT_EQ(ctx.posts[i].m.start_ns, list[i].start_ns);
    EXPECT_EQ(ctx.posts[i].m.tag, list[i].tag);
  }
  // Completions post nothing more.
  EXPECT_EQ(ctx.drain(w, 1000), 3u);
  EXPECT_EQ(ctx.posts.size(), 3u);
}

}  // namespace
}  // namespace rocelab::traffic
