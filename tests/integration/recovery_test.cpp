// Recovery from lost replies and refusals never breaks exclusion: a take-back
// undoes only its own attempt, a "did not run" refusal is waited out, and a
// bounded wait answers by its bound even when every reply is lost.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "redis_probe.hpp"
#include "test_env.hpp"
#include "warden_scripts.hpp"

namespace warden::test {
namespace {

// One lock kind: how to get the lock named `name` from a client.
struct Kind {
  const char* label;
  Lock (*get)(Client&, const std::string&);
};

const Kind kinds[] = {
    {"lock", [](Client& c, const std::string& n) { return c.get_lock(n); }},
    {"fair", [](Client& c, const std::string& n) -> Lock { return c.get_fair_lock(n); }},
    {"write", [](Client& c, const std::string& n) { return c.get_read_write_lock(n).write_lock(); }},
    {"read", [](Client& c, const std::string& n) { return c.get_read_write_lock(n).read_lock(); }},
};

class RecoveryTakeBack : public ::testing::TestWithParam<Kind> {};

// Every key but the unlock latches, which releases leave for a while on purpose.
std::vector<std::string> keys_left(RedisProbe& probe) {
  std::vector<std::string> out;
  for (auto& key : probe.keys()) {
    if (key.rfind("redisson_unlock_latch:", 0) != 0) out.push_back(key);
  }
  return out;
}

// The server stops answering while an attempt is in flight, then dies with
// it and comes back empty (scripts forgotten). The caller has given up; the
// take-back of that attempt is still to be sent when the same thread locks
// again. It must neither delete the new hold nor run after it.
TEST_P(RecoveryTakeBack, NeverUndoesTheSameOwnersLaterHold) {
  const Kind& kind = GetParam();
  RedisServer server;
  Config config = fast_config(server);
  config.command_timeout = 300ms;
  // The holder reconnects only after the rival has loaded the scripts again,
  // so that its resent take-back meets NOSCRIPT while its new acquire does not.
  config.retry_backoff_min = 1s;
  config.retry_backoff_max = 1s;
  Client holder{config};
  Lock lock = kind.get(holder, "taken-back");

  server.pause();
  EXPECT_THROW(lock.try_lock(), Error);  // no answer to the attempt nor to its settling
  server.kill();
  server.start();

  Client rival_client{fast_config(server)};
  Lock warm = kind.get(rival_client, "warm-up");
  warm.lock();
  warm.unlock();

  // Until the holder has reconnected, a lock() may fail on the connection;
  // a caller tries again.
  auto give_up = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    try {
      lock.lock();
      break;
    } catch (const Error& error) {
      ASSERT_TRUE(error.code() == errc::connection_refused || error.code() == errc::timed_out) << error.what();
      ASSERT_LT(std::chrono::steady_clock::now(), give_up) << error.what();
    }
  }
  EXPECT_EQ(lock.hold_count(), 1);
  EXPECT_GT(lock.valid_until(), std::chrono::steady_clock::now());
  Lock rival = kind.get(rival_client, "taken-back");
  if (std::string(kind.label) != "read") {
    EXPECT_FALSE(rival.try_lock()) << "two holders: the take-back deleted the newer hold";
  }
  RedisProbe probe(server);
  EXPECT_TRUE(probe.exists("taken-back"));
  lock.unlock();
  EXPECT_TRUE(eventually([&] { return !probe.exists("taken-back"); }));
}

// A bounded wait whose attempt and settling both go unanswered answers by
// wait + command_timeout; what the attempt took is taken back once the server
// answers again, and nothing else is left behind.
TEST_P(RecoveryTakeBack, TryLockForAnswersByItsBoundAndWhatItTookIsTakenBack) {
  const Kind& kind = GetParam();
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.command_timeout = 400ms;
  Client client{config};
  Lock lock = kind.get(client, "bounded");
  lock.lock();  // connection up, script loaded
  lock.unlock();
  ASSERT_TRUE(keys_left(probe).empty());

  // Scripts wait on the server (as behind a long one); reads still answer.
  probe.command({"CLIENT", "PAUSE", "5000", "WRITE"});
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(lock.try_lock_for(100ms), Error);
  auto took = elapsed_ms(start);
  // The bound is wait + command_timeout = 500 ms; allow for scheduling.
  EXPECT_LE(took, 500 + 150) << "try_lock_for(100ms) took " << took << " ms";
  probe.command({"CLIENT", "UNPAUSE"});

  // The attempt runs now, and its take-back after it.
  EXPECT_TRUE(eventually([&] { return keys_left(probe).empty(); }));
  EXPECT_EQ(lock.hold_count(), 0);
  // The owner locks again at once.
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

// BUSY (a long script runs) means the acquire did not run: it is sent again
// until the server is free, within the caller's wait, and is neither a server
// error nor an unknown outcome.
TEST(Recovery, BusyServerIsWaitedOutWithinTheWait) {
  RedisServer server({"--busy-reply-threshold", "50"});
  Config config = fast_config(server);
  std::mutex mutex;
  int refusals = 0;
  Event refused_twice;
  config.logger = [&](log_level, std::string_view message) {
    if (message.find("did not run") == std::string_view::npos || message.find("BUSY") == std::string_view::npos) {
      return;
    }
    std::lock_guard<std::mutex> guard(mutex);
    if (++refusals == 2) refused_twice.set();
  };
  Client client{config};
  Lock lock = client.get_lock("busy");
  RedisProbe probe(server);

  std::thread busy([&] {
    RedisProbe runner(server);
    try {
      runner.command({"EVAL", "while true do end", "0"});
    } catch (const std::exception&) {
      // Killed, or the probe's own I/O timeout: either way it has stopped.
    }
  });
  struct joiner {
    std::thread& thread;
    ~joiner() { thread.join(); }
  } join_busy{busy};
  ASSERT_TRUE(eventually([&] {
    auto reply = probe.command({"PING"});
    return reply.is_error() && reply.str.rfind("BUSY", 0) == 0;
  }));
  auto result = std::async(std::launch::async, [&] {
    bool acquired = lock.try_lock_for(5s);
    int count = lock.hold_count();
    if (acquired) lock.unlock();
    return std::make_pair(acquired, count);
  });
  ASSERT_TRUE(refused_twice.wait_for(5s));  // sent again after a refusal
  probe.command({"SCRIPT", "KILL"});
  auto [acquired, count] = result.get();
  EXPECT_TRUE(acquired);
  EXPECT_EQ(count, 1);
}

// The server side of settling: an attempt settled as "not taken" cannot take
// effect when it arrives late (on a connection that dropped), and a settle
// that finds the attempt applied takes back only that one hold.
TEST(Recovery, ASettledAttemptNeverTakesEffectLate) {
  RedisServer server;
  RedisProbe probe(server);
  const std::string owner = "client-x:7";
  const std::string mark = "warden_acquire_cancel:{late}:a1";
  // Settle attempt a1 (expected count 1) before it ran: it had not taken effect.
  auto settled =
      probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "late", "redisson_lock__channel:{late}",
                     mark, "30000", owner, "publish", "0", "1", "0", "60000"});
  ASSERT_FALSE(settled.is_error()) << settled.str;
  EXPECT_EQ(settled.integer, 0);
  // Now the attempt arrives.
  auto late = probe.command({"EVAL", detail::scripts::lock_acquire.body, "2", "late", mark, "30000", owner});
  EXPECT_TRUE(late.is_error());
  EXPECT_FALSE(probe.exists("late"));

