// Recovery from lost replies and refusals never breaks exclusion: a take-back
// undoes only its own attempt, a "did not run" refusal is waited out, and a
// bounded wait answers by its bound even when every reply is lost.
#include <gtest/gtest.h>

#include <future>
#include <stdexcept>
#include <string>
#include <string_view>

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

// Every key but the unlock latches and the attempts' marks, which releases
// and settles leave for a while on purpose (each with a TTL: a latch or mark
// that would never go counts as left).
std::vector<std::string> keys_left(RedisProbe& probe) {
  std::vector<std::string> out;
  for (auto& key : probe.keys()) {
    bool short_lived = key.rfind("redisson_unlock_latch:", 0) == 0 || key.rfind("warden_acquire_cancel:", 0) == 0;
    if (!short_lived || probe.pttl(key) < 0) out.push_back(key);
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
  // Sent again (its reply was lost): nothing more is taken, and it answers
  // as the first copy did (the attempt's mark says it was taken back).
  auto again =
      probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "late", "redisson_lock__channel:{late}",
                     mark2, "30000", owner, "publish", "0", "2", "0", "60000"});
  EXPECT_EQ(again.integer, 1);
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

// One lock kind's scripts, run by EVAL: two runs of one command with the same
// latch or mark stand for a command re-sent after a time-out and its first
// copy, left in the socket buffer of a dropped connection, which the server
// still runs when it reads it (model/lock.pml: NegativeLateRelease,
// NegativeLateTakeBack). The lock's key is the kind's label.
struct ScriptKind {
  const char* label;
  const char* field_suffix;  // the owner's field: owner + this (":write" for a write hold)
  bool exclusive;            // another owner's acquire is refused while the owner holds it
  // Acquire attempt `attempt` of `owner` with `lease` (ms); true when it took the lock.
  bool (*acquire)(RedisProbe&, const std::string& owner, const std::string& attempt, const std::string& lease);
  ProbeReply (*release)(RedisProbe&, const std::string& owner, const std::string& latch);
  // Settles attempt `attempt`, which would have made the count `expected`.
  ProbeReply (*settle)(RedisProbe&, const std::string& owner, const std::string& attempt, const std::string& expected,
                       bool keep);
};

std::string cancel_mark(const char* name, const std::string& attempt) {
  return std::string("warden_acquire_cancel:{") + name + "}:" + attempt;
}

std::string unlock_latch(const char* name, const std::string& request) {
  return std::string("redisson_unlock_latch:{") + name + "}:" + request;
}

