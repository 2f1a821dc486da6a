// rocelab-full: every command of `rocelab` (the `rocelab` binary runs `analyze` itself and
// hands every other command line to this one: dispatch/main.cpp).
#include "command.hpp"

int main(int argc, char** argv) { return rocelab::cli::run_commands(argc, argv); }
