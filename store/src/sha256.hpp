#pragma once
// SHA-256 (FIPS 180-4) of a text, as 64 lowercase hex digits: the identity of a stored
// calibration, so the same file is kept once. Here rather than through OpenSSL so that
// the store (and `rocelab analyze`, which opens it) loads no crypto library.

#include <string>
#include <string_view>

namespace rocelab::store::detail {

[[nodiscard]] std::string sha256_hex(std::string_view text);

}  // namespace rocelab::store::detail
