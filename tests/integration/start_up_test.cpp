// Start-up: the readiness check (Client::wait_until_connected) and what a
// Client says when it cannot connect because its configuration and the
// server disagree (a password the server does not want, redis:// against a
// TLS port), with the servers' addresses written as URLs write them.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include <warden/warden.hpp>

#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_ca.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Whether the server lists a connection of `client` (CLIENT SETNAME
// "warden:<id>"): the client connected and finished its set-up there.
bool connected_to(RedisProbe& probe, const Client& client) {
  return contains(probe.command({"CLIENT", "LIST"}).str, "name=warden:" + client.id());
}

TEST(StartUpWaitUntilConnected, ReturnsOnceTheServerAnswersWithItsConnectionSetUp) {
  RedisServer server;
  RedisProbe probe(server);
  Client client(fast_config(server));
  auto started = steady::now();
  client.wait_until_connected(5s);
  EXPECT_LT(elapsed_ms(started), 1'000);
  EXPECT_TRUE(connected_to(probe, client)) << "it returned before the connection was set up";
  // Connected already: at once again, and locks work.
  client.wait_until_connected(std::chrono::duration<double>(1.5));
  Lock lock = client.get_lock("ready");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(StartUpWaitUntilConnected, NothingListeningFailsWithConnectionRefusedAtItsTimeout) {
  RedisServer stand_in;
  auto port = stand_in.port();
  stand_in.stop();  // nobody listens there now
  Config config = fast_config(Config::from_url("redis://127.0.0.1:" + std::to_string(port)));
  Client client(config);
  auto started = steady::now();
  try {
    client.wait_until_connected(400ms);
    ADD_FAILURE() << "connected to nothing";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::connection_refused) << error.what();
    EXPECT_TRUE(contains(error.what(), "127.0.0.1:" + std::to_string(port))) << error.what();
    EXPECT_TRUE(contains(error.what(), "ECONNREFUSED")) << error.what();
  }
  EXPECT_GE(elapsed_ms(started), 350) << "it gave up before its timeout";
  EXPECT_LT(elapsed_ms(started), 1'400);
  // It keeps connecting: the server coming back makes it ready.
  stand_in.start();
  client.wait_until_connected(5s);
}

TEST(StartUpWaitUntilConnected, RefusedCredentialsFailAtOnceNotAtTheTimeout) {
  RedisServer server({"--requirepass", "sesame"});
  Config config = fast_config(server);
  config.password = "wrong";
  Client client(config);
  auto started = steady::now();
  try {
    client.wait_until_connected(10s);
    ADD_FAILURE() << "connected with a wrong password";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
    EXPECT_TRUE(contains(error.what(), "wrong password")) << error.what();
    EXPECT_FALSE(contains(error.what(), "sesame")) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 2'000) << "waiting cannot cure a wrong password";
}

TEST(StartUpWaitUntilConnected, RefusesANegativeTimeoutAndTheIoThread) {
  RedisServer server;
  Client client(fast_config(server));
  try {
    client.wait_until_connected(-1ms);
    ADD_FAILURE() << "took a negative timeout";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument) << error.what();
  }
  // On the I/O thread (here in an acquire's completion callback) the wait
  // would block the thread that answers it.
  Lock lock = client.get_lock("on-the-io-thread");
  std::promise<std::error_code> seen;
  lock.try_lock_async(current_thread_id(), lock_options().with_wait(0ms), [&](std::error_code, bool) {
    try {
      client.wait_until_connected(1s);
      seen.set_value({});
    } catch (const Error& error) {
      seen.set_value(error.code());
    }
  });
  auto future = seen.get_future();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(future.get(), errc::would_deadlock);
  lock.unlock();
}

TEST(StartUpConnectFailure, APasswordTheServerDoesNotWantIsAnAuthenticationFailureWithTheServersReason) {
  RedisServer server;  // no requirepass
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.password = "unwanted";
  config.command_timeout = 10s;
  Client client(config);
  Lock lock = client.get_lock("unneeded-password");
  auto started = steady::now();
  try {
    lock.try_lock();
    ADD_FAILURE() << "locked although AUTH was refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
    EXPECT_TRUE(contains(error.what(), "a password was configured but the server requires none")) << error.what();
    EXPECT_TRUE(contains(error.what(), "without any password configured"))
        << "the server's own words: " << error.what();
    EXPECT_FALSE(contains(error.what(), "unwanted")) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 2'000) << "retrying cannot make the server want a password";
  EXPECT_FALSE(probe.exists("unneeded-password"));
  try {
    client.wait_until_connected(10s);
    ADD_FAILURE() << "ready although AUTH was refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
  }
}

class StartUpPlainAgainstTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ca_ = std::make_unique<TestCa>();
    RedisServerOptions options;
    options.tls = RedisTlsOptions{ca_->server_cert(), ca_->server_key(), ca_->ca_cert(), false};
    server_ = std::make_unique<RedisServer>(options);
  }
  static void TearDownTestSuite() {
    server_.reset();
    ca_.reset();
  }

  // redis:// (no TLS) to the TLS port, with deadlines far above what the
  // failure may take.
  static Config plain_to_tls_port() {
    Config config = fast_config(Config::from_url("redis://127.0.0.1:" + std::to_string(server_->tls_port())));
    config.connect_timeout = 10s;
    config.command_timeout = 10s;
    return config;
  }

  static std::unique_ptr<TestCa> ca_;
  static std::unique_ptr<RedisServer> server_;
};

std::unique_ptr<TestCa> StartUpPlainAgainstTls::ca_;
std::unique_ptr<RedisServer> StartUpPlainAgainstTls::server_;

TEST_F(StartUpPlainAgainstTls, ALockCallFailsAtConnectWithAHintToUseRediss) {
  Log log;
  Config config = plain_to_tls_port();
  log.watch(config);
  Client client(config);
  Lock lock = client.get_lock("plain-to-tls");
  auto started = steady::now();
  try {
    lock.try_lock();
    ADD_FAILURE() << "locked over plaintext on a TLS port";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::connection_refused) << error.what();
    EXPECT_TRUE(contains(error.what(), "the server may expect TLS: use rediss://")) << error.what();
    EXPECT_TRUE(contains(error.what(), "plain-to-tls")) << error.what();
  }
  // Two attempts closed unanswered, a back-off of 20 to 200 ms between them.
  EXPECT_LT(elapsed_ms(started), 1'500) << "it waited for a deadline (10 s)";
  EXPECT_TRUE(log.contains("use rediss://")) << log.all();
  RedisProbe probe(*server_);
  EXPECT_FALSE(probe.exists("plain-to-tls"));
}

TEST_F(StartUpPlainAgainstTls, WaitUntilConnectedFailsAtOnceWithTheSameHint) {
  Client client(plain_to_tls_port());
  auto started = steady::now();
  try {
    client.wait_until_connected(10s);
    ADD_FAILURE() << "ready over plaintext on a TLS port";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::connection_refused) << error.what();
    EXPECT_TRUE(contains(error.what(), "use rediss://")) << error.what();
  }
  EXPECT_LT(elapsed_ms(started), 1'500);
}

TEST_F(StartUpPlainAgainstTls, TheSamePortWithRedissServes) {
  Config config = fast_config(Config::from_url(server_->tls_url()));
  config.tls.ca_file = ca_->ca_cert();
  Client client(config);
  client.wait_until_connected(5s);
  Lock lock = client.get_lock("tls-served");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(StartUpConnectFailure, AnIpv6HostIsWrittenInBrackets) {
  RedisServer server;  // listens on 127.0.0.1 only: [::1]:port refuses
  Config config = fast_config(Config::from_url("redis://[::1]:" + std::to_string(server.port())));
  EXPECT_EQ(config.host, "::1");
  config.connect_timeout = 200ms;
  config.command_timeout = 300ms;
  Client client(config);
  const std::string written = "[::1]:" + std::to_string(server.port());
  try {
    client.wait_until_connected(300ms);
    ADD_FAILURE() << "connected to a port nobody listens on";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), written)) << error.what();
  }
  try {
    client.get_lock("v6").try_lock();
    ADD_FAILURE() << "locked on a port nobody listens on";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "lock 'v6' on " + written)) << error.what();
  }
}

