// detail::TlsSession and TlsContext: handshakes in memory against a server-side
// OpenSSL session made here, with certificates from TestCa.
#include <gtest/gtest.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <warden/config.hpp>
#include <warden/error.hpp>

#include "io/tls_session.hpp"
#include "test_ca.hpp"

namespace {

using warden::errc;
using warden::TlsConfig;
using warden::detail::TlsContext;
using warden::detail::TlsSession;
using warden::test::TestCa;

// The server end of a connection: an OpenSSL server session over memory
// buffers, written independently of TlsSession so that it can judge it.
class ServerSide {
 public:
  struct Options {
    std::string cert_file;
    std::string key_file;
    std::string client_ca_file;  // non-empty: ask for a client certificate signed by this CA
    bool require_client_cert = false;
    int max_version = 0;  // 0: the newest OpenSSL has
  };

  explicit ServerSide(const Options& options) {
    context_ = SSL_CTX_new(TLS_server_method());
    EXPECT_EQ(SSL_CTX_use_certificate_chain_file(context_, options.cert_file.c_str()), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(context_, options.key_file.c_str(), SSL_FILETYPE_PEM), 1);
    if (options.max_version != 0) SSL_CTX_set_max_proto_version(context_, options.max_version);
    if (!options.client_ca_file.empty()) {
      EXPECT_EQ(SSL_CTX_load_verify_file(context_, options.client_ca_file.c_str()), 1);
      SSL_CTX_set_verify(
          context_, SSL_VERIFY_PEER | (options.require_client_cert ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), nullptr);
    }
    ssl_ = SSL_new(context_);
    in_ = BIO_new(BIO_s_mem());
    out_ = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(in_, -1);
    SSL_set_bio(ssl_, in_, out_);
    SSL_set_accept_state(ssl_);
  }
  ~ServerSide() {
    SSL_free(ssl_);
    SSL_CTX_free(context_);
  }
  ServerSide(const ServerSide&) = delete;
  ServerSide& operator=(const ServerSide&) = delete;

  // Ciphertext from the client: advances the handshake, then reads data.
  void receive(const std::string& bytes) {
    BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
    if (failed_) return;
    if (!SSL_is_init_finished(ssl_)) {
      const int result = SSL_do_handshake(ssl_);
      if (result != 1) {
        const int reason = SSL_get_error(ssl_, result);
        if (reason != SSL_ERROR_WANT_READ && reason != SSL_ERROR_WANT_WRITE) failed_ = true;
        ERR_clear_error();
        return;
      }
    }
    char buffer[4096];
    for (;;) {
      std::size_t read = 0;
      if (SSL_read_ex(ssl_, buffer, sizeof buffer, &read) != 1) break;
      plaintext_.append(buffer, read);
    }
    ERR_clear_error();
  }

  void send(const std::string& text) {
    std::size_t written = 0;
    ASSERT_EQ(SSL_write_ex(ssl_, text.data(), text.size(), &written), 1);
  }

  std::string take_output() {
    std::string out;
    char buffer[4096];
    int read = 0;
    while ((read = BIO_read(out_, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(read));
    return out;
  }

  bool failed() const { return failed_; }
  bool established() const { return SSL_is_init_finished(ssl_) == 1; }
  std::string take_plaintext() { return std::exchange(plaintext_, {}); }
  // The SNI the client sent, or empty.
  std::string server_name() const {
    const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
    return name != nullptr ? name : "";
  }
  bool saw_client_certificate() const {
    X509* certificate = SSL_get1_peer_certificate(ssl_);
    X509_free(certificate);
    return certificate != nullptr;
  }

 private:
  SSL_CTX* context_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
  bool failed_ = false;
  std::string plaintext_;
};

class TlsSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ca_ = new TestCa(); }
  static void TearDownTestSuite() {
    delete ca_;
    ca_ = nullptr;
  }

  static TlsConfig trusting(const std::string& ca_file) {
    TlsConfig config;
    config.enabled = true;
    config.ca_file = ca_file;
    return config;
  }

