// Hostile input never touches data a lock does not own: one table row per
// class of bad input (issue 8 §4). Each row sets up the hostile state, makes
// the call, expects a typed error and checks that every key in the server is
// byte-for-byte what it was (DUMP) with the same expiry.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

struct Row {
  const char* what;                             // the class of bad input
  std::vector<std::vector<std::string>> setup;  // commands that build the hostile state
  std::function<void(Client&)> call;            // the call that must fail
  errc expected;
};

// Every key's DUMP and whether it has an expiry (a TTL that keeps counting
// down is the same TTL; one set or removed is a change).
std::map<std::string, std::pair<std::string, bool>> snapshot(RedisProbe& probe) {
  std::map<std::string, std::pair<std::string, bool>> all;
  for (auto& key : probe.keys("*")) all[key] = {probe.command({"DUMP", key}).str, probe.pttl(key) >= 0};
  return all;
}

// A fair lock with a live waiter in its queue (Redisson's layout).
std::vector<std::vector<std::string>> fair_lock_with_queue(const std::string& name) {
  return {{"HSET", name, "someone:1", "1"},
          {"PEXPIRE", name, "60000"},
          {"RPUSH", "redisson_lock_queue:{" + name + "}", "waiter:1"},
          {"ZADD", "redisson_lock_timeout:{" + name + "}", "99999999999999", "waiter:1"}};
}

