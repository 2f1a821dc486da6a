// Seeds for fuzz_spec and fuzz_hpcc from the project's own inputs.
//   rocelab_fuzz_spec_seeds spec DIR SPEC.yaml...   each spec as YAML, and its resolved
//                                                   fields as `--set` overrides (0x01, NUL-separated)
//   rocelab_fuzz_spec_seeds hpcc DIR SCENARIO_DIR... each scenario's config.txt, topology
//                                                   and flow files joined by NUL bytes
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "rocelab/experiments/spec/spec.hpp"

namespace fs = std::filesystem;
using namespace rocelab::experiments;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool write(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
  return static_cast<bool>(out);
}

// The file a config line names ("TOPOLOGY_FILE mix/topo.txt"), relative to the folder.
std::string named(const std::string& config, const std::string& key) {
  std::istringstream in(config);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string k, v;
    if (words >> k >> v && k == key) return v;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: rocelab_fuzz_spec_seeds spec|hpcc DIR INPUT...\n";
    return 2;
  }
  const std::string mode = argv[1];
  const fs::path dir = argv[2];
  int n = 0;
  for (int i = 3; i < argc; ++i) {
    const fs::path input = argv[i];
    const std::string stem = input.filename().string();
    if (mode == "spec") {
      const std::string yaml = read_all(input);
      if (!write(dir / (stem + ".yaml"), yaml)) return 1;
      ++n;
      auto spec = load_spec(yaml, stem);
      if (!spec) continue;  // a tuning or compare file: its YAML seed is enough
      std::string sets = "\x01";
      for (const field_info& f : field_table()) sets += f.path + "=" + f.get(*spec) + '\0';
      if (!write(dir / (stem + ".set"), sets)) return 1;
      ++n;
    } else if (mode == "hpcc") {
      const std::string config = read_all(input / "config.txt");
      if (config.empty()) continue;
      const std::string joined = config + '\0' + read_all(input / named(config, "TOPOLOGY_FILE")) + '\0' +
                                 read_all(input / named(config, "FLOW_FILE"));
      if (!write(dir / (stem + ".hpcc"), joined)) return 1;
      ++n;
    } else {
      std::cerr << "rocelab_fuzz_spec_seeds: unknown mode " << mode << "\n";
      return 2;
    }
  }
  std::cout << n << " seeds\n";
  return 0;
}
