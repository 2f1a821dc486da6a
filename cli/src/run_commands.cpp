// The command line of `rocelab` over the commands registered in this binary (command.hpp).
#include <algorithm>
#include <iostream>
#include <map>

#include "command.hpp"

namespace rocelab::cli {

std::vector<command_entry>& command_registry() {
  static std::vector<command_entry> registry;
  return registry;
}

int run_commands(int argc, char** argv) {
  CLI::App app{"rocelab: a hardware-in-the-loop congestion lab for RoCEv2 fabrics"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "rocelab 0.1.0");

  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::map<CLI::App*, std::function<int()>> runners;
  for (const auto& entry : registry) {
    CLI::App* sub = app.add_subcommand(entry.name);
    runners[sub] = entry.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and succeed; every usage error exits 2, whatever
    // CLI11's internal code for it, and names the command it is about.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string command = "rocelab";
    for (const auto& [sub, run] : runners)
      if (sub->parsed()) command += " " + sub->get_name();
    std::cerr << command << ": " << e.what() << "\nRun " << command << " --help for more information.\n";
    return 2;
  }
  for (const auto& [sub, run] : runners)
    if (sub->parsed()) return run();
  return 2;
}

}  // namespace rocelab::cli
