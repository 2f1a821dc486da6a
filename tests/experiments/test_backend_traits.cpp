// The questions callers ask of a backend instead of comparing its name
// (run/backend_traits.hpp): each backend's answers, an unknown name answering no to all of them,
// and every backend a registry is built with having traits.
#include "rocelab/experiments/run/backend_traits.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

struct traits_case {
  std::string_view name;
  backend_kind kind;
  bool simulated;
  bool runs_in_controller;
  bool needs_lab;
  bool takes_capture_file;
};

constexpr traits_case cases[] = {
    // The fabric model in virtual time, in the asking process.
    {"twin", backend_kind::twin, true, true, false, false},
    // Soft switch and soft NICs in namespaces, the mirror captured to a file.
    {"virtual", backend_kind::virtual_lab, false, false, false, true},
    // Real hosts and switch from the controller's inventory.
    {"lab", backend_kind::lab, false, false, true, false},
    // A name no backend has answers no to every question.
    {"hardware", backend_kind::unknown, false, false, false, false},
    {"", backend_kind::unknown, false, false, false, false},
};

TEST(backend_traits, each_backend_answers_what_callers_ask_of_it) {
  for (const traits_case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    const backend_traits t = backend_traits_of(c.name);
    EXPECT_EQ(t.kind, c.kind);
    EXPECT_EQ(t.simulated, c.simulated);
    EXPECT_EQ(t.runs_in_controller, c.runs_in_controller);
    EXPECT_EQ(t.needs_lab, c.needs_lab);
    EXPECT_EQ(t.takes_capture_file, c.takes_capture_file);
    if (c.kind != backend_kind::unknown) {
      EXPECT_EQ(backend_name(c.kind), c.name);
    }
  }
  EXPECT_EQ(backend_name(backend_kind::unknown), "");
}

TEST(backend_traits, every_known_backend_is_a_choice_of_the_spec_and_has_one_kind) {
  EXPECT_EQ(known_backend_names(), (std::vector<std::string>{"twin", "virtual", "lab"}));
  for (const backend_traits& t : known_backends) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_NE(t.kind, backend_kind::unknown);
    EXPECT_EQ(backend_traits_of(t.name).kind, t.kind);
    experiment_spec spec;
    EXPECT_TRUE(apply_override(spec, "backend=" + std::string(t.name)).ok());
  }
  experiment_spec spec;
  EXPECT_FALSE(apply_override(spec, "backend=hardware").ok());
}

TEST(backend_traits, every_backend_a_registry_is_built_with_has_traits) {
  // core_backends (the twin) and local_backends (the twin and the virtual lab); the
  // controller adds `lab` by backend_name(backend_kind::lab).
  for (const backend_registry& r : {core_backends(), local_backends({})})
    for (const std::string& name : r.names()) {
      SCOPED_TRACE(name);
      EXPECT_NE(backend_traits_of(name).kind, backend_kind::unknown);
    }
}

}  // namespace
}  // namespace rocelab::experiments