  // Attempt a2 took effect as a re-entry (count 2): taking it back leaves the first hold.
  const std::string mark2 = "warden_acquire_cancel:{late}:a2";
  probe.command({"HSET", "late", owner, "2"});
  probe.command({"PEXPIRE", "late", "30000"});
  auto taken_back =
      probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "late", "redisson_lock__channel:{late}",
                     mark2, "30000", owner, "publish", "0", "2", "0", "60000"});
  EXPECT_EQ(taken_back.integer, 1);
  EXPECT_EQ(probe.hgetall("late").at(owner), "1");
  // Sent again (its reply was lost): nothing more is taken.
  auto again =
      probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "late", "redisson_lock__channel:{late}",
                     mark2, "30000", owner, "publish", "0", "2", "0", "60000"});
  EXPECT_EQ(again.integer, 0);
  EXPECT_EQ(probe.hgetall("late").at(owner), "1");
}

// A kept settle gives the hold the attempt's whole lease again: the client
// counts it valid from the attempt's send time plus the lease, and the key's
// expiry as it stood can be older (the attempt re-entered the count of a hold
// reported lost while its key lived on; model/lock.pml: NegativeStaleKeep).
// Every kind whose settle keeps: the key (and a read hold's own key) must
// outlive the client's valid_until.
TEST(Recovery, AKeptSettleSetsTheWholeLeaseAgain) {
  RedisServer server;
  RedisProbe probe(server);
  const std::string owner = "client-x:7";
  const std::string lease = "30000";
  auto expect_lease = [&](const std::string& key) {
    SCOPED_TRACE(key);
    auto ttl = probe.pttl(key);
    EXPECT_GT(ttl, 29'000);
    EXPECT_LE(ttl, 30'000);
  };
  auto expect_kept = [](const ProbeReply& reply) {
    ASSERT_FALSE(reply.is_error()) << reply.str;
    if (reply.elements.empty()) {
      EXPECT_EQ(reply.integer, 1);
    } else {
      ASSERT_EQ(reply.elements.size(), 2u);  // FencedLock: {1, token}
      EXPECT_EQ(reply.elements[0].integer, 1);
    }
  };
  // The hold the attempt made, with an expiry about to run out.
  auto stale_hold = [&](const std::string& key, const std::string& field) {
    probe.command({"HSET", key, field, "1"});
    probe.command({"PEXPIRE", key, "300"});
  };

  stale_hold("plain", owner);
  expect_kept(
      probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "plain", "redisson_lock__channel:{plain}",
                     "warden_acquire_cancel:{plain}:a", lease, owner, "publish", "0", "1", "1", "60000"}));
  expect_lease("plain");

  stale_hold("fair", owner);
  expect_kept(probe.command({"EVAL", detail::scripts::fair_resolve_acquire.body, "4", "fair",
                             "redisson_lock__channel:{fair}", "redisson_lock_queue:{fair}",
                             "warden_acquire_cancel:{fair}:a", lease, owner, "publish", "0", "1", "1", "60000"}));
  expect_lease("fair");

  stale_hold("fenced", owner);
  expect_kept(probe.command({"EVAL", detail::scripts::fenced_resolve_acquire.body, "4", "fenced",
                             "redisson_lock__channel:{fenced}", "redisson_lock_token:{fenced}",
                             "warden_acquire_cancel:{fenced}:a", lease, owner, "publish", "0", "1", "1", "60000"}));
  expect_lease("fenced");

  stale_hold("writes", owner + ":write");
  probe.command({"HSET", "writes", "mode", "write"});
  expect_kept(probe.command({"EVAL", detail::scripts::rwlock_write_resolve.body, "3", "writes",
                             "redisson_rwlock:{writes}", "warden_acquire_cancel:{writes}:a", lease, owner + ":write",
                             "publish", "1", "1", "{writes}", "1", "60000"}));
  expect_lease("writes");

  const std::string hold_key = "{reads}:" + owner + ":rwlock_timeout";
  stale_hold("reads", owner);
  probe.command({"HSET", "reads", "mode", "read"});
  probe.command({"SET", hold_key + ":1", "1", "PX", "300"});
  expect_kept(probe.command({"EVAL", detail::scripts::rwlock_read_resolve.body, "4", "reads", "redisson_rwlock:{reads}",
                             hold_key, "warden_acquire_cancel:{reads}:a", lease, owner, "publish", "0", "1", "{reads}",
                             "1", "60000"}));
  expect_lease("reads");
  expect_lease(hold_key + ":1");
}

INSTANTIATE_TEST_SUITE_P(Kinds, RecoveryTakeBack, ::testing::ValuesIn(kinds),
                         [](const ::testing::TestParamInfo<Kind>& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace warden::test
