#pragma once
// The spec's field reference for people: every field of the field table (spec.hpp) with
// its type, default and help, as a Markdown table. docs/specs.md carries it between two
// markers; `rocelab spec --reference --update docs/specs.md` rewrites that part, and a test
// fails when the page and the table disagree. Pure.

#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"

namespace rocelab::experiments {

inline constexpr std::string_view field_reference_begin = "<!-- field reference: begin -->";
inline constexpr std::string_view field_reference_end = "<!-- field reference: end -->";

// The Markdown table (header, separator, one row per field), newline-terminated.
[[nodiscard]] std::string field_reference_markdown();

// `page` with the text between the two markers replaced by `reference`. Errors: a marker
// missing or out of order.
[[nodiscard]] result<std::string> with_field_reference(std::string_view page, std::string_view reference);

// The text between the markers of `page` (without them). Errors: as above.
[[nodiscard]] result<std::string> field_reference_of(std::string_view page);

}  // namespace rocelab::experiments
