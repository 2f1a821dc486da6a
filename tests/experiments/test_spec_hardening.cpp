// Specs that are valid YAML but outside what a backend can run are refused when checked,
// each error naming file:line and the field; no input file is read without a bound.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/traffic/flow_size_cdf.hpp"

namespace rocelab::experiments {
namespace {

const char* const base =
    "name: hardening\n"                  // 1
    "topology:\n"                        // 2
    "  hosts: 8\n"                       // 3
    "  link_gbps: 100\n"                 // 4
    "workload:\n"                        // 5
    "  incast: {receiver: 0, senders: 4}\n";  // 6

std::string with(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

std::string validation_error(const std::string& yaml) {
  auto spec = load_spec(yaml, "spec.yaml");
  if (!spec) return "load: " + spec.error().message();
  const status st = validate(*spec);
  return st.ok() ? std::string("valid") : st.message();
}

struct limit_case {
  const char* name;
  std::string yaml;
  std::string where;  // file:line: field the error must start with
};

void PrintTo(const limit_case& c, std::ostream* os) { *os << c.name; }

class backend_ranges : public ::testing::TestWithParam<limit_case> {};

TEST_P(backend_ranges, are_refused_at_the_field_with_its_line) {
  const std::string msg = validation_error(GetParam().yaml);
  EXPECT_EQ(msg.rfind(GetParam().where, 0), 0u) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    spec, backend_ranges,
    ::testing::Values(
        limit_case{"hosts_past_the_twins_16_bit_ports", with(base, "hosts: 8", "hosts: 100000"),
                   "spec.yaml:3: topology.hosts: "},
        limit_case{"a_link_rate_that_overflows_bits_per_second", with(base, "link_gbps: 100", "link_gbps: 1e30"),
                   "spec.yaml:4: topology.link_gbps: "},
        limit_case{"a_derived_uplink_rate_past_any_link",
                   with(base, "  hosts: 8\n",
                        "  hosts: 4096\n  type: leaf_spine\n  leaves: 2\n  spines: 1\n  oversubscription: 0.01\n"),
                   "spec.yaml:7: topology.oversubscription: "}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(spec_yaml, a_duplicated_key_is_refused_with_both_lines) {
  auto spec = load_spec(std::string(base) + "topology:\n  hosts: 4\n", "spec.yaml");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message().find("spec.yaml:7: topology: duplicate key (first at line 2)"), std::string::npos)
      << spec.error().message();
  auto inner = load_spec(with(base, "  hosts: 8\n", "  hosts: 8\n  hosts: 9\n"), "spec.yaml");
  ASSERT_FALSE(inner.ok());
  EXPECT_NE(inner.error().message().find("spec.yaml:4: topology.hosts: duplicate key"), std::string::npos)
      << inner.error().message();
}

TEST(spec_units, a_rate_that_overflows_in_its_unit_is_refused) {
  experiment_spec spec;
  const status st = apply_override(spec, "topology.link_gbps=1e300Tbps");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("too large"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("--set topology.link_gbps"), std::string::npos) << st.message();
}

TEST(spec_files, a_device_as_cdf_is_refused_not_read) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    auto cdf = traffic::flow_size_cdf::load_file(device);
    ASSERT_FALSE(cdf.ok()) << device;
    EXPECT_NE(cdf.error().message().find("character device"), std::string::npos) << cdf.error().message();
    const std::string msg =
        validation_error(std::string(base) + "  background: {cdf: " + device + ", load: 0.1}\n");
    EXPECT_EQ(msg.rfind("spec.yaml:7: workload.background.cdf: ", 0), 0u) << msg;
  }
}

TEST(spec_files, a_device_as_spec_is_refused_not_read) {
  auto spec = load_spec_file("/dev/zero");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message().find("character device"), std::string::npos) << spec.error().message();
}

}  // namespace
}  // namespace rocelab::experiments
