#pragma once
// Subcommands of `rocelab`. Each lives in its own <name>_command.cpp and registers itself
// with ROCELAB_COMMAND, so adding a command touches no shared file.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rocelab::cli {

// Builds the subcommand on `app` and returns the function that runs it (exit code).
using command_setup = std::function<std::function<int()>(CLI::App& app)>;

struct command_entry {
  std::string name;
  command_setup setup;
};

std::vector<command_entry>& command_registry();

// Parses argv against the commands registered in this binary and runs the one named:
// its exit code, 0 for --help and --version, 2 for a usage error.
int run_commands(int argc, char** argv);

struct command_registrar {
  command_registrar(std::string name, command_setup setup) {
    command_registry().push_back({std::move(name), std::move(setup)});
  }
};

}  // namespace rocelab::cli

#define ROCELAB_COMMAND(name, setup_fn) \
  static const ::rocelab::cli::command_registrar rocelab_command_registrar_##name{#name, setup_fn}
