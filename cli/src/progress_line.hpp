#pragma once
// A status line for long work, on stderr: drawn and redrawn in place on a terminal, at
// most `every` apart (the last one always), and nothing at all in a pipe, a log file or
// with --quiet, so scripts read only the results. finish() ends the line.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace rocelab::cli {

class progress_line {
 public:
  explicit progress_line(bool quiet = false,
                         std::chrono::milliseconds every = std::chrono::milliseconds(250))
      : shown_(!quiet && ::isatty(STDERR_FILENO) != 0), every_(every) {}
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;
  ~progress_line() { finish(); }

  [[nodiscard]] bool shown() const noexcept { return shown_; }

  // Whether an update now would be drawn (callers skip building the text otherwise).
  [[nodiscard]] bool due() const {
    return shown_ && std::chrono::steady_clock::now() - last_ >= every_;
  }

  void update(const std::string& text, bool force = false) {
    if (!shown_ || (!force && !due())) return;
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
    last_ = std::chrono::steady_clock::now();
    drawn_ = true;
  }

  void finish() {
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  bool shown_;
  bool drawn_ = false;
  std::chrono::milliseconds every_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace rocelab::cli
