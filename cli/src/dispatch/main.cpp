// rocelab: runs `rocelab analyze` in this process and replaces itself (execv, same pid,
// same argv) with rocelab-full, the binary beside it that has every command, for any
// other command line.
//
// Why two binaries: rocelab-full loads 35 shared libraries (DPDK, libibverbs, OpenSSL,
// libpcap and theirs) and runs their constructors before main, about 10 ms of CPU per
// start that analyze, which needs none of them, would pay on every capture it reads. This
// binary links only what analyze needs (bench/README.md, "analyze: start-up without the
// hardware libraries").
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "../command.hpp"
#include "rocelab/common/own_executable.hpp"

namespace {

// The directory of this binary's file.
std::string own_directory() {
  const std::string path = rocelab::own_executable_path();
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "analyze") return rocelab::cli::run_commands(argc, argv);
  const std::string full = own_directory() + "/rocelab-full";
  ::execv(full.c_str(), argv);
  std::fprintf(stderr, "rocelab: cannot run %s: %s\n", full.c_str(), std::strerror(errno));
  return 127;
}
