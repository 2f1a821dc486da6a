#include "rocelab/experiments/spec/spec_reference.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

TEST(spec_reference, every_field_has_a_row_with_its_default) {
  const std::string md = field_reference_markdown();
  for (const field_info& f : field_table())
    EXPECT_NE(md.find("| `" + f.path + "` |"), std::string::npos) << f.path;
  EXPECT_NE(md.find("| `switch.ecn.kmin_bytes` | size (B, KB, KiB, MB, MiB, ...) | `1MiB` |"), std::string::npos);
  EXPECT_NE(md.find("| `topology.type` | single_switch \\| leaf_spine \\| fat_tree \\| rail_optimized | `single_switch` |"), std::string::npos);
}

TEST(spec_reference, the_page_section_is_replaced_between_its_markers_only) {
  const std::string page = "# Specs\nbefore\n" + std::string(field_reference_begin) + "\nold\n" +
                           std::string(field_reference_end) + "\nafter\n";
  auto updated = with_field_reference(page, "| new |\n");
  ASSERT_TRUE(updated.ok());
  EXPECT_EQ(*updated, "# Specs\nbefore\n" + std::string(field_reference_begin) + "\n| new |\n" +
                          std::string(field_reference_end) + "\nafter\n");
  EXPECT_EQ(*field_reference_of(*updated), "| new |\n");
  EXPECT_FALSE(with_field_reference("no markers", "x").ok());
}

// docs/specs.md is what `rocelab spec --reference --update docs/specs.md` writes: a field
// added to the table without regenerating the page fails here.
TEST(spec_reference, docs_specs_md_is_current) {
  std::ifstream in(std::string(ROCELAB_SOURCE_DIR) + "/docs/specs.md");
  ASSERT_TRUE(in) << "docs/specs.md is missing";
  std::stringstream page;
  page << in.rdbuf();
  auto section = field_reference_of(page.str());
  ASSERT_TRUE(section.ok()) << section.error().message();
  EXPECT_EQ(*section, field_reference_markdown())
      << "docs/specs.md's field reference is stale: run build/rocelab spec --reference --update docs/specs.md";
}

}  // namespace
}  // namespace rocelab::experiments
