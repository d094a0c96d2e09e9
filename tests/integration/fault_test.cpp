// Faults: scripts flushed, server killed, server restarted, server paused,
// wrong credentials, shutdown with calls pending.
#include <gtest/gtest.h>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

TEST(Fault, ScriptFlushIsSurvivedThroughTheEvalFallback) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("flushed");
  lock.lock();
  lock.unlock();
  probe.command({"SCRIPT", "FLUSH"});
  long long evals_before = probe.command_calls("eval");
  lock.lock();  // EVALSHA answers NOSCRIPT; EVAL runs it
  EXPECT_TRUE(probe.exists("flushed"));
  EXPECT_GT(probe.command_calls("eval"), evals_before);
  probe.command({"SCRIPT", "FLUSH"});
  lock.unlock();
  EXPECT_FALSE(probe.exists("flushed"));
}

TEST(Fault, ServerKilledMidWaitFailsWithAConnectionErrorByTheDeadline) {
  RedisServer server;
  Client holder{fast_config(server)};
  Config config = fast_config(server);
  Client waiter_client{config};
  holder.get_lock("doomed").lock();
  Lock lock = waiter_client.get_lock("doomed");

  std::error_code failure;
  std::chrono::steady_clock::time_point failed_at;
  std::thread waiter([&] {
    try {
      lock.lock();
    } catch (const Error& error) {
      failure = error.code();
      failed_at = std::chrono::steady_clock::now();
    }
  });
  RedisProbe probe(server);
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{doomed}") == 1; }));
  auto killed_at = std::chrono::steady_clock::now();
  server.kill();
  waiter.join();
  EXPECT_TRUE(failure == errc::connection_lost || failure == errc::connection_refused || failure == errc::timed_out)
      << failure.message();
  // The re-poll after the subscriber dropped finds no server; it fails within
  // the command deadline (plus the attempts to read ownership back).
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(failed_at - killed_at);
  EXPECT_LT(took.count(), (config.command_timeout * (config.retry_attempts + 2)).count()) << took.count();
}

TEST(Fault, CallsOnADeadServerFailByTheirDeadline) {
  RedisServer server;
  Config config = fast_config(server);
  Client client{config};
  Lock lock = client.get_lock("offline");
  lock.lock();
  lock.unlock();
  server.kill();
  auto start = std::chrono::steady_clock::now();
  try {
    lock.try_lock();
    FAIL() << "try_lock on a dead server must throw";
  } catch (const Error& error) {
    EXPECT_TRUE(error.code() == errc::connection_refused || error.code() == errc::connection_lost ||
                error.code() == errc::timed_out)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("offline"), std::string::npos) << error.what();
  }
  EXPECT_LT(elapsed_ms(start), (config.command_timeout * (config.retry_attempts + 2)).count());
}

TEST(Fault, ClientReconnectsAfterARestartAndLocksWorkAgain) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("phoenix");
  lock.lock();
  lock.unlock();
  server.kill();
  server.start();  // same port, empty data set
  // The first calls may still meet the dead connection; within a few seconds
  // the client is back.
  bool locked = false;
  auto start = std::chrono::steady_clock::now();
  while (!locked && elapsed_ms(start) < 10'000) {
    try {
      locked = lock.try_lock_for(1s);
    } catch (const Error&) {
    }
  }
  ASSERT_TRUE(locked);
  RedisProbe fresh(server);
  EXPECT_TRUE(fresh.exists("phoenix"));
  lock.unlock();
  EXPECT_FALSE(fresh.exists("phoenix"));
}

TEST(Fault, WaitersRePollAfterTheSubscriberReconnects) {
  RedisServer server;
  Config config = fast_config(server);
  Client a{config};
  Client b{config};
  Lock held = a.get_lock("repoll");
  held.lock(lock_options().with_lease(60s));
  Lock wanted = b.get_lock("repoll");
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    got = wanted.try_lock_for(20s);
    if (got) wanted.unlock();
  });
  RedisProbe probe(server);
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{repoll}") == 1; }));
  // The lock goes away without an unlock message (as if the message were lost),
  // then the subscriber connection drops: the waiter must re-poll rather than
  // sleep out its 20 s.
  probe.command({"DEL", "repoll"});
  probe.command({"CLIENT", "KILL", "TYPE", "pubsub"});
  auto start = std::chrono::steady_clock::now();
  waiter.join();
  EXPECT_TRUE(got.load());
  EXPECT_LT(elapsed_ms(start), 5'000) << "the waiter did not re-poll when its subscriber dropped";
}

