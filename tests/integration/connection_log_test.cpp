// What the connections tell the server and the logger: every connection is
// named warden:<client id> (CLIENT LIST tells clients apart), a server that
// refuses the name still serves locks, log lines say which connection they
// are about, a cause is said once, and a server that stays away is logged
// once rather than at every attempt.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

class LogLines {
 public:
  warden::logger logger() {
    return [lines = lines_, mutex = mutex_](log_level level, std::string_view message) {
      std::lock_guard<std::mutex> guard(*mutex);
      lines->emplace_back(level, std::string(message));
    };
  }
  // Lines at `level` containing every one of `parts`.
  int count(log_level level, std::initializer_list<std::string> parts) {
    std::lock_guard<std::mutex> guard(*mutex_);
    int n = 0;
    for (auto& [at, line] : *lines_) {
      bool all = at == level;
      for (auto& part : parts) all = all && line.find(part) != std::string::npos;
      n += all;
    }
    return n;
  }
  std::string all() {
    std::lock_guard<std::mutex> guard(*mutex_);
    std::string out;
    for (auto& [level, line] : *lines_) out += std::to_string(static_cast<int>(level)) + " " + line + "\n";
    return out;
  }

 private:
  std::shared_ptr<std::mutex> mutex_ = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<std::pair<log_level, std::string>>> lines_ =
      std::make_shared<std::vector<std::pair<log_level, std::string>>>();
};

// CLIENT LIST lines whose name is `name`.
int clients_named(RedisProbe& probe, const std::string& name) {
  std::istringstream lines(probe.command({"CLIENT", "LIST"}).str);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) n += line.find(" name=" + name + " ") != std::string::npos;
  return n;
}

TEST(ConnectionLog, BothConnectionsOfAClientAreNamedAfterIt) {
  RedisServer server;
  RedisProbe probe(server);
  LogLines log;
  Config config = fast_config(server);
  config.logger = log.logger();
  Client client{config};
  Client other{config};
  client.get_lock("named").lock();
  // The command and the subscriber connection, each with the client's id.
  ASSERT_TRUE(eventually([&] { return clients_named(probe, "warden:" + client.id()) == 2; }))
      << probe.command({"CLIENT", "LIST"}).str;
  ASSERT_TRUE(eventually([&] { return clients_named(probe, "warden:" + other.id()) == 2; }));
  // The server sees a connection's name before its client logs it as
  // established (the set-up's replies are read after the server sent them).
  const std::string where = "127.0.0.1:" + std::to_string(server.port());
  auto established = [&](const std::string& which) {
    return log.count(log_level::info, {"warden: " + which + " connection to " + where + " established"});
  };
  EXPECT_TRUE(eventually([&] { return established("command") == 2 && established("subscriber") == 2; })) << log.all();
  EXPECT_EQ(established("command"), 2) << log.all();
  EXPECT_EQ(established("subscriber"), 2) << log.all();
}

TEST(ConnectionLog, AServerThatRefusesTheNameStillServesLocks) {
  RedisServer server;
  RedisProbe probe(server);
  // Everything but CLIENT.
  ASSERT_FALSE(probe.command({"ACL", "SETUSER", "unnamed", "on", ">pw", "~*", "&*", "+@all", "-client"}).is_error());
  LogLines log;
  Config config = fast_config(server);
  config.username = "unnamed";
  config.password = "pw";
  config.logger = log.logger();
  Client client{config};
  Lock lock = client.get_lock("unnamed-lock");
  lock.lock();
  EXPECT_TRUE(lock.is_held());
  lock.unlock();
  EXPECT_EQ(clients_named(probe, "warden:" + client.id()), 0);
  EXPECT_EQ(log.count(log_level::info, {"command connection", "refused CLIENT SETNAME", "NOPERM"}), 1) << log.all();
}

TEST(ConnectionLog, ACauseIsSaidOnceAndAServerThatStaysAwayIsLoggedOnce) {
  std::uint16_t port;
  {
    RedisServer gone;  // a port that nobody listens on any more
    port = gone.port();
  }
  LogLines log;
  Config config = Config::from_url("redis://127.0.0.1:" + std::to_string(port));
  config.connect_timeout = 1s;
  config.command_timeout = 500ms;
  config.retry_backoff_min = 10ms;
  config.retry_backoff_max = 20ms;
  config.logger = log.logger();
  Client client{config};
  try {
    client.get_lock("nobody-home").try_lock();
    FAIL() << "a lock with no server was taken";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::connection_refused);
    std::string what = error.what();
    EXPECT_NE(what.find("connection refused (ECONNREFUSED)"), std::string::npos) << what;
    // Said once: neither "connection refused: connection refused" nor the
    // code's text appended again.
    auto first = what.find("connection refused");
    EXPECT_EQ(what.find("connection refused", first + 1), std::string::npos) << what;
  }
  const std::string command = "command connection to 127.0.0.1:" + std::to_string(port) + " failed";
  const std::string subscriber = "subscriber connection to 127.0.0.1:" + std::to_string(port) + " failed";
  ASSERT_TRUE(eventually([&] { return log.count(log_level::debug, {command, "ECONNREFUSED"}) >= 3; })) << log.all();
  // Once at info (saying where the repeats go), then at debug.
  EXPECT_EQ(log.count(log_level::info, {command, "ECONNREFUSED", "logged at debug level"}), 1) << log.all();
  EXPECT_EQ(log.count(log_level::info, {subscriber, "ECONNREFUSED"}), 1) << log.all();
  EXPECT_EQ(log.count(log_level::warning, {command}), 0) << log.all();
}

TEST(ConnectionLog, AReconnectAfterFailedAttemptsSaysHowManyAndALostLinkIsAWarning) {
  RedisServer server;
  LogLines log;
  Config config = fast_config(server);
  config.logger = log.logger();
  Client client{config};
  client.get_lock("before").lock();
  const std::string where = "connection to 127.0.0.1:" + std::to_string(server.port());
  server.kill();
  ASSERT_TRUE(eventually([&] { return log.count(log_level::warning, {"command " + where + " lost"}) == 1; }))
      << log.all();
  ASSERT_TRUE(eventually([&] { return log.count(log_level::info, {"command " + where + " failed"}) == 1; }))
      << log.all();
  server.start();
  ASSERT_TRUE(eventually([&] {
    return log.count(log_level::info, {"command " + where + " re-established after", "failed attempt"}) == 1;
  })) << log.all();
  client.get_lock("after").lock();
}

}  // namespace
}  // namespace warden::test