std::vector<Row> rows() {
  using namespace std::chrono_literals;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {
      // force_unlock deletes only a lock of its own kind.
      {"Lock::force_unlock on a string",
       {{"SET", "k", "precious"}},
       [](Client& c) { c.get_lock("k").force_unlock(); },
       errc::wrong_type},
      {"Lock::force_unlock on a foreign hash",
       {{"HSET", "k", "name", "alice", "age", "42"}},
       [](Client& c) { c.get_lock("k").force_unlock(); },
       errc::wrong_type},
      {"Lock::force_unlock on a list",
       {{"RPUSH", "k", "a", "b"}},
       [](Client& c) { c.get_lock("k").force_unlock(); },
       errc::wrong_type},
      {"Lock::force_unlock on a read-write lock",
       {{"HSET", "k", "mode", "read", "o:1", "1"}, {"PEXPIRE", "k", "60000"}},
       [](Client& c) { c.get_lock("k").force_unlock(); },
       errc::wrong_type},
      {"Lock::force_unlock on a fair lock's live queue", fair_lock_with_queue("k"),
       [](Client& c) { c.get_lock("k").force_unlock(); }, errc::wrong_type},
      {"FairLock::force_unlock on a string",
       {{"SET", "k", "precious"}},
       [](Client& c) { c.get_fair_lock("k").force_unlock(); },
       errc::wrong_type},
      {"FairLock::force_unlock on a read-write lock",
       {{"HSET", "k", "mode", "write", "o:1:write", "1"}},
       [](Client& c) { c.get_fair_lock("k").force_unlock(); },
       errc::wrong_type},
      {"FairLock::force_unlock with a foreign queue key",
       {{"HSET", "k", "o:1", "1"}, {"SET", "redisson_lock_queue:{k}", "not a list"}},
       [](Client& c) { c.get_fair_lock("k").force_unlock(); },
       errc::wrong_type},
      {"read_lock().force_unlock on a plain lock",
       {{"HSET", "k", "o:1", "1"}},
       [](Client& c) { c.get_read_write_lock("k").read_lock().force_unlock(); },
       errc::wrong_type},
      {"write_lock().force_unlock on a foreign hash",
       {{"HSET", "k", "mode", "write", "owner", "bob"}},
       [](Client& c) { c.get_read_write_lock("k").write_lock().force_unlock(); },
       errc::wrong_type},
      {"write_lock().force_unlock on a string",
       {{"SET", "k", "write"}},
       [](Client& c) { c.get_read_write_lock("k").write_lock().force_unlock(); },
       errc::wrong_type},

      // Acquires never take over a key of another kind.
      {"read lock on a foreign hash",
       {{"HSET", "k", "name", "alice"}},
       [](Client& c) { c.get_read_write_lock("k").read_lock().try_lock(); },
       errc::wrong_type},
      {"read lock on a plain lock's hash",
       {{"HSET", "k", "o:1", "1"}, {"PEXPIRE", "k", "60000"}},
       [](Client& c) { c.get_read_write_lock("k").read_lock().try_lock(); },
       errc::wrong_type},
      {"write lock on a hash with a bogus mode",
       {{"HSET", "k", "mode", "banana"}},
       [](Client& c) { c.get_read_write_lock("k").write_lock().try_lock(); },
       errc::wrong_type},
      {"write lock on a set",
       {{"SADD", "k", "a"}},
       [](Client& c) { c.get_read_write_lock("k").write_lock().try_lock(); },
       errc::wrong_type},
      {"Lock on a string", {{"SET", "k", "x"}}, [](Client& c) { c.get_lock("k").try_lock(); }, errc::wrong_type},
      {"Lock on a list", {{"RPUSH", "k", "x"}}, [](Client& c) { c.get_lock("k").try_lock(); }, errc::wrong_type},
      {"Lock on a read-write lock",
       {{"HSET", "k", "mode", "read", "o:1", "1"}},
       [](Client& c) { c.get_lock("k").try_lock_for(1s); },
       errc::wrong_type},
      {"Lock on a hash of non-counts",
       {{"HSET", "k", "o:1", "many"}},
       [](Client& c) { c.get_lock("k").try_lock(); },
       errc::wrong_type},
      {"FairLock on a string",
       {{"SET", "k", "x"}},
       [](Client& c) { c.get_fair_lock("k").try_lock_for(1s); },
       errc::wrong_type},
      {"FairLock with a foreign timeout key",
       {{"SET", "redisson_lock_timeout:{k}", "x"}},
       [](Client& c) { c.get_fair_lock("k").try_lock_for(1s); },
       errc::wrong_type},

      // Queries on keys that are not locks.
      {"is_locked on a string", {{"SET", "k", "x"}}, [](Client& c) { c.get_lock("k").is_locked(); }, errc::wrong_type},
      {"remain_time_to_live on a foreign hash",
       {{"HSET", "k", "name", "alice"}},
       [](Client& c) { c.get_lock("k").remain_time_to_live(); },
       errc::wrong_type},
      {"hold_count on a list",
       {{"RPUSH", "k", "x"}},
       [](Client& c) { c.get_lock("k").hold_count(); },
       errc::wrong_type},
      {"is_held on a read-write lock",
       {{"HSET", "k", "mode", "read", "o:1", "1"}},
       [](Client& c) { c.get_lock("k").is_held(); },
       errc::wrong_type},
      {"read_lock().is_locked on a plain lock",
       {{"HSET", "k", "o:1", "1"}},
       [](Client& c) { c.get_read_write_lock("k").read_lock().is_locked(); },
       errc::wrong_type},
      {"MultiLock::is_locked with a member on a string",
       {{"SET", "k", "v"}},
       [](Client& c) {
         MultiLock{c.get_lock("free"), c.get_lock("k")}.is_locked();
       },
       errc::wrong_type},

      // Durations: NaN is no lease and no wait.
      {"NaN lease",
       {},
       [nan](Client& c) { c.get_lock("k").lock(lock_options().with_lease(std::chrono::duration<double>(nan))); },
       errc::invalid_argument},
      {"NaN wait",
       {},
       [nan](Client& c) { c.get_lock("k").try_lock_for(std::chrono::duration<double, std::milli>(nan)); },
       errc::invalid_argument},
      {"NaN lease of a bounded try_lock",
       {},
       [nan](Client& c) {
         c.get_lock("k").try_lock(lock_options().with_wait(0ms).with_lease(std::chrono::duration<float>(nan)));
       },
       errc::invalid_argument},

      // Moved-from handles.
      {"moved-from Lock",
       {},
       [](Client& c) {
         Lock lock = c.get_lock("k");
         Lock other = std::move(lock);
         lock.try_lock();  // NOLINT(bugprone-use-after-move): the subject of the test
       },
       errc::invalid_argument},
      {"moved-from FairLock",
       {},
       [](Client& c) {
         FairLock lock = c.get_fair_lock("k");
         FairLock other = std::move(lock);
         lock.is_locked();  // NOLINT(bugprone-use-after-move)
       },
       errc::invalid_argument},
      {"moved-from read lock",
       {},
       [](Client& c) {
         Lock lock = c.get_read_write_lock("k").read_lock();
         Lock other = std::move(lock);
         lock.force_unlock();  // NOLINT(bugprone-use-after-move)
       },
       errc::invalid_argument},
      {"moved-from MultiLock",
       {},
       [](Client& c) {
         MultiLock lock{c.get_lock("a"), c.get_lock("b")};
         MultiLock other = std::move(lock);
         lock.try_lock();  // NOLINT(bugprone-use-after-move)
       },
       errc::invalid_argument},
      {"moved-from Lock, async",
       {},
       [](Client& c) {
         Lock lock = c.get_lock("k");
         Lock other = std::move(lock);
         lock.lock_async(1).get();  // NOLINT(bugprone-use-after-move)
       },
       errc::invalid_argument},

      // Names whose keys could not share one cluster slot.
      {"name with an empty hash tag", {}, [](Client& c) { c.get_lock("x{}y"); }, errc::invalid_argument},
  };
}

