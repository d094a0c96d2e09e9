// TLS through the public API: a redis-server with a TLS port (certificates
// from TestCa), a Client configured from its rediss:// URL. The fixture's
// probe inspects the server on its plain port.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include <warden/warden.hpp>

#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_ca.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

class Tls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ca_ = std::make_unique<TestCa>(); }
  static void TearDownTestSuite() { ca_.reset(); }

  // A server whose TLS port presents `cert_file`; `auth_clients` makes it
  // require a client certificate signed by the test CA.
  static std::unique_ptr<RedisServer> tls_server(bool auth_clients, std::string cert_file = {},
                                                 std::string key_file = {}) {
    RedisServerOptions options;
    options.tls = RedisTlsOptions{cert_file.empty() ? ca_->server_cert() : cert_file,
                                  key_file.empty() ? ca_->server_key() : key_file, ca_->ca_cert(), auth_clients};
    return std::make_unique<RedisServer>(options);
  }

  // The server's rediss:// URL with short timeouts, trusting `ca_file`.
  static Config tls_config(const RedisServer& server, const std::string& ca_file) {
    Config config = fast_config(server);
    Config parsed = Config::from_url(server.tls_url());
    EXPECT_TRUE(parsed.tls.enabled);
    config.host = parsed.host;
    config.port = parsed.port;
    config.tls = parsed.tls;
    config.tls.ca_file = ca_file;
    config.connect_timeout = 500ms;
    return config;
  }

  // Takes and releases a lock through `config`, checking with the probe that
  // the hold really reached the server.
  static void lock_and_unlock(const RedisServer& server, const Config& config, const std::string& name) {
    Client client{config};
    Lock lock = client.get_lock(name);
    lock.lock();
    RedisProbe probe(server);
    EXPECT_EQ(probe.hgetall(name).size(), 1u);
    EXPECT_TRUE(lock.is_held());
    lock.unlock();
    EXPECT_FALSE(probe.exists(name));
  }

  // lock() must fail with `expected` about as soon as the connection attempt
  // failed; returns the error's text.
  static std::string expect_lock_fails(const Config& config, errc expected) {
    Client client{config};
    Lock lock = client.get_lock("never-taken");
    const auto start = std::chrono::steady_clock::now();
    try {
      lock.lock();
      ADD_FAILURE() << "lock() succeeded";
      lock.unlock();
      return {};
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), expected) << error.what();
      EXPECT_LT(elapsed_ms(start), (config.connect_timeout + config.command_timeout).count() + 1'000) << error.what();
      return error.what();
    }
  }

  static std::unique_ptr<TestCa> ca_;
};

std::unique_ptr<TestCa> Tls::ca_;

TEST_F(Tls, LockAndUnlock) {
  auto server = tls_server(false);
  lock_and_unlock(*server, tls_config(*server, ca_->ca_cert()), "tls:plain");
}

TEST_F(Tls, LockAndUnlockWithPasswordAndDatabase) {
  RedisServerOptions options;
  options.tls = RedisTlsOptions{ca_->server_cert(), ca_->server_key(), ca_->ca_cert(), false};
  options.extra_args = {"--requirepass", "sesame"};
  RedisServer server(options);
  Config config = Config::from_url("rediss://:sesame@127.0.0.1:" + std::to_string(server.tls_port()) + "/2");
  config.tls.ca_file = ca_->ca_cert();
  config.connect_timeout = 1s;
  Client client{config};
  Lock lock = client.get_lock("tls:db2");
  lock.lock();
  RedisProbe probe(server);
  probe.command({"SELECT", "2"});
  EXPECT_TRUE(probe.exists("tls:db2"));
  lock.unlock();
  EXPECT_FALSE(probe.exists("tls:db2"));
}

TEST_F(Tls, MutualTls) {
  auto server = tls_server(true);
  Config config = tls_config(*server, ca_->ca_cert());
  config.tls.cert_file = ca_->client_cert();
  config.tls.key_file = ca_->client_key();
  lock_and_unlock(*server, config, "tls:mutual");
}

TEST_F(Tls, ServerNameOverridesTheHostForVerification) {
  // The certificate names only wrong.example; connecting to 127.0.0.1 with
  // that server name is fine.
  auto server = tls_server(false, ca_->wrong_name_cert(), ca_->wrong_name_key());
  Config config = tls_config(*server, ca_->ca_cert());
  config.tls.server_name = "wrong.example";
  lock_and_unlock(*server, config, "tls:named");
}

TEST_F(Tls, WrongCaIsAVerifyFailure) {
  auto server = tls_server(false);
  const std::string text = expect_lock_fails(tls_config(*server, ca_->wrong_ca_cert()), errc::tls_verify_failed);
  EXPECT_NE(text.find("trusted CA"), std::string::npos) << text;
}

TEST_F(Tls, NameMismatchIsAVerifyFailure) {
  auto server = tls_server(false, ca_->wrong_name_cert(), ca_->wrong_name_key());
  const std::string text = expect_lock_fails(tls_config(*server, ca_->ca_cert()), errc::tls_verify_failed);
  EXPECT_NE(text.find("does not match 127.0.0.1"), std::string::npos) << text;
}

TEST_F(Tls, MissingClientCertificateIsAHandshakeFailure) {
  auto server = tls_server(true);
  const std::string text = expect_lock_fails(tls_config(*server, ca_->ca_cert()), errc::tls_handshake_failed);
  EXPECT_NE(text.find("client certificate"), std::string::npos) << text;
}

TEST_F(Tls, PlainServerIsAHandshakeFailure) {
  // A plain Redis port reads the ClientHello as an unfinished inline command
  // and says nothing: the handshake runs into connect_timeout.
  RedisServer server;
  Config config = fast_config(server);
  config.tls.enabled = true;
  config.connect_timeout = 500ms;
  expect_lock_fails(config, errc::tls_handshake_failed);
}

TEST_F(Tls, UnreadableCaFileIsRefusedByTheClient) {
  auto server = tls_server(false);
  Config config = tls_config(*server, ca_->directory() + "/missing-ca.crt");
  try {
    Client client{config};
    FAIL() << "a Client was built with a CA file that does not exist";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("tls.ca_file"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("missing-ca.crt"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace warden::test
