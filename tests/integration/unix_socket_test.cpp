// Unix domain sockets through the public API: a redis-server that also
// listens on <its directory>/redis.sock, a Client configured from its unix://
// URL. The fixture's probe inspects the server on its plain TCP port.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <warden/warden.hpp>

#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

RedisServerOptions with_socket(std::vector<std::string> extra_args = {}) {
  RedisServerOptions options;
  options.unix_socket = true;
  options.extra_args = std::move(extra_args);
  return options;
}

// `url` (a unix:// URL) with the fixture's short timeouts. host and port are
// deliberately left pointing nowhere useful: only the socket may be used.
Config socket_config(const std::string& url) {
  Config config = Config::from_url(url);
  config.port = 1;  // nothing listens there
  config.connect_timeout = 1s;
  config.command_timeout = 1s;
  config.retry_backoff_min = 20ms;
  config.retry_backoff_max = 200ms;
  return config;
}

TEST(UnixSocket, LockAndUnlock) {
  RedisServer server(with_socket());
  Client client{socket_config(server.unix_url())};
  Lock lock = client.get_lock("sock:lock");
  lock.lock();
  RedisProbe probe(server);
  EXPECT_EQ(probe.hgetall("sock:lock").size(), 1u);
  EXPECT_TRUE(lock.is_held());
  lock.unlock();
  EXPECT_FALSE(probe.exists("sock:lock"));
  // The client's connections really are on the socket: none of them is TCP.
  const std::string clients = probe.command({"CLIENT", "LIST"}).str;
  EXPECT_NE(clients.find("addr=/"), std::string::npos) << clients;
}

TEST(UnixSocket, DatabaseFromTheUrl) {
  RedisServer server(with_socket());
  Client client{socket_config(server.unix_url() + "?db=2")};
  Lock lock = client.get_lock("sock:db2");
  lock.lock();
  RedisProbe probe(server);
  EXPECT_FALSE(probe.exists("sock:db2"));  // not in db 0
  probe.command({"SELECT", "2"});
  EXPECT_EQ(probe.hgetall("sock:db2").size(), 1u);
  lock.unlock();
  EXPECT_FALSE(probe.exists("sock:db2"));
}

TEST(UnixSocket, PasswordFromTheUrl) {
  RedisServer server(with_socket({"--requirepass", "sesame"}));
  Client client{socket_config("unix://:sesame@" + server.unix_socket())};
  Lock lock = client.get_lock("sock:auth");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(UnixSocket, MissingSocketIsRefused) {
  RedisServer server(with_socket());
  Config config = socket_config("unix://" + server.directory() + "/no-such.sock");
  Client client{config};
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)client.get_lock("sock:none").try_lock();
    FAIL() << "try_lock through a missing socket must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::connection_refused) << error.what();
    EXPECT_NE(std::string(error.what()).find("no-such.sock"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(start), (config.connect_timeout + config.command_timeout).count() + 1'000);
}

}  // namespace
}  // namespace warden::test