const ScriptKind script_kinds[] = {
    {"lock", "", true,
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& lease) {
       return probe
           .command(
               {"EVAL", detail::scripts::lock_acquire.body, "2", "lock", cancel_mark("lock", attempt), lease, owner})
           .is_nil();
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& latch) {
       return probe.command({"EVAL", detail::scripts::lock_release.body, "3", "lock", "redisson_lock__channel:{lock}",
                             latch, "30000", owner, "publish", "0", "60000"});
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& expected,
        bool keep) {
       return probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "lock",
                             "redisson_lock__channel:{lock}", cancel_mark("lock", attempt), "30000", owner, "publish",
                             "0", expected, keep ? "1" : "0", "60000"});
     }},
    // SpinLock: the lock's scripts, publishing nothing.
    {"spin", "", true,
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& lease) {
       return probe
           .command(
               {"EVAL", detail::scripts::lock_acquire.body, "2", "spin", cancel_mark("spin", attempt), lease, owner})
           .is_nil();
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& latch) {
       return probe.command({"EVAL", detail::scripts::lock_release.body, "3", "spin", "redisson_lock__channel:{spin}",
                             latch, "30000", owner, "publish", "", "60000"});
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& expected,
        bool keep) {
       return probe.command({"EVAL", detail::scripts::lock_resolve_acquire.body, "3", "spin",
                             "redisson_lock__channel:{spin}", cancel_mark("spin", attempt), "30000", owner, "publish",
                             "", expected, keep ? "1" : "0", "60000"});
     }},
    // FencedLock: its own acquire and settle, the lock's release.
    {"fenced", "", true,
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& lease) {
       auto reply = probe.command({"EVAL", detail::scripts::fenced_acquire.body, "3", "fenced",
                                   "redisson_lock_token:{fenced}", cancel_mark("fenced", attempt), lease, owner});
       return reply.elements.size() == 2 && reply.elements[0].integer == -1;
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& latch) {
       return probe.command({"EVAL", detail::scripts::lock_release.body, "3", "fenced",
                             "redisson_lock__channel:{fenced}", latch, "30000", owner, "publish", "0", "60000"});
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& expected,
        bool keep) {
       return probe.command({"EVAL", detail::scripts::fenced_resolve_acquire.body, "4", "fenced",
                             "redisson_lock__channel:{fenced}", "redisson_lock_token:{fenced}",
                             cancel_mark("fenced", attempt), "30000", owner, "publish", "0", expected, keep ? "1" : "0",
                             "60000"});
     }},
    {"fair", "", true,
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& lease) {
       return probe
           .command({"EVAL", detail::scripts::fair_acquire.body, "5", "fair", "redisson_lock__channel:{fair}",
                     "redisson_lock_queue:{fair}", "redisson_lock_timeout:{fair}", cancel_mark("fair", attempt), lease,
                     owner, "publish", "0", "5000", "0", "1"})
           .is_nil();
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& latch) {
       return probe.command({"EVAL", detail::scripts::fair_release.body, "5", "fair", "redisson_lock__channel:{fair}",
                             "redisson_lock_queue:{fair}", "redisson_lock_timeout:{fair}", latch, "30000", owner,
                             "publish", "0", "60000"});
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& expected,
        bool keep) {
       return probe.command({"EVAL", detail::scripts::fair_resolve_acquire.body, "4", "fair",
                             "redisson_lock__channel:{fair}", "redisson_lock_queue:{fair}",
                             cancel_mark("fair", attempt), "30000", owner, "publish", "0", expected, keep ? "1" : "0",
                             "60000"});
     }},
    {"read", "", false,
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& lease) {
       return probe
           .command({"EVAL", detail::scripts::rwlock_read_acquire.body, "3", "read",
                     "{read}:" + owner + ":rwlock_timeout", cancel_mark("read", attempt), lease, owner,
                     owner + ":write"})
           .is_nil();
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& latch) {
       return probe.command({"EVAL", detail::scripts::rwlock_read_release.body, "4", "read", "redisson_rwlock:{read}",
                             "{read}:" + owner + ":rwlock_timeout", latch, "", owner, "publish", "0", "60000",
                             "{read}"});
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& expected,
        bool keep) {
       return probe.command({"EVAL", detail::scripts::rwlock_read_resolve.body, "4", "read", "redisson_rwlock:{read}",
                             "{read}:" + owner + ":rwlock_timeout", cancel_mark("read", attempt), "30000", owner,
                             "publish", "0", expected, "{read}", keep ? "1" : "0", "60000"});
     }},
    {"write", ":write", true,
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& lease) {
       return probe
           .command({"EVAL", detail::scripts::rwlock_write_acquire.body, "2", "write", cancel_mark("write", attempt),
                     lease, owner + ":write", owner})
           .is_nil();
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& latch) {
       return probe.command({"EVAL", detail::scripts::rwlock_write_release.body, "3", "write",
                             "redisson_rwlock:{write}", latch, "30000", owner + ":write", "publish", "1", "60000",
                             "{write}"});
     },
     [](RedisProbe& probe, const std::string& owner, const std::string& attempt, const std::string& expected,
        bool keep) {
       return probe.command({"EVAL", detail::scripts::rwlock_write_resolve.body, "3", "write",
                             "redisson_rwlock:{write}", cancel_mark("write", attempt), "30000", owner + ":write",
                             "publish", "1", expected, "{write}", keep ? "1" : "0", "60000"});
     }},
};