class HostileInput : public ::testing::Test {
 protected:
  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(HostileInput, EachClassIsRefusedWithATypedErrorAndChangesNothing) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.what);
    probe.command({"FLUSHALL"});
    for (const auto& command : row.setup) ASSERT_FALSE(probe.command(command).is_error()) << command[0];
    auto before = snapshot(probe);
    try {
      row.call(client);
      ADD_FAILURE() << "no error; expected " << make_error_code(row.expected).message();
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), row.expected) << error.what();
    }
    EXPECT_EQ(snapshot(probe), before) << "the call changed Redis";
  }
}

TEST_F(HostileInput, ConfigOutOfRangeIsRefusedWhenTheClientIsMade) {
  using namespace std::chrono_literals;
  std::vector<std::pair<const char*, std::function<void(Config&)>>> spoilers = {
      {"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = 0ms; }},
      {"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = std::chrono::milliseconds::max(); }},
      {"command_timeout", [](Config& c) { c.command_timeout = -1ms; }},
      {"connect_timeout", [](Config& c) { c.connect_timeout = 0ms; }},
      {"fair_lock_wait_timeout", [](Config& c) { c.fair_lock_wait_timeout = -1s; }},
      {"retry_attempts", [](Config& c) { c.retry_attempts = -1; }},
      {"retry_backoff_min", [](Config& c) { c.retry_backoff_min = 5s; }},
      {"health_check_interval", [](Config& c) { c.health_check_interval = 0ms; }},
      {"port", [](Config& c) { c.port = 0; }},
      {"database", [](Config& c) { c.database = -2; }},
  };
  for (auto& [field, spoil] : spoilers) {
    Config config = fast_config(server);
    spoil(config);
    try {
      Client bad{config};
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument) << error.what();
      EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
    }
  }
  EXPECT_TRUE(probe.keys("*").empty());
}

// A deadline at time_point::min() of any clock is one attempt (it hung: the
// subtraction from now overflowed into a wait of centuries).
TEST_F(HostileInput, DeadlineAtMinIsOneAttempt) {
  using namespace std::chrono_literals;
  Lock lock = client.get_lock("until-min");
  Client other_client{fast_config(server)};
  Lock theirs = other_client.get_lock("until-min");
  ASSERT_TRUE(theirs.try_lock_async(7, lock_options().with_wait(0ms).with_lease(10s)).get());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(lock.try_lock_until(std::chrono::steady_clock::time_point::min()));
  EXPECT_FALSE(lock.try_lock_until(std::chrono::system_clock::time_point::min()));
  EXPECT_FALSE(lock.try_lock_until(std::chrono::time_point<std::chrono::system_clock, std::chrono::hours>::min()));
  EXPECT_LT(elapsed_ms(start), 1000);
  theirs.unlock_async(7).get();
  EXPECT_TRUE(lock.try_lock_until(std::chrono::steady_clock::time_point::min()));
  lock.unlock();
}

// An ACL user allowed every command and key but no channel.
Config channel_less_user(RedisServer& server, RedisProbe& probe) {
  auto reply = probe.command({"ACL", "SETUSER", "nochannels", "on", ">pw", "~*", "+@all", "resetchannels"});
  EXPECT_FALSE(reply.is_error()) << reply.str;
  Config config = fast_config(server);
  config.username = "nochannels";
  config.password = "pw";
  return config;
}

// An unlock whose PUBLISH is refused must not have deleted the lock first.
TEST_F(HostileInput, RefusedPublishLeavesTheLockAsItWas) {
  Client limited{channel_less_user(server, probe)};
  for (auto& [label, make] : std::vector<std::pair<const char*, std::function<Lock()>>>{
           {"lock", [&] { return limited.get_lock("pub-lock"); }},
           {"write", [&] { return limited.get_read_write_lock("pub-rw").write_lock(); }},
           {"read", [&] { return limited.get_read_write_lock("pub-rw").read_lock(); }}}) {
    SCOPED_TRACE(label);
    Lock lock = make();
    lock.lock();
    auto before = snapshot(probe);
    try {
      lock.unlock_async(current_thread_id()).get();
      ADD_FAILURE() << "the unlock's PUBLISH should have been refused";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("publish"), std::string::npos) << error.what();
    }
    auto after = snapshot(probe);
    for (auto& [key, value] : before) {
      if (key.rfind("redisson_unlock_latch", 0) == 0) continue;
      EXPECT_EQ(after[key], value) << key;
    }
    EXPECT_TRUE(probe.exists(lock.name()));
    probe.command({"DEL", lock.name()});
    try {
      lock.force_unlock();
    } catch (const Error&) {
    }
  }
}