  static ServerSide::Options server_with(const std::string& cert, const std::string& key) {
    ServerSide::Options options;
    options.cert_file = cert;
    options.key_file = key;
    return options;
  }

  static ServerSide::Options good_server() { return server_with(ca_->server_cert(), ca_->server_key()); }

  // Moves bytes between the two ends until neither has anything left to say
  // or the client fails. Decrypted data the client got is added to `plaintext`.
  static std::error_code exchange(TlsSession& client, ServerSide& server, std::string& plaintext) {
    for (int round = 0; round < 20; ++round) {
      const std::string to_server = client.take_output();
      if (!to_server.empty()) server.receive(to_server);
      const std::string to_client = server.take_output();
      if (to_server.empty() && to_client.empty()) return {};
      if (!to_client.empty()) {
        if (auto error = client.receive(to_client.data(), to_client.size(), plaintext)) return error;
      }
    }
    ADD_FAILURE() << "the two ends kept talking";
    return {};
  }

  static std::error_code handshake(TlsSession& client, ServerSide& server) {
    client.start();
    std::string plaintext;
    auto error = exchange(client, server, plaintext);
    EXPECT_EQ(plaintext, "");
    return error;
  }

  static TestCa* ca_;
};

TestCa* TlsSessionTest::ca_ = nullptr;

TEST(TlsSessionServerName, IsTheConfiguredNameElseTheHost) {
  warden::Config config = warden::Config::from_url("rediss://cache.example.com:6380");
  EXPECT_EQ(warden::detail::tls_server_name(config), "cache.example.com");
  config.tls.server_name = "redis.internal";
  EXPECT_EQ(warden::detail::tls_server_name(config), "redis.internal");
  EXPECT_EQ(warden::detail::tls_server_name(warden::Config::from_url("rediss://[::1]")), "::1");
}

TEST_F(TlsSessionTest, HandshakeWithTheRightCaThenDataBothWays) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
  ServerSide server(good_server());
  EXPECT_FALSE(client.established());
  ASSERT_EQ(handshake(client, server), std::error_code()) << client.error_text();
  EXPECT_TRUE(client.established());
  EXPECT_TRUE(server.established());
  EXPECT_EQ(client.error_text(), "");
  EXPECT_FALSE(client.protocol().empty());

  std::string plaintext;
  ASSERT_FALSE(client.send("PING\r\n", 6));
  ASSERT_FALSE(exchange(client, server, plaintext));
  EXPECT_EQ(server.take_plaintext(), "PING\r\n");

  server.send("+PONG\r\n");
  server.send("$5\r\nhello\r\n");
  ASSERT_FALSE(exchange(client, server, plaintext));
  EXPECT_EQ(plaintext, "+PONG\r\n$5\r\nhello\r\n");  // appended in order

  // A large payload crosses several TLS records.
  const std::string big(100'000, 'x');
  ASSERT_FALSE(client.send(big.data(), big.size()));
  ASSERT_FALSE(exchange(client, server, plaintext));
  EXPECT_EQ(server.take_plaintext(), big);
}

TEST_F(TlsSessionTest, DataSentBeforeTheHandshakeIsHeldBackThenDelivered) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "localhost");
  ServerSide server(good_server());
  ASSERT_FALSE(client.send("AUTH pw\r\n", 9));
  client.start();
  // Only the ClientHello goes out before the handshake: nothing readable.
  const std::string hello = client.take_output();
  EXPECT_FALSE(hello.empty());
  EXPECT_EQ(hello.find("AUTH"), std::string::npos);
  server.receive(hello);
  std::string plaintext;
  ASSERT_FALSE(exchange(client, server, plaintext)) << client.error_text();
  EXPECT_TRUE(client.established());
  EXPECT_EQ(server.take_plaintext(), "AUTH pw\r\n");
  EXPECT_EQ(server.server_name(), "localhost");  // SNI
}

