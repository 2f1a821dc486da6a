// Unauthenticated and malformed peers: nothing in the clear, nothing without the token,
// and a malformed frame from an authenticated peer closes that connection only.
#include "rocelab/protocol/security.hpp"

#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <fstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include "controller_test_support.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using namespace rocelab::protocol;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using test::agent_pool;
using test::eventually;
using test::temp_dir;

tcp::endpoint endpoint_of(const controller& c) { return {asio::ip::make_address("127.0.0.1"), c.port()}; }

void set_receive_timeout(tcp::socket& s, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

std::vector<std::uint8_t> hello_frame(const std::string& name) {
  auto f = encode(hello{peer_role::agent, name, {"soft"}, 1});
  return f ? *f : std::vector<std::uint8_t>{};
}

// Reads whatever the server sends until it closes or 2 s pass.
std::vector<std::uint8_t> drain(tcp::socket& s) {
  std::vector<std::uint8_t> got;
  std::array<std::uint8_t, 4096> buf{};
  for (int i = 0; i < 100; ++i) {
    boost::system::error_code ec;
    const std::size_t n = s.read_some(asio::buffer(buf), ec);
    got.insert(got.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
    if (ec) break;
  }
  return got;
}

// A self-signed certificate, as a peer without the token might present.
struct self_signed {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  self_signed() {
    key = EVP_EC_gen("P-256");
    cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* n = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("mallory"), -1, -1, 0);
    X509_set_issuer_name(cert, n);
    X509_sign(cert, key, EVP_sha256());
  }
  ~self_signed() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  void install(asio::ssl::context& ctx) const {
    SSL_CTX_use_certificate(ctx.native_handle(), cert);
    SSL_CTX_use_PrivateKey(ctx.native_handle(), key);
  }
};

class security : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = controller::start(test::quick_controller_options(dir_));
    ASSERT_TRUE(c.ok()) << c.error().message();
    controller_ = std::move(*c);
    // A legitimate agent that must stay registered through every attack.
    pool_.add(controller_->address(), "good");
    ASSERT_TRUE(controller_->wait_for_agents({"good"}, 10s, 1));
  }

  void expect_only_good_agent() {
    const auto all = controller_->agents();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].name, "good");
    EXPECT_TRUE(all[0].alive);
  }

  temp_dir dir_{"sec"};
  std::unique_ptr<controller> controller_;
  agent_pool pool_;
  asio::io_context io_;
};

TEST_F(security, wrong_token_never_registers) {
  auto bad = pool_.add(controller_->address(), "mallory", 0, "another-token-of-enough-length");
  ASSERT_TRUE(bad);
  ASSERT_TRUE(eventually([&] { return !bad->stats().last_error.empty(); }));
  EXPECT_NE(bad->stats().last_error.find("TLS handshake"), std::string::npos) << bad->stats().last_error;
  EXPECT_EQ(bad->stats().connects, 0u);
  expect_only_good_agent();
}

TEST_F(security, plain_tcp_gets_no_protocol_bytes_and_registers_nothing) {
  tcp::socket s(io_);
  s.connect(endpoint_of(*controller_));
  set_receive_timeout(s, 2000);
  const auto frame = hello_frame("cleartext");
  boost::system::error_code ec;
  asio::write(s, asio::buffer(frame), ec);
  const auto got = drain(s);
  // At most a TLS alert record (content type 21); never a frame of ours.
  if (!got.empty()) {
    EXPECT_EQ(got[0], 21) << "first byte " << int(got[0]);
  }
  EXPECT_FALSE(decode_frame(got).ok());
  expect_only_good_agent();
}

TEST_F(security, tls_with_a_certificate_but_no_token_is_refused) {
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_verify_mode(asio::ssl::verify_none);
  self_signed id;
  id.install(ctx);
  asio::ssl::stream<tcp::socket> s(io_, ctx);
  s.lowest_layer().connect(endpoint_of(*controller_));
  set_receive_timeout(s.next_layer(), 3000);
  boost::system::error_code ec;
  s.handshake(asio::ssl::stream_base::client, ec);
  EXPECT_TRUE(ec) << "handshake succeeded without the token";
  expect_only_good_agent();
}