class RecoveryLateCopy : public ::testing::TestWithParam<ScriptKind> {
 protected:
  // The owner holds the lock with one level, and nobody else can take it.
  void expect_held_once(RedisProbe& probe, const std::string& owner) {
    const ScriptKind& kind = GetParam();
    auto fields = probe.hgetall(kind.label);
    auto field = fields.find(owner + kind.field_suffix);
    ASSERT_NE(field, fields.end()) << "the owner's next hold is gone";
    EXPECT_EQ(field->second, "1");
    EXPECT_GT(probe.pttl(kind.label), 20'000);
    if (kind.exclusive) {
      EXPECT_FALSE(kind.acquire(probe, "client-y:9", "rival", "30000")) << "two holders";
    }
  }
};

// A release re-sent after a time-out answers "not held" (the hold's lease ran
// out meanwhile); the owner takes the lock again; then the release's first
// copy runs. It must answer as its re-send did and leave the new hold alone:
// the release scripts latch "not held" too.
TEST_P(RecoveryLateCopy, AReleaseRunLateLeavesTheOwnersNextHold) {
  const ScriptKind& kind = GetParam();
  RedisServer server;
  RedisProbe probe(server);
  const std::string owner = "client-x:7";
  ASSERT_TRUE(kind.acquire(probe, owner, "a1", "100"));
  ASSERT_TRUE(eventually([&] { return !probe.exists(kind.label); }));  // the lease ran out

  const std::string latch = unlock_latch(kind.label, "r1");
  auto resent = kind.release(probe, owner, latch);
  ASSERT_FALSE(resent.is_error()) << resent.str;
  EXPECT_TRUE(resent.is_nil());

  ASSERT_TRUE(kind.acquire(probe, owner, "a2", "30000"));
  auto late = kind.release(probe, owner, latch);
  ASSERT_FALSE(late.is_error()) << late.str;
  EXPECT_TRUE(late.is_nil());
  expect_held_once(probe, owner);
}

// A settle re-sent after a time-out runs first; the owner takes the lock
// again, which brings its count back to what the settle expects; then the
// settle's first copy runs. It must answer as its re-send did and leave the
// new hold alone: the resolve scripts read the attempt's mark first, and a
// take-back marks it. Both answers: the attempt taken back, and not taken.
TEST_P(RecoveryLateCopy, ATakeBackRunLateLeavesTheOwnersNextHold) {
  const ScriptKind& kind = GetParam();
  RedisServer server;
  RedisProbe probe(server);
  const std::string owner = "client-x:7";

  // Attempt a1 took the lock; its answer was lost, and the caller has gone.
  ASSERT_TRUE(kind.acquire(probe, owner, "a1", "30000"));
  auto resent = kind.settle(probe, owner, "a1", "1", false);
  ASSERT_FALSE(resent.is_error()) << resent.str;
  EXPECT_EQ(resent.integer, 1);
  EXPECT_FALSE(probe.exists(kind.label));
  ASSERT_TRUE(kind.acquire(probe, owner, "a2", "30000"));
  auto late = kind.settle(probe, owner, "a1", "1", false);
  ASSERT_FALSE(late.is_error()) << late.str;
  EXPECT_EQ(late.integer, 1);
  expect_held_once(probe, owner);
  auto released = kind.release(probe, owner, unlock_latch(kind.label, "r2"));
  ASSERT_EQ(released.integer, 1) << released.str;

  // Attempt a3 is settled before it ran: not taken, and it never will be.
  resent = kind.settle(probe, owner, "a3", "1", false);
  ASSERT_FALSE(resent.is_error()) << resent.str;
  EXPECT_EQ(resent.integer, 0);
  EXPECT_FALSE(kind.acquire(probe, owner, "a3", "30000"));
  ASSERT_TRUE(kind.acquire(probe, owner, "a4", "30000"));
  late = kind.settle(probe, owner, "a3", "1", false);
  ASSERT_FALSE(late.is_error()) << late.str;
  EXPECT_EQ(late.integer, 0);
  expect_held_once(probe, owner);
}

INSTANTIATE_TEST_SUITE_P(Kinds, RecoveryLateCopy, ::testing::ValuesIn(script_kinds),
                         [](const ::testing::TestParamInfo<ScriptKind>& info) {
                           return std::string(info.param.label);
                         });

// The owner's hold on a lock kind's key, as the scripts above name it.
const ScriptKind& script_kind(const std::string& label) {
  for (auto& kind : script_kinds) {
    if (label == kind.label) return kind;
  }
  throw std::logic_error("no script kind " + label);
}

class RecoveryGiveUp : public ::testing::TestWithParam<Kind> {};

// A take-back that no server answers by its deadline (max(command_timeout,
// lease)) gives up; the attempt must then be marked "not taken" before the
// owner's next acquire goes, so that a copy of the take-back left in a
// dropped connection, run after that acquire, finds the mark and leaves the
// new hold (model/lock.pml: NegativeTakeBackGiveUp). The server stops
// (SIGSTOP) while the attempt and its settling are in flight and dies there,
// so that none of their copies runs; the late copy is then run by hand.
TEST_P(RecoveryGiveUp, ATakeBackThatGaveUpMarksTheAttemptBeforeTheOwnersNextAcquire) {
  const Kind& kind = GetParam();
  const std::string name = kind.label;
  const ScriptKind& script = script_kind(name);
  RedisServer server;
  Config config = fast_config(server);
  config.command_timeout = 200ms;
  // The mark lives max(lease, command_timeout * (retry_attempts + 2)): 4.4 s,
  // long enough to be read after the owner's next acquire.
  config.retry_attempts = 20;
  Event gave_up;
  config.logger = [&gave_up](log_level, std::string_view line) {
    if (line.find("could not take back") != std::string_view::npos) gave_up.set();
  };
  Client client{config};
  Lock lock = kind.get(client, name);
  lock.lock();  // connection up, scripts loaded
  lock.unlock();

  server.pause();
  EXPECT_THROW(lock.try_lock(lock_options().with_lease(200ms)), Error);
  // The take-back gives up a lease after it was sent; the server then dies
  // with every copy it had not run, and comes back empty.
  ASSERT_TRUE(gave_up.wait_for(5s));
  server.kill();
  server.start();
  RedisProbe probe(server);

  // The owner's next acquire; until the client has reconnected it may fail
  // on the connection, and a caller tries again.
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
  const std::string prefix = "warden_acquire_cancel:{" + name + "}:";
  auto marks = probe.keys(prefix + "*");
  ASSERT_EQ(marks.size(), 1u) << "the attempt whose take-back gave up has no mark";
  EXPECT_EQ(probe.command({"GET", marks[0]}).str, "1");  // "not taken", as settle_record reads it
  EXPECT_GT(probe.pttl(marks[0]), 0);

  // The owner's field in the hold (a write hold's ends in ":write").
  std::string owner;
  for (auto& field : probe.hgetall(name)) {
    if (field.first != "mode") owner = field.first;
  }
  std::string suffix = script.field_suffix;
  ASSERT_FALSE(owner.empty());
  owner = owner.substr(0, owner.size() - suffix.size());

  // The take-back's late copy: it answers "not taken" and changes nothing.
  auto late = script.settle(probe, owner, marks[0].substr(prefix.size()), "1", false);
  ASSERT_FALSE(late.is_error()) << late.str;
  EXPECT_EQ(late.integer, 0);
  EXPECT_EQ(probe.hgetall(name).at(owner + suffix), "1") << "the late take-back took the owner's next hold";
  EXPECT_TRUE(lock.is_held());
  if (script.exclusive) {
    Client rival_client{fast_config(server)};
    Lock rival = kind.get(rival_client, name);
    EXPECT_FALSE(rival.try_lock()) << "two holders: the late take-back freed the owner's next hold";
  }
  lock.unlock();
}

INSTANTIATE_TEST_SUITE_P(Kinds, RecoveryGiveUp, ::testing::ValuesIn(kinds),
                         [](const ::testing::TestParamInfo<Kind>& info) { return std::string(info.param.label); });

// The synchronizers' permits, under the same late copies: a Semaphore's
// release leaves its latch on every answer, its settle and a PES settle move
// the attempt's mark from "taken" to "returned" once, and a PES permit is
// released by its id, which no later acquire reuses. No copy run late gives a
// permit back twice.
TEST(Recovery, ASynchronizerCommandRunLateGivesNoPermitBackTwice) {
  RedisServer server;
  RedisProbe probe(server);
  auto count = [&](const char* key) { return probe.command({"GET", key}).str; };

  auto sem_release = [&](const std::string& latch) {
    return probe.command({"EVAL", detail::scripts::semaphore_release.body, "3", "sem", "redisson_sc:{sem}", latch, "",
                          "", "publish", "", "2", "60000"});
  };
  auto sem_acquire = [&](const std::string& attempt) {
    return probe.command({"EVAL", detail::scripts::semaphore_acquire.body, "2", "sem", cancel_mark("sem", attempt), "",
                          "", "1", "60000"});
  };
  auto sem_settle = [&](const std::string& attempt) {
    return probe.command({"EVAL", detail::scripts::semaphore_settle.body, "3", "sem", "redisson_sc:{sem}",
                          cancel_mark("sem", attempt), "", "", "publish", "", "1", "0", "60000"});
  };
  // A release of 2, re-sent; others take what it gave; its first copy runs.
  const std::string latch = "warden_release_latch:{sem}:r1";
  EXPECT_EQ(sem_release(latch).integer, 2);
  EXPECT_EQ(sem_acquire("a1").integer, 1);
  EXPECT_EQ(sem_acquire("a2").integer, 1);
  EXPECT_EQ(sem_release(latch).integer, 2);
  EXPECT_EQ(count("sem"), "0");
  // An attempt given back by its settle; another takes the permit; the
  // settle's first copy runs.
  EXPECT_EQ(sem_settle("a1").integer, 1);
  EXPECT_EQ(count("sem"), "1");
  EXPECT_EQ(sem_acquire("a3").integer, 1);
  EXPECT_EQ(sem_settle("a1").integer, 1);
  EXPECT_EQ(count("sem"), "0");

  auto pes_acquire = [&](const std::string& attempt, const std::string& id) {
    return probe.command({"EVAL", detail::scripts::pes_acquire.body, "4", "pes", "redisson_sc:{pes}", "{pes}:timeout",
                          cancel_mark("pes", attempt), "30000", "", "publish", "", id, "60000"});
  };
  auto pes_release = [&](const std::string& id) {
    return probe.command({"EVAL", detail::scripts::pes_release.body, "3", "pes", "redisson_sc:{pes}", "{pes}:timeout",
                          "", "", "publish", "", id});
  };
  auto pes_settle = [&](const std::string& attempt, const std::string& id) {
    return probe.command({"EVAL", detail::scripts::pes_settle.body, "4", "pes", "redisson_sc:{pes}", "{pes}:timeout",
                          cancel_mark("pes", attempt), "", "", "publish", "", id, "0", "60000"});
  };
  const std::string p1(32, '1'), p2(32, '2'), p3(32, '3');
  probe.command({"SET", "pes", "1"});
  // A release by id runs twice, the permit taken again in between under a new id.
  EXPECT_EQ(pes_acquire("b1", p1).integer, -1);
  EXPECT_EQ(pes_release(p1).integer, 1);
  EXPECT_EQ(pes_acquire("b2", p2).integer, -1);
  EXPECT_EQ(pes_release(p1).integer, 0);
  EXPECT_EQ(count("pes"), "0");
  EXPECT_FALSE(probe.command({"ZSCORE", "{pes}:timeout", p2}).is_nil());  // the new permit is held
  // A settle's give-back runs twice, the permit taken again in between.
  EXPECT_EQ(pes_settle("b2", p2).integer, 1);
  EXPECT_EQ(count("pes"), "1");
  EXPECT_EQ(pes_acquire("b3", p3).integer, -1);
  EXPECT_EQ(pes_settle("b2", p2).integer, 1);
  EXPECT_EQ(count("pes"), "0");
}

INSTANTIATE_TEST_SUITE_P(Kinds, RecoveryTakeBack, ::testing::ValuesIn(kinds),
                         [](const ::testing::TestParamInfo<Kind>& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace warden::test