TEST(Fault, PausedServerTimesOutCommandsWithinTheirDeadline) {
  RedisServer server;
  Config config = fast_config(server);
  Client client{config};
  Lock lock = client.get_lock("frozen");
  lock.lock();
  lock.unlock();
  server.pause();
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(lock.is_locked(), Error);
  EXPECT_LT(elapsed_ms(start), config.command_timeout.count() + 500);
  server.resume();
}

TEST(Fault, WrongPasswordIsAnAuthenticationError) {
  RedisServer server({"--requirepass", "sesame"});
  Config config = fast_config(server);
  config.password = "wrong";
  Client client{config};
  try {
    client.get_lock("guarded").try_lock();
    FAIL() << "must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::authentication_failed) << error.what();
  }
  config.password = "sesame";
  Client good{config};
  Lock lock = good.get_lock("guarded");
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(Fault, ATransientSetupErrorIsRetriedNotReportedAsBadCredentials) {
  RedisServer server({"--requirepass", "secret"});
  RedisProbe probe(server);
  probe.command({"CONFIG", "SET", "maxclients", "1"});  // the probe takes the only slot
  Config config = fast_config(server);
  config.password = "secret";
  config.command_timeout = 3s;
  Event refused;
  config.logger = [&](log_level, std::string_view message) {
    if (message.find("max number of clients") != std::string_view::npos) refused.set();
  };
  Client client{config};
  auto acquired = client.get_lock("crowded").try_lock_async(9, lock_options().with_wait(0ms));
  ASSERT_TRUE(refused.wait_for(2s)) << "the server never turned the client away";
  probe.command({"CONFIG", "SET", "maxclients", "100"});
  EXPECT_TRUE(acquired.get());  // the credentials were fine all along
}

TEST(Fault, AnAcquireCutOffInFlightReadsOwnershipBackAfterTheReconnect) {
  RedisServer server;
  Config config = fast_config(server);
  config.command_timeout = 3s;
  Client client{config};
  Lock lock = client.get_lock("cut-off");
  lock.lock();
  lock.unlock();
  server.pause();
  auto acquired = lock.try_lock_async(7, lock_options().with_wait(10s));
  // The acquire has to be on the wire before the cut; a frozen server gives no
  // sign of receiving it, so this is the one wait here that is a plain sleep.
  std::this_thread::sleep_for(200ms);
  server.kill();   // the connection resets with the acquire unanswered
  server.start();  // same port, empty
  // The outcome is read back (and the acquire re-tried) on the new
  // connection, well within the caller's 10 s.
  EXPECT_TRUE(acquired.get());
  RedisProbe probe(server);
  EXPECT_EQ(probe.hgetall("cut-off"), (std::map<std::string, std::string>{{client.id() + ":7", "1"}}));
  lock.unlock_async(7).get();
}

TEST(Fault, AclUserAndDatabaseAreSetUpOnConnect) {
  RedisServer server;
  RedisProbe probe(server);
  probe.command({"ACL", "SETUSER", "locker", "on", ">pw", "~*", "&*", "+@all"});
  Config config = Config::from_url("redis://locker:pw@127.0.0.1:" + std::to_string(server.port()) + "/3");
  Client client{config};
  Lock lock = client.get_lock("in-db-3");
  lock.lock();
  EXPECT_FALSE(probe.exists("in-db-3"));  // db 0
  probe.command({"SELECT", "3"});
  EXPECT_TRUE(probe.exists("in-db-3"));
  lock.unlock();
}

TEST(Fault, DestroyingTheClientFailsPendingCallsWithShutDown) {
  RedisServer server;
  Client holder{fast_config(server)};
  holder.get_lock("forever").lock();
  AcquireFuture<void> pending;
  Lock orphan_handle = [&] {
    Client client{fast_config(server)};
    Lock lock = client.get_lock("forever");
    pending = lock.lock_async(42);
    return lock;
  }();  // ~Client runs here
  try {
    pending.get();
    FAIL() << "must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::shut_down) << error.what();
  }
  // Handles outliving their client fail the same way, without hanging.
  try {
    orphan_handle.try_lock();
    FAIL() << "must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::shut_down);
  }
}

TEST(Fault, BlockingCallInsideACallbackFailsInsteadOfDeadlocking) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  Lock lock = client.get_lock("reentrant-callback");
  Event done;
  std::error_code seen;
  auto listening = lock.subscribe_lost([&](const LockLost&) {
    try {
      lock.is_locked();  // runs on the I/O thread
    } catch (const Error& error) {
      seen = error.code();
    }
    done.set();
  });
  lock.lock();
  probe.command({"DEL", "reentrant-callback"});
  ASSERT_TRUE(done.wait_for(3s));
  EXPECT_EQ(seen, errc::would_deadlock);
}

}  // namespace
}  // namespace warden::test
