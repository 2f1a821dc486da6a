// Any bytes as an experiment spec, the way a spec reaches rocelab from a file or over the
// controller's connection: YAML through load_spec, or (input starting with byte 0x01)
// NUL-separated `path=value` overrides through apply_override, as `--set` gives them.
// Whatever is accepted is checked the way a controller checks a received spec (file
// references refused, then validate). Nothing may crash, read out of bounds (ASan), hit
// undefined behaviour (UBSan) or throw; a spec that loads must print (to_yaml) as YAML
// that loads again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"

using namespace rocelab::experiments;

namespace {

void check(experiment_spec& spec) {
  // No file is opened: what names one is refused first, as on the controller.
  if (!refuse_file_references(spec).ok()) return;
  (void)validate(spec);
  auto again = load_spec(to_yaml(spec), "resolved.yaml");
  if (!again) __builtin_trap();  // the resolved spec always loads
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text.front() == '\x01') {
    experiment_spec spec;
    std::string_view rest = text.substr(1);
    while (!rest.empty()) {
      const auto end = rest.find('\0');
      (void)apply_override(spec, rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
    check(spec);
    return 0;
  }
  auto spec = load_spec(text, "fuzz.yaml");
  if (spec) check(*spec);
  return 0;
}