TEST_F(TlsSessionTest, IpLiteralSendsNoSni) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
  ServerSide server(good_server());
  ASSERT_FALSE(handshake(client, server)) << client.error_text();
  EXPECT_EQ(server.server_name(), "");
}

TEST_F(TlsSessionTest, WorksAtEitherProtocolVersion) {
  for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "localhost");
    auto options = good_server();
    options.max_version = version;
    ServerSide server(options);
    ASSERT_FALSE(handshake(client, server)) << client.error_text();
    EXPECT_EQ(client.protocol(), version == TLS1_2_VERSION ? "TLSv1.2" : "TLSv1.3");
  }
}

TEST_F(TlsSessionTest, UnknownCaIsAVerifyFailure) {
  TlsSession client(TlsContext::create(trusting(ca_->wrong_ca_cert())), "127.0.0.1");
  ServerSide server(good_server());
  EXPECT_EQ(handshake(client, server), errc::tls_verify_failed);
  EXPECT_FALSE(client.established());
  EXPECT_NE(client.error_text().find("not signed by a trusted CA"), std::string::npos) << client.error_text();
  EXPECT_NE(client.error_text().find("unable to get local issuer certificate"), std::string::npos)
      << client.error_text();
  // The session is dead: it repeats its error.
  std::string plaintext;
  EXPECT_EQ(client.receive("x", 1, plaintext), errc::tls_verify_failed);
  EXPECT_EQ(client.send("x", 1), errc::tls_verify_failed);
  EXPECT_EQ(client.error(), errc::tls_verify_failed);
}

TEST_F(TlsSessionTest, IpMismatchIsAVerifyFailure) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
  ServerSide server(server_with(ca_->wrong_name_cert(), ca_->wrong_name_key()));
  EXPECT_EQ(handshake(client, server), errc::tls_verify_failed);
  EXPECT_NE(client.error_text().find("does not match 127.0.0.1"), std::string::npos) << client.error_text();
  EXPECT_NE(client.error_text().find("DNS:wrong.example"), std::string::npos) << client.error_text();
}

TEST_F(TlsSessionTest, NameMismatchIsAVerifyFailure) {
  {
    TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "redis.example");
    ServerSide server(good_server());
    EXPECT_EQ(handshake(client, server), errc::tls_verify_failed);
    EXPECT_NE(client.error_text().find("does not match redis.example"), std::string::npos) << client.error_text();
    EXPECT_NE(client.error_text().find("IP:127.0.0.1"), std::string::npos) << client.error_text();
  }
  {
    // An address not among the certificate's IP SANs.
    TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.2");
    ServerSide server(good_server());
    EXPECT_EQ(handshake(client, server), errc::tls_verify_failed);
    EXPECT_NE(client.error_text().find("does not match 127.0.0.2"), std::string::npos) << client.error_text();
  }
}

TEST_F(TlsSessionTest, VerifyPeerOffAcceptsAnything) {
  auto config = trusting(ca_->wrong_ca_cert());
  config.verify_peer = false;
  auto context = TlsContext::create(config);
  {
    TlsSession client(context, "127.0.0.1");
    ServerSide server(good_server());
    EXPECT_FALSE(handshake(client, server)) << client.error_text();
    EXPECT_TRUE(client.established());
  }
  {
    TlsSession client(context, "127.0.0.1");
    ServerSide server(server_with(ca_->wrong_name_cert(), ca_->wrong_name_key()));
    EXPECT_FALSE(handshake(client, server)) << client.error_text();
  }
}

TEST_F(TlsSessionTest, SystemTrustStoreHonoursSslCertFile) {
  const char* previous = std::getenv("SSL_CERT_FILE");
  const std::optional<std::string> saved = previous != nullptr ? std::optional<std::string>(previous) : std::nullopt;
  setenv("SSL_CERT_FILE", ca_->ca_cert().c_str(), 1);
  TlsConfig config;  // no ca_file, no ca_dir: the default paths
  config.enabled = true;
  auto context = TlsContext::create(config);
  if (saved) {
    setenv("SSL_CERT_FILE", saved->c_str(), 1);
  } else {
    unsetenv("SSL_CERT_FILE");
  }
  TlsSession client(context, "localhost");
  ServerSide server(good_server());
  EXPECT_FALSE(handshake(client, server)) << client.error_text();
}

