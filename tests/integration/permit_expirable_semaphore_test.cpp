// PermitExpirableSemaphore on one server: Redisson's layout (free count,
// {NAME}:timeout of id -> expiry by the server's clock), releases by id,
// expired permits reclaimed and a waiter woken at the earliest expiry, no
// client time in any command, never more holders than permits, cancellation,
// bad input, and Redisson-format permits mixed with warden's.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <future>
#include <regex>
#include <thread>
#include <vector>

#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "script_log.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::string timeouts(const std::string& name) { return "{" + name + "}:timeout"; }
std::string channel(const std::string& name) { return "redisson_sc:{" + name + "}"; }

long long server_ms(RedisProbe& probe) {
  auto time = probe.command({"TIME"});
  return std::stoll(time.elements[0].str) * 1000 + std::stoll(time.elements[1].str) / 1000;
}

long long score(RedisProbe& probe, const std::string& name, const std::string& id) {
  auto reply = probe.command({"ZSCORE", timeouts(name), id});
  return reply.is_nil() ? -1 : std::stoll(reply.str);
}

class PermitExpirableSemaphoreTest : public ::testing::Test {
 protected:
  RedisServer server{log_every_command()};
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(PermitExpirableSemaphoreTest, RedissonsLayoutByTheServersClock) {
  const std::string name = "pes:layout";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  EXPECT_EQ(semaphore.name(), name);
  EXPECT_TRUE(semaphore.try_set_permits(2));
  EXPECT_FALSE(semaphore.try_set_permits(3));
  EXPECT_EQ(probe.get(name), "2");

  auto before = server_ms(probe);
  std::string leased = semaphore.acquire(10s);
  auto after = server_ms(probe);
  EXPECT_TRUE(std::regex_match(leased, std::regex("[0-9a-f]{32}"))) << leased;
  EXPECT_GE(score(probe, name, leased), before + 10'000);
  EXPECT_LE(score(probe, name, leased), after + 10'000);
  before = server_ms(probe);
  std::string forever = semaphore.acquire();
  after = server_ms(probe);
  // No lease: the watchdog's (Config::lock_watchdog_timeout, 30 s), renewed
  // while this client lives, instead of Redisson's "no expiry" score.
  EXPECT_GE(score(probe, name, forever), before + 30'000);
  EXPECT_LE(score(probe, name, forever), after + 30'000);
  EXPECT_EQ(probe.get(name), "0");
  EXPECT_EQ(semaphore.available_permits(), 0);
  EXPECT_EQ(semaphore.acquired_permits(), 2);
  EXPECT_FALSE(semaphore.try_acquire());

  EXPECT_TRUE(semaphore.update_lease_time(forever, 5s));
  EXPECT_LE(score(probe, name, forever), server_ms(probe) + 5'000);
  semaphore.release(leased);
  EXPECT_EQ(probe.get(name), "1");
  EXPECT_EQ(score(probe, name, leased), -1);
  EXPECT_FALSE(semaphore.try_release(leased));
  try {
    semaphore.release(leased);
    ADD_FAILURE() << "released a permit twice";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::not_owner) << error.what();
  }
  EXPECT_TRUE(semaphore.try_release(forever));
  EXPECT_EQ(semaphore.available_permits(), 2);
  semaphore.set_permits(5);  // free + held = 5
  EXPECT_EQ(probe.get(name), "5");
}

TEST_F(PermitExpirableSemaphoreTest, AWaiterTakesAnExpiredPermitAtItsExpiry) {
  const std::string name = "pes:expiry";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  semaphore.try_set_permits(1);
  std::string short_lived = semaphore.acquire(400ms);
  auto started = std::chrono::steady_clock::now();
  // Nothing is published when a lease runs out: the waiter sleeps until the
  // expiry the server named, then tries.
  auto id = semaphore.try_acquire_for(5s, 10s);
  auto waited = elapsed_ms(started);
  ASSERT_TRUE(id.has_value());
  EXPECT_NE(*id, short_lived);
  EXPECT_GE(waited, 300);
  EXPECT_LT(waited, 1'500);
  try {
    semaphore.release(short_lived);
    ADD_FAILURE() << "released an expired permit";
  } catch (const Error& error) {
    EXPECT_TRUE(error.code() == errc::not_owner || error.code() == errc::lease_expired) << error.what();
  }
  EXPECT_EQ(semaphore.acquired_permits(), 1);
}

// As a Semaphore's: a try held up on the server ends the bounded wait with
// its commands, and the permit it takes later goes back, leaving nothing held.
TEST_F(PermitExpirableSemaphoreTest, ABoundedWaitWhoseTryIsHeldUpEndsWithItsCommandsAndLeavesNothingHeld) {
  const std::string name = "pes:held-up";
  Config config = fast_config(server);
  config.command_timeout = 400ms;
  Client paused{config};
  PermitExpirableSemaphore semaphore = paused.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(1));
  semaphore.release(semaphore.acquire(10s));  // connection up, scripts loaded

  probe.command({"CLIENT", "PAUSE", "5000", "WRITE"});
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(semaphore.try_acquire_for(100ms, 10s), Error);
  auto took = elapsed_ms(start);
  EXPECT_LE(took, 500 + 150) << "try_acquire_for(100ms) took " << took << " ms";
  probe.command({"CLIENT", "UNPAUSE"});

  EXPECT_TRUE(eventually([&] { return semaphore.acquired_permits() == 0 && semaphore.available_permits() == 1; }));
  EXPECT_FALSE(probe.exists("{" + name + "}:timeout"));
}

TEST_F(PermitExpirableSemaphoreTest, AnExpiredLeaseIsReportedAsSuchByRelease) {
  const std::string name = "pes:expired-release";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  semaphore.try_set_permits(1);
  std::string id = semaphore.acquire(1h);
  // Its expiry, by the server's clock, now lies in the past.
  probe.command({"ZADD", timeouts(name), std::to_string(server_ms(probe) - 1), id});
  try {
    semaphore.release(id);
    ADD_FAILURE() << "released an expired permit";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::lease_expired) << error.what();
  }
  EXPECT_EQ(probe.get(name), "1");  // reclaimed
}

TEST_F(PermitExpirableSemaphoreTest, NoCommandCarriesTheClientsClock) {
  const std::string name = "pes:clock";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  semaphore.try_set_permits(2);
  // A permit that expires in 2 s by the server's clock: whatever the
  // client's clock says, nobody may reclaim it before then.
  probe.command({"ZADD", timeouts(name), std::to_string(server_ms(probe) + 2'000), "0123456789abcdef0123456789abcdef"});
  probe.command({"DECR", name});
  auto id = semaphore.acquire(1h);
  semaphore.update_lease_time(id, 30s);
  semaphore.available_permits();
  EXPECT_FALSE(semaphore.try_acquire().has_value());
  semaphore.release(id);
  EXPECT_EQ(semaphore.acquired_permits(), 1);  // the foreign permit lives on
  // Every argument warden sent: none is a time near now (epoch s or ms).
  auto now_ms = static_cast<double>(server_ms(probe));
  auto log = probe.command({"SLOWLOG", "GET", "-1"});
  int scripts = 0;
  for (auto& entry : log.elements) {
    if (entry.elements.size() < 4) continue;
    auto& argv = entry.elements[3].elements;
    if (argv.empty() || (argv[0].str != "EVALSHA" && argv[0].str != "evalsha")) continue;
    ++scripts;
    for (std::size_t i = 3; i < argv.size(); ++i) {
      const auto& arg = argv[i].str;
      if (arg.empty() || arg.size() > 18 || arg.find_first_not_of("0123456789") != std::string::npos) continue;
      double value = std::stod(arg);
      EXPECT_FALSE(std::abs(value - now_ms) < 86'400'000.0) << "a client time in ms was sent: " << arg;
      EXPECT_FALSE(std::abs(value - now_ms / 1000) < 86'400.0) << "a client time in s was sent: " << arg;
    }
  }
  EXPECT_GE(scripts, 6);
}

TEST_F(PermitExpirableSemaphoreTest, ThreadsOfSeveralClientsNeverHoldMoreThanThePermits) {
  const std::string name = "pes:threads";
  Client other{fast_config(server)};
  client.get_permit_expirable_semaphore(name).try_set_permits(2);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 6; ++t) {
    workers.emplace_back([&, t] {
      PermitExpirableSemaphore semaphore = (t % 2 ? client : other).get_permit_expirable_semaphore(name);
      for (int i = 0; i < 15; ++i) {
        auto id = semaphore.acquire(30s);
        int now = ++inside;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        --inside;
        semaphore.release(id);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  EXPECT_LE(most.load(), 2);
  EXPECT_EQ(client.get_permit_expirable_semaphore(name).available_permits(), 2);
}

TEST_F(PermitExpirableSemaphoreTest, AReleaseWakesAWaiterWithinARoundTripAndFormsAgree) {
  const std::string name = "pes:wake";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  semaphore.try_set_permits(1);
  std::string held = semaphore.acquire();  // kept by the watchdog: only a release can free it
  auto waiting = semaphore.acquire_async(lock_options().with_lease(10s));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  auto released = std::chrono::steady_clock::now();
  std::promise<std::error_code> done;
  semaphore.release_async(held, [&](std::error_code error) { done.set_value(error); });
  EXPECT_FALSE(done.get_future().get());
  std::string id = waiting.get();
  EXPECT_LT(elapsed_ms(released), 250);
  EXPECT_TRUE(semaphore.try_release_async(id).get());
  std::promise<std::optional<std::string>> tried;
  semaphore.try_acquire_async(lock_options(),
                              [&](std::error_code, std::optional<std::string> got) { tried.set_value(got); });
  auto got = tried.get_future().get();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(semaphore.acquired_permits_async().get(), 1);
  semaphore.release(*got);
}

// Every call has a future twin and a callback twin, answering as the
// blocking call does.
TEST_F(PermitExpirableSemaphoreTest, TheSettingCallsFutureAndCallbackFormsAgree) {
  const std::string name = "pes:forms";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  EXPECT_TRUE(semaphore.try_set_permits_async(2).get());
  EXPECT_FALSE(semaphore.try_set_permits_async(5).get());
  EXPECT_EQ(probe.get(name), "2");
  semaphore.set_permits_async(3).get();
  EXPECT_EQ(semaphore.available_permits(), 3);
  std::string id = semaphore.acquire(30s);
  EXPECT_TRUE(semaphore.update_lease_time_async(id, 60s).get());
  const long long left = score(probe, name, id) - server_ms(probe);
  EXPECT_GT(left, 50'000);
  EXPECT_LE(left, 60'000);
  EXPECT_FALSE(semaphore.update_lease_time_async("00112233445566778899aabbccddeeff", 60s).get());
  std::promise<bool> updated;
  semaphore.update_lease_time_async(id, 40s, [&](std::error_code, bool ok) { updated.set_value(ok); });
  EXPECT_TRUE(updated.get_future().get());
  std::promise<bool> tried;
  semaphore.try_set_permits_async(7, [&](std::error_code, bool ok) { tried.set_value(ok); });
  EXPECT_FALSE(tried.get_future().get());
  // Bad input fails the future with a typed error and changes nothing.
  try {
    semaphore.set_permits_async(-1).get();
    ADD_FAILURE() << "set_permits_async(-1) succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
  }
  EXPECT_EQ(semaphore.available_permits(), 2);
  semaphore.release(id);
}

// Redisson's getLeaseTime: the time left by the server's clock, none for a
// permit that never expires, and not_owner for one not held.
TEST_F(PermitExpirableSemaphoreTest, LeaseTimeIsTheTimeLeftByTheServersClock) {
  const std::string name = "pes:lease-time";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(3));
  std::string leased = semaphore.acquire(20s);
  auto left = semaphore.lease_time(leased);
  ASSERT_TRUE(left.has_value());
  EXPECT_GT(*left, 19s);
  EXPECT_LE(*left, 20s);
  // Redisson's permit without expiry.
  const std::string forever = "00112233445566778899aabbccddeeff";
  probe.command({"ZADD", timeouts(name), "922337203685477", forever});
  probe.command({"DECR", name});
  EXPECT_FALSE(semaphore.lease_time(forever).has_value());
  EXPECT_FALSE(semaphore.lease_time_async(forever).get().has_value());
  // A watchdog-kept permit shows what its last renewal gave it.
  std::string kept = semaphore.acquire();
  std::promise<std::optional<std::chrono::milliseconds>> read;
  semaphore.lease_time_async(kept,
                             [&](std::error_code, std::optional<std::chrono::milliseconds> ms) { read.set_value(ms); });
  auto kept_left = read.get_future().get();
  ASSERT_TRUE(kept_left.has_value());
  EXPECT_LE(*kept_left, client.config().lock_watchdog_timeout);
  // Not held: released, expired, or never taken.
  semaphore.release(kept);
  std::string brief = semaphore.acquire(100ms);
  ASSERT_TRUE(eventually([&] { return score(probe, name, brief) < server_ms(probe); }));
  for (const std::string& gone : {kept, brief, std::string("ffffffffffffffffffffffffffffffff")}) {
    try {
      semaphore.lease_time(gone);
      ADD_FAILURE() << "a lease time for " << gone;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::not_owner) << error.what();
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
    }
  }
  EXPECT_EQ(probe.command({"ZCARD", timeouts(name)}).integer, 2) << "the expired permit was reclaimed";
  semaphore.release(leased);
  semaphore.release(forever);
}

TEST_F(PermitExpirableSemaphoreTest, CancellingAWaitLeavesNothingBehind) {
  const std::string name = "pes:cancel";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  cancel_source source;
  auto waiting = semaphore.acquire_async(lock_options().with_cancel(source.token()));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  source.cancel();
  try {
    waiting.get();
    ADD_FAILURE() << "a cancelled wait must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::cancelled);
  }
  EXPECT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 0; }));
  EXPECT_FALSE(probe.exists(name));
  EXPECT_FALSE(probe.exists(timeouts(name)));
}

TEST_F(PermitExpirableSemaphoreTest, BadInputAndForeignKeysAreRefusedAndChangeNothing) {
  const std::string name = "pes:bad";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  auto refused = [&](errc code, const std::function<void()>& call) {
    try {
      call();
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), code) << error.what();
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
      return;
    }
    ADD_FAILURE() << "accepted";
  };
  refused(errc::invalid_argument, [&] { semaphore.try_set_permits(0); });
  refused(errc::invalid_argument, [&] { semaphore.set_permits(-1); });
  refused(errc::invalid_argument, [&] { semaphore.lease_time(""); });
  refused(errc::invalid_argument, [&] { semaphore.acquire(lock_options().with_wait(1s)); });
  refused(errc::invalid_argument, [&] { semaphore.acquire(lock_options().with_lease(-1s)); });
  refused(errc::invalid_argument, [&] { semaphore.release(""); });
  refused(errc::invalid_argument, [&] { semaphore.update_lease_time("x", 0s); });
  EXPECT_TRUE(probe.keys().empty());

  probe.command({"HSET", name, "f", "1"});
  refused(errc::wrong_type, [&] { semaphore.try_acquire(); });
  refused(errc::wrong_type, [&] { semaphore.available_permits(); });
  refused(errc::wrong_type, [&] { semaphore.try_release("0123"); });
  refused(errc::wrong_type, [&] { semaphore.lease_time("0123"); });
  probe.command({"DEL", name});
  probe.command({"SET", name, "1"});
  probe.command({"SET", timeouts(name), "not a zset"});
  refused(errc::wrong_type, [&] { semaphore.try_acquire(); });
  refused(errc::wrong_type, [&] { semaphore.set_permits(3); });
  EXPECT_EQ(probe.get(name), "1");
  EXPECT_EQ(probe.get(timeouts(name)), "not a zset");
}

TEST_F(PermitExpirableSemaphoreTest, RedissonPermitsAndWardenPermitsMix) {
  const std::string name = "pes:interop";
  PermitExpirableSemaphore semaphore = client.get_permit_expirable_semaphore(name);
  // Set up and taken as Redisson would: count 2, one permit held for ever.
  probe.command({"SET", name, "1"});
  const std::string theirs = "00112233445566778899aabbccddeeff";
  probe.command({"ZADD", timeouts(name), "922337203685477", theirs});
  std::string mine = semaphore.acquire(30s);
  EXPECT_EQ(semaphore.acquired_permits(), 2);
  // A warden waiter is woken by a Redisson release (ZREM, INCRBY, publish).
  auto waiting = semaphore.try_acquire_async(lock_options().with_wait(10s).with_lease(10s));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  auto reply = probe.command({"EVAL",
                              "if redis.call('zrem', KEYS[2], ARGV[1]) == 1 then "
                              "local v = redis.call('incrby', KEYS[1], 1); redis.call('publish', KEYS[3], v); end",
                              "3", name, timeouts(name), channel(name), theirs});
  ASSERT_FALSE(reply.is_error()) << reply.str;
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready);
  auto got = waiting.get();
  ASSERT_TRUE(got.has_value());
  // warden releases a Redisson permit by its id too.
  probe.command({"ZADD", timeouts(name), "922337203685477", theirs});
  probe.command({"DECR", name});
  EXPECT_TRUE(semaphore.try_release(theirs));
  EXPECT_TRUE(semaphore.try_release(mine));
  // A Redisson waiter listens on redisson_sc:{NAME} for the new free count:
  // a warden release tells it "2".
  MessageRecorder redisson_waiter(server, {channel(name)});
  EXPECT_TRUE(semaphore.try_release(*got));
  auto messages = redisson_waiter.wait_for(1, 5s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].payload, "2");
  EXPECT_EQ(probe.get(name), "2");
}

}  // namespace
}  // namespace warden::test
