#include "rocelab/common/result.hpp"

#include <gtest/gtest.h>

namespace rocelab {
namespace {

result<int> parse_positive(int v) {
  if (v <= 0) return status(error_code::invalid_argument, "value " + std::to_string(v) + " is not positive");
  return v;
}

status layered(int v) {
  ROCELAB_RETURN_IF_ERROR(parse_positive(v));
  return status::success();
}

TEST(status, context_is_prefixed_at_each_layer) {
  const status st = layered(-3).with_context("field switch.ecn.pmax").with_context("spec a.yaml");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), error_code::invalid_argument);
  EXPECT_EQ(st.message(), "spec a.yaml: field switch.ecn.pmax: value -3 is not positive");
}

TEST(status, success_ignores_context) {
  EXPECT_TRUE(layered(2).with_context("anything").ok());
  EXPECT_EQ(layered(2).with_context("anything").message(), "");
}

TEST(status, from_errno_keeps_errno_and_its_text) {
  errno = ENOENT;
  const status st = status::from_errno("opening x.pcap");
  EXPECT_EQ(st.sys_errno(), ENOENT);
  EXPECT_EQ(st.code(), error_code::io_error);
  EXPECT_NE(st.message().find("opening x.pcap: "), std::string::npos);
  EXPECT_NE(st.message().find("No such file"), std::string::npos);
}

TEST(result, holds_a_value_or_an_error) {
  auto good = parse_positive(5);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 5);
  EXPECT_TRUE(good.error().ok());
  auto bad = parse_positive(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), error_code::invalid_argument);
  auto ctx = std::move(bad).with_context("reading");
  EXPECT_EQ(ctx.error().message(), "reading: value 0 is not positive");
}

TEST(result, an_ok_status_without_a_value_is_an_internal_error) {
  result<int> r{status::success()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), error_code::internal);
}

}  // namespace
}  // namespace rocelab