TEST(StartUpConnectFailure, AUrlHostWithANulIsRefusedAndNothingConnects) {
  using namespace std::string_literals;
  RedisServer server;
  RedisProbe probe(server);
  auto connections = [&] {
    auto info = probe.command({"INFO", "stats"}).str;
    auto at = info.find("total_connections_received:");
    return std::stoll(info.substr(at + std::string("total_connections_received:").size()));
  };
  auto before = connections();
  const std::string url = "redis://127.0.0.1\0evil:"s + std::to_string(server.port());
  try {
    Client client(Config::from_url(url));
    ADD_FAILURE() << "made a client of a host with a NUL";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument) << error.what();
  }
  Config config = fast_config(server);
  config.host = "127.0.0.1\0evil"s;
  try {
    Client client(config);
    ADD_FAILURE() << "made a client of a host with a NUL";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument) << error.what();
    EXPECT_TRUE(contains(error.what(), "Config::host")) << error.what();
  }
  EXPECT_EQ(connections(), before) << "something connected to 127.0.0.1";
}

TEST(StartUpConnectFailure, AnUpperCaseSchemeConnects) {
  RedisServer server;
  Client client(fast_config(Config::from_url("REDIS://127.0.0.1:" + std::to_string(server.port()))));
  Lock lock = client.get_lock("upper-case-scheme");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

}  // namespace
}  // namespace warden::test
