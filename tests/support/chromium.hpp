#pragma once
// Headless Chromium (Debian's chromium) for the tests that check an HTML page renders:
// where the binary is, and the DOM it parses a page into. Flags: headless, no GPU, no
// sandbox (tests run as root), a private profile per call so parallel tests do not share
// one, and a time limit.

#include <stdio.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>

namespace rocelab::testing {

// Empty when chromium is not installed (the tests then skip, saying so).
inline std::string chromium_binary() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"})
    if (std::filesystem::exists(p)) return p;
  return {};
}

// The command line that runs `action` (--dump-dom, --screenshot=...) on `page`; the
// profile and chromium's log go into `workdir`.
inline std::string chromium_command(const std::filesystem::path& page, const std::filesystem::path& workdir,
                                    const std::string& action) {
  return "timeout 120 " + chromium_binary() + " --headless --disable-gpu --no-sandbox --no-first-run" +
         " --hide-scrollbars --user-data-dir=" + (workdir / "profile").string() + " " + action + " file://" +
         page.string() + " 2>" + (workdir / "chromium.log").string();
}

// The DOM Chromium built from `page`; nullopt when it failed (see workdir/chromium.log).
inline std::optional<std::string> chromium_dom(const std::filesystem::path& page,
                                               const std::filesystem::path& workdir) {
  FILE* p = ::popen(chromium_command(page, workdir, "--dump-dom").c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string dom;
  std::array<char, 65536> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) dom.append(buf.data(), n);
  if (::pclose(p) != 0) return std::nullopt;
  return dom;
}

}  // namespace rocelab::testing
