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

namespace {

// The directory of this binary's file (symlinks resolved, as the kernel ran it).
std::string own_directory() {
  std::string path(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return ".";
  path.resize(static_cast<std::size_t>(n));
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