// A server that refuses SUBSCRIBE: the waiter falls back to bounded re-tries
// and still gets the lock when it is released; no reconnect storm.
TEST_F(HostileInput, RefusedSubscribeFallsBackToPolling) {
  using namespace std::chrono_literals;
  Config config = channel_less_user(server, probe);
  auto drops = std::make_shared<std::atomic<int>>(0);
  auto refusals = std::make_shared<std::atomic<int>>(0);
  config.logger = [drops, refusals](log_level, std::string_view message) {
    if (message.find(" lost: ") != std::string_view::npos) ++*drops;
    if (message.find("refused SUBSCRIBE") != std::string_view::npos) ++*refusals;
  };
  Client limited{config};
  Lock holder = client.get_lock("no-sub");
  ASSERT_TRUE(holder.try_lock_async(3, lock_options().with_wait(0ms).with_lease(20s)).get());
  auto connections = [&] {
    auto info = probe.command({"INFO", "stats"}).str;
    auto at = info.find("total_connections_received:");
    return std::stoll(info.substr(at + std::string("total_connections_received:").size()));
  };
  long long before = connections();
  auto start = std::chrono::steady_clock::now();
  std::thread release([&] {
    std::this_thread::sleep_for(300ms);  // time is the subject: the waiter must notice a release it is not told of
    holder.unlock_async(3).get();
  });
  Lock waiter = limited.get_lock("no-sub");
  bool got = false;
  try {
    got = waiter.try_lock_for(5s);
  } catch (const Error& error) {
    ADD_FAILURE() << error.what();
  }
  release.join();
  EXPECT_TRUE(got);
  EXPECT_LT(elapsed_ms(start), 4000);
  EXPECT_LT(connections() - before, 5) << "reconnect storm";
  EXPECT_LE(drops->load(), 1) << "each refused SUBSCRIBE cost a reconnect";
  EXPECT_EQ(refusals->load(), 1) << "the refusal is logged once";
  probe.command({"DEL", "no-sub"});  // the waiter's own unlock would be refused its PUBLISH too
}

}  // namespace
}  // namespace warden::test

namespace warden::test {
namespace {

// NOAUTH (no password configured for a server that needs one) is an
// authentication error, and the reason is given in words, never the password.
TEST(HostileInputCredentials, AuthenticationErrorsSayWhyAndNeverThePassword) {
  using namespace std::chrono_literals;
  RedisServer server({"--requirepass", "sesame"});
  Config config = Config::from_url("redis://127.0.0.1:" + std::to_string(server.port()));
  config.command_timeout = 1s;
  {
    Client client{config};
    try {
      client.get_lock("guarded").try_lock();
      ADD_FAILURE() << "must throw";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
      EXPECT_NE(std::string(error.what()).find("requires a password"), std::string::npos) << error.what();
    }
  }
  auto logged = std::make_shared<std::string>();
  auto mutex = std::make_shared<std::mutex>();
  config.password = "hunter2-wrong";
  config.logger = [logged, mutex](log_level, std::string_view message) {
    std::lock_guard<std::mutex> guard(*mutex);
    logged->append(message).append("\n");
  };
  Client client{config};
  try {
    client.get_lock("guarded").try_lock();
    ADD_FAILURE() << "must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
    EXPECT_EQ(std::string(error.what()).find("hunter2"), std::string::npos) << error.what();
  }
  std::lock_guard<std::mutex> guard(*mutex);
  EXPECT_NE(logged->find("wrong password"), std::string::npos) << *logged;
  EXPECT_EQ(logged->find("hunter2"), std::string::npos) << *logged;
}

}  // namespace
}  // namespace warden::test
