#pragma once
// Authentication and encryption of every controller connection: TLS 1.3 with a pre-shared
// key derived from the lab's token file (RFC 8446 section 2.2, psk_dhe_ke: the PSK
// authenticates both ends, an ephemeral ECDHE gives forward secrecy).
//
// Why PSK rather than certificates: both ends prove knowledge of the token inside the
// handshake itself, so there is no certificate to pin or CA to distribute, and a man in
// the middle without the token can neither complete a handshake with an agent nor with the
// controller (the PSK binder and the Finished MACs fail). A peer without TLS, with another
// token, or with a certificate but no PSK fails the handshake before any application byte
// is read or written, so it gets nothing and changes nothing.
//
// Key: psk = HMAC-SHA256(key = token, "rocelab controller psk v1"); identity
// "rocelab-v1". The token file holds the token on its first line (at least 16 bytes;
// surrounding whitespace ignored) and must not be readable by group or others.
//
// Ownership: tls_context owns the asio::ssl::context (and through it the SSL_CTX); the
// PSK lives in the tls_context and must outlive every stream made from it.

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::protocol {

inline constexpr std::size_t min_token_bytes = 16;

// Reads and checks the token file (see above).
[[nodiscard]] result<std::string> read_token_file(const std::string& path);

enum class tls_role : std::uint8_t { server, client };

class tls_context {
 public:
  [[nodiscard]] static result<std::unique_ptr<tls_context>> make(tls_role role, const std::string& token);
  ~tls_context();
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  [[nodiscard]] boost::asio::ssl::context& native() noexcept { return context_; }
  [[nodiscard]] tls_role role() const noexcept { return role_; }

 private:
  tls_context(tls_role role);
  tls_role role_;
  std::array<std::uint8_t, 32> psk_{};
  boost::asio::ssl::context context_;
};

}  // namespace rocelab::protocol
