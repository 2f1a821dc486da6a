#pragma once
// Error values for I/O boundaries (files, sockets, C libraries, specs).
//
// A `status` is either ok or carries an error code, the errno where one exists, and
// a message that each layer prefixes with its own context:
//     return st.with_context("reading capture " + path);
// gives "reading capture x.pcap: record 12 at offset 4096: caplen 70000 > snaplen 65535".
// `result<T>` is a value or a failed status. Both are [[nodiscard]]: an ignored error is
// a compile-time warning, and -Werror makes it an error.
// Exceptions are kept for broken invariants and for the Python boundary.

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace rocelab {

enum class error_code {
  ok = 0,
  invalid_argument,   // the caller passed something wrong (a flag, a spec field)
  malformed_input,    // the bytes or text read are not what the format says
  io_error,           // the OS said no (errno set)
  not_found,          // a file, device, interface or record that does not exist
  unavailable,        // a needed facility is missing here (no RDMA device, not root)
  unsupported,        // valid but not implemented for this case (a link type, a PMD feature)
  resource_exhausted, // a limit was hit (memory bound, queue size)
  cancelled,
  internal,
};

[[nodiscard]] constexpr std::string_view to_string(error_code code) noexcept {
  switch (code) {
    case error_code::ok: return "ok";
    case error_code::invalid_argument: return "invalid argument";
    case error_code::malformed_input: return "malformed input";
    case error_code::io_error: return "I/O error";
    case error_code::not_found: return "not found";
    case error_code::unavailable: return "unavailable";
    case error_code::unsupported: return "unsupported";
    case error_code::resource_exhausted: return "resource exhausted";
    case error_code::cancelled: return "cancelled";
    case error_code::internal: return "internal error";
  }
  return "unknown";
}

class [[nodiscard]] status {
 public:
  status() = default;
  status(error_code code, std::string message, int sys_errno = 0)
      : code_(code), errno_(sys_errno), message_(std::move(message)) {}

  static status success() { return {}; }
  // Captures the current errno with a message naming the operation.
  static status from_errno(std::string what) {
    const int e = errno;
    return {error_code::io_error, std::move(what) + ": " + std::strerror(e), e};
  }

  [[nodiscard]] bool ok() const noexcept { return code_ == error_code::ok; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] error_code code() const noexcept { return code_; }
  [[nodiscard]] int sys_errno() const noexcept { return errno_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  // Uniform with result<T>::error(), so ROCELAB_RETURN_IF_ERROR takes either.
  [[nodiscard]] const status& error() const noexcept { return *this; }

  // Prefixes the message with the caller's context; a no-op on success.
  [[nodiscard]] status with_context(std::string_view context) const& {
    if (ok()) return *this;
    return {code_, std::string(context) + ": " + message_, errno_};
  }
  [[nodiscard]] status with_context(std::string_view context) && {
    if (ok()) return std::move(*this);
    message_ = std::string(context) + ": " + message_;
    return std::move(*this);
  }

 private:
  error_code code_ = error_code::ok;
  int errno_ = 0;
  std::string message_;
};

template <typename T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  result(status error) : v_(std::move(error)) {  // NOLINT(google-explicit-constructor)
    if (std::get<status>(v_).ok())
      v_ = status(error_code::internal, "result built from an ok status without a value");
  }

  [[nodiscard]] bool ok() const noexcept { return std::holds_alternative<T>(v_); }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error; an ok status when there is a value.
  [[nodiscard]] status error() const {
    if (ok()) return status::success();
    return std::get<status>(v_);
  }
  [[nodiscard]] result with_context(std::string_view context) && {
    if (ok()) return std::move(*this);
    return std::get<status>(std::move(v_)).with_context(context);
  }

 private:
  std::variant<T, status> v_;
};

}  // namespace rocelab

// Returns the error early when `expr` (a status or a result<T>) failed; the enclosing
// function returns status or result<U>.
#define ROCELAB_RETURN_IF_ERROR(expr)                   \
  do {                                                  \
    if (auto&& rocelab_st_ = (expr); !rocelab_st_.ok()) \
      return rocelab_st_.error();                       \
  } while (0)
