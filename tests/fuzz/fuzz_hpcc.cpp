// Any bytes as an HPCC ns-3 scenario: config.txt, the topology file and the flow file,
// separated by NUL bytes, through parse_hpcc_scenario and, when it parses, into the
// messages a run posts. Nothing may crash, read out of bounds (ASan), hit undefined
// behaviour (UBSan), throw or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rocelab/experiments/spec/hpcc_ns3.hpp"

using namespace rocelab::experiments;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hpcc_texts texts;
  std::string* parts[] = {&texts.config, &texts.topology, &texts.flows};
  for (std::string* part : parts) {
    const auto end = text.find('\0');
    *part = std::string(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
  auto scenario = parse_hpcc_scenario(texts);
  if (scenario) (void)hpcc_messages(*scenario);
  return 0;
}
