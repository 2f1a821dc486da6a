// The spec's field reference as Markdown (see spec_reference.hpp).
#include "rocelab/experiments/spec/spec_reference.hpp"

#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

std::string type_text(const field_info& f) {
  switch (f.type) {
    case field_type::boolean: return "true / false";
    case field_type::integer: return "integer";
    case field_type::size: return "size (B, KB, KiB, MB, MiB, ...)";
    case field_type::duration: return "duration (ns, us, ms, s)";
    case field_type::rate_gbps: return "rate (Gb/s, or with a unit)";
    case field_type::real: return "number";
    case field_type::text: return "text";
    case field_type::choice: {
      std::string out;
      for (const auto& c : f.choices) out += (out.empty() ? "" : " | ") + c;
      return out;
    }
    case field_type::host_list: return "hosts (\"0,3,5-8\" or a list)";
  }
  return "text";
}

// A table cell: pipes escaped, line breaks folded.
std::string cell(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

result<std::pair<std::size_t, std::size_t>> marker_span(std::string_view page) {
  const auto begin = page.find(field_reference_begin);
  const auto end = page.find(field_reference_end);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin)
    return status(error_code::malformed_input, "the page has no '" + std::string(field_reference_begin) + "' ... '" +
                                                   std::string(field_reference_end) + "' section");
  const std::size_t from = begin + field_reference_begin.size();
  return std::pair{from, end};
}

}  // namespace

std::string field_reference_markdown() {
  const experiment_spec defaults;
  std::string out = "| field | type | default | meaning |\n| --- | --- | --- | --- |\n";
  for (const field_info& f : field_table()) {
    const std::string def = f.get(defaults);
    out += "| `" + f.path + "` | " + cell(type_text(f)) + " | " + (def.empty() ? "" : "`" + cell(def) + "`") + " | " +
           cell(f.help) + " |\n";
  }
  return out;
}

result<std::string> with_field_reference(std::string_view page, std::string_view reference) {
  auto span = marker_span(page);
  if (!span) return span.error();
  std::string out(page.substr(0, span->first));
  out += "\n";
  out += reference;
  out += page.substr(span->second);
  return out;
}

result<std::string> field_reference_of(std::string_view page) {
  auto span = marker_span(page);
  if (!span) return span.error();
  std::string_view text = page.substr(span->first, span->second - span->first);
  if (text.starts_with("\n")) text.remove_prefix(1);
  return std::string(text);
}

}  // namespace rocelab::experiments
