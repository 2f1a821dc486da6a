#include "rocelab/protocol/security.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/ssl.h>

#include "rocelab/common/bounded_file.hpp"

namespace rocelab::protocol {
namespace {

constexpr const char* psk_identity = "rocelab-v1";
constexpr const char* psk_label = "rocelab controller psk v1";

// Our own ex_data slot: Asio keeps its verify callback in the SSL_CTX's app_data (and
// deletes it in ~context), so the PSK must not go there.
int psk_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

const std::array<std::uint8_t, 32>* psk_of(SSL* ssl) {
  return static_cast<const std::array<std::uint8_t, 32>*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), psk_index()));
}

// OpenSSL's PSK callbacks also serve TLS 1.3 when the newer session callbacks are not
// set (SSL_CTX_set_psk_client_callback(3)): the key is then used with a SHA-256 suite.
unsigned int client_psk(SSL* ssl, const char* /*hint*/, char* identity, unsigned int max_identity_len,
                        unsigned char* psk, unsigned int max_psk_len) {
  const auto* key = psk_of(ssl);
  if (!key || max_psk_len < key->size() || std::strlen(psk_identity) + 1 > max_identity_len) return 0;
  std::memcpy(identity, psk_identity, std::strlen(psk_identity) + 1);
  std::memcpy(psk, key->data(), key->size());
  return static_cast<unsigned int>(key->size());
}

unsigned int server_psk(SSL* ssl, const char* identity, unsigned char* psk, unsigned int max_psk_len) {
  const auto* key = psk_of(ssl);
  if (!key || !identity || std::strcmp(identity, psk_identity) != 0 || max_psk_len < key->size()) return 0;
  std::memcpy(psk, key->data(), key->size());
  return static_cast<unsigned int>(key->size());
}

std::string openssl_error() {
  char buf[256] = {};
  ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
  return buf;
}

}  // namespace

result<std::string> read_token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return status::from_errno("token file " + path);
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return status(error_code::invalid_argument,
                  "token file " + path + ": readable by group or others (chmod 600 it)");
  auto text = read_bounded_file(path, max_token_file_bytes, "token file");
  if (!text) return text.error();
  std::string line = text->substr(0, text->find('\n'));
  if (line.empty() && text->empty()) return status(error_code::invalid_argument, "token file " + path + ": empty");
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  line.erase(line.begin(), std::find_if(line.begin(), line.end(), not_space));
  line.erase(std::find_if(line.rbegin(), line.rend(), not_space).base(), line.end());
  if (line.size() < min_token_bytes)
    return status(error_code::invalid_argument, "token file " + path + ": token shorter than " +
                                                    std::to_string(min_token_bytes) + " bytes");
  return line;
}

tls_context::tls_context(tls_role role)
    : role_(role),
      context_(role == tls_role::server ? boost::asio::ssl::context::tls_server : boost::asio::ssl::context::tls_client) {}

tls_context::~tls_context() { OPENSSL_cleanse(psk_.data(), psk_.size()); }

result<std::unique_ptr<tls_context>> tls_context::make(tls_role role, const std::string& token) {
  if (token.size() < min_token_bytes)
    return status(error_code::invalid_argument, "token shorter than " + std::to_string(min_token_bytes) + " bytes");
  std::unique_ptr<tls_context> c(new tls_context(role));
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
            reinterpret_cast<const unsigned char*>(psk_label), std::strlen(psk_label), c->psk_.data(), &len) ||
      len != c->psk_.size())
    return status(error_code::internal, "deriving the TLS PSK: " + openssl_error());

  SSL_CTX* ctx = c->context_.native_handle();
  // TLS 1.3 only: its PSK mode with (EC)DHE and no certificates is exactly what we want;
  // older versions and their PSK suites are not offered.
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 || SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1)
    return status(error_code::internal, "TLS 1.3: " + openssl_error());
  if (SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256") != 1)
    return status(error_code::internal, "TLS 1.3 suites: " + openssl_error());
  if (psk_index() < 0 || SSL_CTX_set_ex_data(ctx, psk_index(), &c->psk_) != 1)
    return status(error_code::internal, "storing the TLS PSK: " + openssl_error());
  // No session tickets: every connection proves the token afresh.
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  if (role == tls_role::server) {
    SSL_CTX_set_psk_server_callback(ctx, server_psk);
  } else {
    SSL_CTX_set_psk_client_callback(ctx, client_psk);
    // A server that answers with a certificate instead of the PSK is not ours: with
    // verify_peer and no trusted CA, certificate authentication always fails.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  }
  return c;
}

}  // namespace rocelab::protocol