// Mutual TLS, at both protocol versions: TLS 1.3 reports a refused client
// certificate only after the client finished its handshake.
class TlsSessionMutual : public TlsSessionTest, public ::testing::WithParamInterface<int> {
 protected:
  static ServerSide::Options requiring_client_cert() {
    auto options = good_server();
    options.client_ca_file = ca_->ca_cert();
    options.require_client_cert = true;
    options.max_version = GetParam();
    return options;
  }
};

TEST_P(TlsSessionMutual, ClientCertificateAccepted) {
  auto config = trusting(ca_->ca_cert());
  config.cert_file = ca_->client_cert();
  config.key_file = ca_->client_key();
  TlsSession client(TlsContext::create(config), "127.0.0.1");
  ServerSide server(requiring_client_cert());
  ASSERT_FALSE(handshake(client, server)) << client.error_text();
  EXPECT_TRUE(server.established());
  EXPECT_TRUE(server.saw_client_certificate());
  std::string plaintext;
  ASSERT_FALSE(client.send("PING\r\n", 6));
  ASSERT_FALSE(exchange(client, server, plaintext));
  server.send("+PONG\r\n");
  ASSERT_FALSE(exchange(client, server, plaintext)) << client.error_text();
  EXPECT_EQ(plaintext, "+PONG\r\n");
}

TEST_P(TlsSessionMutual, NoClientCertificateIsAHandshakeFailure) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
  ServerSide server(requiring_client_cert());
  std::error_code error = handshake(client, server);
  if (!error) {
    // TLS 1.3: the refusal comes with the server's first records after the
    // client's Finished; the first command's answer is where it shows.
    std::string plaintext;
    ASSERT_FALSE(client.send("PING\r\n", 6));
    error = exchange(client, server, plaintext);
  }
  EXPECT_EQ(error, errc::tls_handshake_failed);
  EXPECT_TRUE(server.failed());
  EXPECT_NE(client.error_text().find("requires a client certificate and none is configured"), std::string::npos)
      << client.error_text();
}

TEST_P(TlsSessionMutual, ClientCertificateFromAnotherCaIsRefused) {
  auto config = trusting(ca_->ca_cert());
  config.cert_file = ca_->wrong_ca_client_cert();
  config.key_file = ca_->wrong_ca_client_key();
  TlsSession client(TlsContext::create(config), "127.0.0.1");
  ServerSide server(requiring_client_cert());
  std::error_code error = handshake(client, server);
  if (!error) {
    std::string plaintext;
    ASSERT_FALSE(client.send("PING\r\n", 6));
    error = exchange(client, server, plaintext);
  }
  EXPECT_EQ(error, errc::tls_handshake_failed);
  EXPECT_NE(client.error_text().find("the server refused our client certificate"), std::string::npos)
      << client.error_text();
}

INSTANTIATE_TEST_SUITE_P(Versions, TlsSessionMutual, ::testing::Values(TLS1_2_VERSION, TLS1_3_VERSION),
                         [](const auto& info) { return info.param == TLS1_2_VERSION ? "tls1_2" : "tls1_3"; });

TEST_F(TlsSessionTest, PlaintextPeerDoesNotSpeakTls) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
  client.start();
  EXPECT_FALSE(client.take_output().empty());
  std::string plaintext;
  EXPECT_EQ(client.receive("+OK\r\n", 5, plaintext), errc::tls_handshake_failed);
  EXPECT_EQ(plaintext, "");
  EXPECT_NE(client.error_text().find("does not speak TLS"), std::string::npos) << client.error_text();
  EXPECT_NE(client.error_text().find("+OK\\r\\n"), std::string::npos) << client.error_text();
}