TEST_F(security, agent_refuses_a_controller_without_the_token) {
  // A man in the middle: a TLS server with its own certificate on another port.
  asio::ssl::context ctx(asio::ssl::context::tls_server);
  self_signed id;
  id.install(ctx);
  tcp::acceptor acceptor(io_, {asio::ip::make_address("127.0.0.1"), 0});
  const std::string addr = "127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  std::atomic<bool> handshake_ok{false}, hello_seen{false};
  std::thread server([&] {
    tcp::socket raw(io_);
    acceptor.accept(raw);
    set_receive_timeout(raw, 3000);
    asio::ssl::stream<tcp::socket> s(std::move(raw), ctx);
    boost::system::error_code ec;
    s.handshake(asio::ssl::stream_base::server, ec);
    handshake_ok = !ec;
    if (!ec) {
      std::array<std::uint8_t, 8> h{};
      asio::read(s, asio::buffer(h), ec);
      hello_seen = !ec;
    }
  });
  auto victim = pool_.add(addr, "victim");
  server.join();
  EXPECT_FALSE(handshake_ok);
  EXPECT_FALSE(hello_seen);
  EXPECT_EQ(victim->stats().connects, 0u);
}

using test::authenticated_peer;

struct malformed_case {
  const char* name;
  std::vector<std::uint8_t> bytes;
};

class security_malformed : public security, public ::testing::WithParamInterface<malformed_case> {};

TEST_P(security_malformed, closes_that_connection_only) {
  authenticated_peer p(io_, controller_->port());
  ASSERT_TRUE(p.ok());
  p.write(GetParam().bytes);
  std::vector<message> seen;
  EXPECT_TRUE(p.read_until_closed(seen));
  for (const auto& m : seen) EXPECT_FALSE(std::holds_alternative<welcome>(m)) << "a malformed hello was welcomed";
  expect_only_good_agent();
}

std::vector<std::uint8_t> raw_frame(std::uint32_t n, std::uint16_t version, std::uint16_t type, std::string body) {
  std::vector<std::uint8_t> f = {std::uint8_t(n >> 24), std::uint8_t(n >> 16), std::uint8_t(n >> 8), std::uint8_t(n),
                                 std::uint8_t(version >> 8), std::uint8_t(version), std::uint8_t(type >> 8),
                                 std::uint8_t(type)};
  for (char c : body) f.push_back(static_cast<std::uint8_t>(c));
  return f;
}

INSTANTIATE_TEST_SUITE_P(
    cases, security_malformed,
    ::testing::Values(malformed_case{"garbage", {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1'}},
                      malformed_case{"unknown_type", raw_frame(2, 1, 4242, "{}")},
                      malformed_case{"oversize", raw_frame(max_body_bytes + 1, 1, 1, "")},
                      malformed_case{"other_version", raw_frame(2, 9, 1, "{}")},
                      malformed_case{"bad_json_hello", raw_frame(5, 1, 1, "{{{{{")},
                      malformed_case{"hello_with_extra_field",
                                     raw_frame(67, 1, 1,
                                               "{\"role\":\"agent\",\"name\":\"x\",\"transports\":[],\"pid\":1,"
                                               "\"exec\":\"reboot\"}")}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(security, token_file_must_be_private_and_long_enough) {
  const auto path = (dir_.path / "token").string();
  std::ofstream(path) << "  short  \n";
  ::chmod(path.c_str(), 0600);
  EXPECT_FALSE(read_token_file(path).ok());
  std::ofstream(path) << "  " << test::test_token << "  \n";
  auto t = read_token_file(path);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(*t, test::test_token);
  ::chmod(path.c_str(), 0644);
  auto open = read_token_file(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.error().message().find("chmod 600"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::controller