TEST_F(TlsSessionTest, ServerOnlyOfferingOlderVersionsFails) {
  auto config = trusting(ca_->ca_cert());
  config.min_version = warden::tls_version::tls1_3;
  TlsSession client(TlsContext::create(config), "127.0.0.1");
  auto options = good_server();
  options.max_version = TLS1_2_VERSION;
  ServerSide server(options);
  EXPECT_EQ(handshake(client, server), errc::tls_handshake_failed);
  EXPECT_NE(client.error_text().find("does not support our TLS versions"), std::string::npos) << client.error_text();
}

TEST_F(TlsSessionTest, EndOfFileDuringAndAfterTheHandshake) {
  {
    TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
    client.start();
    EXPECT_EQ(client.receive_eof(), errc::tls_handshake_failed);
    EXPECT_NE(client.error_text().find("closed the connection during the TLS handshake"), std::string::npos)
        << client.error_text();
  }
  {
    TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
    ServerSide server(good_server());
    ASSERT_FALSE(handshake(client, server));
    EXPECT_EQ(client.receive_eof(), errc::connection_lost);
    EXPECT_FALSE(client.established());
  }
}

TEST_F(TlsSessionTest, CorruptRecordAfterTheHandshakeLosesTheConnection) {
  TlsSession client(TlsContext::create(trusting(ca_->ca_cert())), "127.0.0.1");
  ServerSide server(good_server());
  ASSERT_FALSE(handshake(client, server));
  server.send("+PONG\r\n");
  std::string record = server.take_output();
  record.back() ^= 0x5a;  // breaks the record's authentication tag
  std::string plaintext;
  EXPECT_EQ(client.receive(record.data(), record.size(), plaintext), errc::connection_lost);
  EXPECT_EQ(plaintext, "");
}

// Asserts that TlsContext::create refuses `config` with invalid_argument and a
// message holding each of `expected`.
void expect_refused(const TlsConfig& config, std::initializer_list<std::string> expected) {
  try {
    (void)TlsContext::create(config);
    ADD_FAILURE() << "accepted";
  } catch (const warden::Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument);
    for (const auto& text : expected) {
      EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
    }
  }
}

TEST_F(TlsSessionTest, ContextRefusesFilesItCannotLoad) {
  const std::string missing = ca_->directory() + "/missing.pem";
  expect_refused(trusting(missing), {"Config::tls.ca_file", missing});
  // A file without any certificate in it.
  expect_refused(trusting(ca_->directory() + "/openssl.cnf"), {"Config::tls.ca_file", "openssl.cnf"});

  TlsConfig no_dir;
  no_dir.ca_dir = missing;
  expect_refused(no_dir, {"Config::tls.ca_dir", missing, "not a directory"});

  auto cert = trusting(ca_->ca_cert());
  cert.cert_file = missing;
  cert.key_file = ca_->client_key();
  expect_refused(cert, {"Config::tls.cert_file", missing});

  auto key = trusting(ca_->ca_cert());
  key.cert_file = ca_->client_cert();
  key.key_file = missing;
  expect_refused(key, {"Config::tls.key_file", missing});

  auto mismatch = trusting(ca_->ca_cert());
  mismatch.cert_file = ca_->client_cert();
  mismatch.key_file = ca_->server_key();
  expect_refused(mismatch, {"Config::tls.key_file", ca_->server_key(), "not the key of tls.cert_file"});
}

TEST_F(TlsSessionTest, CaDirectory) {
  TlsConfig config;
  config.ca_dir = ca_->ca_dir();
  {
    TlsSession client(TlsContext::create(config), "127.0.0.1");
    ServerSide server(good_server());
    EXPECT_FALSE(handshake(client, server)) << client.error_text();
  }
  config.ca_dir = ca_->directory();  // no hashed names: it loads, but trusts nothing
  {
    TlsSession client(TlsContext::create(config), "127.0.0.1");
    ServerSide server(good_server());
    EXPECT_EQ(handshake(client, server), errc::tls_verify_failed);
  }
}

}  // namespace
