// FencedLock: a token drawn from redisson_lock_token:{NAME} on every acquire,
// Redisson's layout shared with Redisson-format holders, leases, no-wait
// tries, async forms, a lost reply, and keys that are not a fenced lock's.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "child_process.hpp"
#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "refusal.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::string token_key(const std::string& name) { return "redisson_lock_token:{" + name + "}"; }
std::string channel(const std::string& name) { return "redisson_lock__channel:{" + name + "}"; }
std::string owner_of(const Client& client, thread_id thread) { return client.id() + ":" + std::to_string(thread); }

class FencedLockTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string> snapshot() { return test::snapshot(probe); }

  // `call` fails with `code`, names the lock, and leaves Redis as it was.
  template <class Call>
  void expect_error(errc code, const std::string& lock_name, Call call) {
    expect_refusal(probe, code, lock_name, call);
  }

  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(FencedLockTest, EveryAcquireDrawsTheNextTokenInRedissonsLayout) {
  const std::string name = "fenced:orders";
  FencedLock lock = client.get_fenced_lock(name);
  const std::string me = owner_of(client, current_thread_id());
  MessageRecorder recorder(server, {channel(name)});

  EXPECT_EQ(lock.token(), 0) << "no counter yet";
  EXPECT_EQ(lock.lock_and_get_token(), 1);
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "1"}}));
  EXPECT_GT(probe.pttl(name), 29'000);
  EXPECT_EQ(probe.get(token_key(name)), "1");
  EXPECT_EQ(probe.pttl(token_key(name)), -1) << "the counter has no expiry";

  // Re-entry draws a token too, and so does every form of Lock's acquire.
  EXPECT_EQ(lock.lock_and_get_token(), 2);
  EXPECT_TRUE(lock.try_lock());
  EXPECT_EQ(lock.try_lock_and_get_token(lock_options().with_wait(0ms)), std::optional<std::int64_t>{4});
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "4"}}));
  EXPECT_EQ(lock.token(), 4);
  EXPECT_EQ(lock.hold_count(), 4);

  for (int i = 0; i < 4; ++i) lock.unlock();
  EXPECT_FALSE(probe.exists(name));
  EXPECT_EQ(probe.get(token_key(name)), "4") << "warden never deletes the counter";
  EXPECT_EQ(probe.pttl(token_key(name)), -1);
  EXPECT_EQ(lock.token(), 4);
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u) << "the final release publishes, as a Lock's";
  EXPECT_EQ(messages[0].payload, "0");

  // force_unlock deletes the hold and leaves the counter.
  EXPECT_EQ(lock.lock_and_get_token(), 5);
  EXPECT_TRUE(lock.force_unlock());
  EXPECT_FALSE(probe.exists(name));
  EXPECT_EQ(probe.get(token_key(name)), "5");
}

TEST_F(FencedLockTest, AFailedAttemptDrawsNoTokenAndATryWithoutWaitDoesNotWait) {
  const std::string name = "fenced:busy";
  FencedLock lock = client.get_fenced_lock(name);
  Client other{fast_config(server)};
  FencedLock theirs = other.get_fenced_lock(name);
  ASSERT_EQ(lock.lock_and_get_token(), 1);

  auto start = std::chrono::steady_clock::now();
  std::optional<std::int64_t> none;
  std::thread([&] { none = theirs.try_lock_and_get_token(lock_options().with_wait(0ms)); }).join();
  EXPECT_FALSE(none.has_value());
  EXPECT_LT(elapsed_ms(start), 500);
  EXPECT_EQ(probe.get(token_key(name)), "1");

  // A bounded wait gets the next token once the holder lets go.
  auto waiting = theirs.try_lock_and_get_token_async(77, lock_options().with_wait(5s));
  std::this_thread::sleep_for(100ms);
  lock.unlock();
  EXPECT_EQ(waiting.get(), std::optional<std::int64_t>{2});
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{owner_of(other, 77), "1"}}));
  theirs.unlock_async(77).get();

  // A bounded wait that runs out draws nothing.
  ASSERT_EQ(lock.lock_and_get_token(), 3);
  EXPECT_EQ(theirs.try_lock_and_get_token_async(78, lock_options().with_wait(150ms)).get(), std::nullopt);
  EXPECT_EQ(probe.get(token_key(name)), "3");
  lock.unlock();
}

TEST_F(FencedLockTest, TheLeaseIsHonoured) {
  const std::string name = "fenced:lease";
  FencedLock lock = client.get_fenced_lock(name);
  EXPECT_EQ(lock.lock_and_get_token(lock_options().with_lease(400ms)), 1);
  auto ttl = probe.pttl(name);
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 400);
  EXPECT_TRUE(eventually([&] { return !probe.exists(name); }, 2s)) << "a fixed lease is not renewed";
  EXPECT_EQ(lock.try_lock_and_get_token(lock_options().with_wait(1s).with_lease(300ms)),
            std::optional<std::int64_t>{2});
  EXPECT_LE(probe.pttl(name), 300);
  lock.unlock();
}

TEST_F(FencedLockTest, RedissonHoldersAndTheirTokensAreShared) {
  const std::string name = "fenced:shared";
  FencedLock lock = client.get_fenced_lock(name);
  // A Redisson RFencedLock holder: its hold and the counter it drew, 41.
  const std::string java = "6f1c7a52-5b7e-4c0a-9d55-3c2f0e6f4a11:1";
  probe.command({"HSET", name, java, "1"});
  probe.command({"PEXPIRE", name, "30000"});
  probe.command({"SET", token_key(name), "41"});

  EXPECT_EQ(lock.try_lock_and_get_token(lock_options().with_wait(100ms)), std::nullopt);
  auto waiting = lock.lock_and_get_token_async(5);
  // Redisson releases: deletes its hold and publishes "0" on the lock's channel.
  std::this_thread::sleep_for(100ms);
  probe.command({"DEL", name});
  probe.command({"PUBLISH", channel(name), "0"});
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready) << "not woken by Redisson's unlock message";
  EXPECT_EQ(waiting.get(), 42);
  lock.unlock_async(5).get();

  // Redisson acquires and releases again (INCR, as its script does): the next
  // warden token is above it.
  probe.command({"INCR", token_key(name)});
  EXPECT_EQ(lock.lock_and_get_token(), 44);
  lock.unlock();
}

TEST_F(FencedLockTest, AsyncFormsDeliverTheToken) {
  const std::string name = "fenced:async";
  FencedLock lock = client.get_fenced_lock(name);
  EXPECT_EQ(lock.lock_and_get_token_async(1).get(), 1);
  lock.unlock_async(1).get();
  EXPECT_EQ(lock.lock_and_get_token_async(1, lock_options().with_lease(5s)).get(), 2);
  EXPECT_LE(probe.pttl(name), 5000);
  lock.unlock_async(1).get();
  cancel_source never;
  EXPECT_EQ(lock.lock_and_get_token_async(1, lock_options().with_cancel(never.token())).get(), 3);
  lock.unlock_async(1).get();

  Event done;
  std::int64_t got = 0;
  std::error_code failure;
  lock.lock_and_get_token_async(2, {}, [&](std::error_code error, std::int64_t token) {
    failure = error;
    got = token;
    done.set();
  });
  ASSERT_TRUE(done.wait_for(2s));
  EXPECT_FALSE(failure);
  EXPECT_EQ(got, 4);

  // Taken by owner 2: owner 3's try reports no token.
  Event tried;
  std::optional<std::int64_t> maybe{-7};
  lock.try_lock_and_get_token_async(3, lock_options().with_wait(0ms),
                                    [&](std::error_code error, std::optional<std::int64_t> token) {
                                      failure = error;
                                      maybe = token;
                                      tried.set();
                                    });
  ASSERT_TRUE(tried.wait_for(2s));
  EXPECT_FALSE(failure);
  EXPECT_EQ(maybe, std::nullopt);
  lock.unlock_async(2).get();

  Event read;
  lock.token_async([&](std::error_code error, std::int64_t token) {
    failure = error;
    got = token;
    read.set();
  });
  ASSERT_TRUE(read.wait_for(2s));
  EXPECT_EQ(got, 4);
  EXPECT_EQ(lock.token_async().get(), 4);

  // An AcquireFuture nobody collects gives its hold back.
  { auto dropped = lock.lock_and_get_token_async(9); }
  EXPECT_TRUE(eventually([&] { return probe.get(token_key(name)) == "5" && !probe.exists(name); }));
}

TEST_F(FencedLockTest, AnAcquireWhoseReplyWasLostReturnsTheTokenOfTheHoldItKept) {
  const std::string name = "fenced:lost-reply";
  Config config = fast_config(server);
  config.command_timeout = 300ms;
  Client slow{config};
  FencedLock lock = slow.get_fenced_lock(name);
  ASSERT_EQ(lock.lock_and_get_token(), 1);
  lock.unlock();

  server.pause();
  auto acquired = lock.try_lock_and_get_token_async(7, lock_options().with_wait(5s));
  // Past the command's deadline: its outcome is unknown, and it is settled
  // once the server answers again.
  std::this_thread::sleep_for(600ms);
  server.resume();
  auto token = acquired.get();
  ASSERT_TRUE(token.has_value());
  // Whichever way it was settled (the attempt ran first and was kept with a
  // fresh token, or it was cancelled and tried again), the hold is one and
  // its token is the counter's latest.
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{owner_of(slow, 7), "1"}}));
  EXPECT_EQ(probe.get(token_key(name)), std::to_string(*token));
  EXPECT_GE(*token, 2);
  lock.unlock_async(7).get();
}

TEST_F(FencedLockTest, ACounterThatIsNotATokenCounterIsRefusedAndNothingChanges) {
  const std::string name = "fenced:hostile";
  FencedLock lock = client.get_fenced_lock(name);
  const std::string key = token_key(name);
  for (auto& setup : std::vector<std::vector<std::string>>{{"SET", key, "abc"},
                                                           {"SET", key, "-5"},
                                                           {"SET", key, "12 "},
                                                           {"RPUSH", key, "1"},
                                                           {"HSET", key, "n", "1"},
                                                           {"ZADD", key, "1", "x"}}) {
    SCOPED_TRACE(setup[0] + " " + setup.back());
    probe.command({"DEL", key});
    probe.command(setup);
    expect_error(errc::wrong_type, name, [&] { lock.lock_and_get_token(); });
    expect_error(errc::wrong_type, name, [&] { lock.lock(); });
    expect_error(errc::wrong_type, name, [&] { lock.try_lock_and_get_token(lock_options().with_wait(0ms)); });
    expect_error(errc::wrong_type, name, [&] { lock.token(); });
  }
  probe.command({"DEL", key});

  // The lock's own key must be a lock's hash, as for Lock.
  probe.command({"SET", name, "not a lock"});
  expect_error(errc::wrong_type, name, [&] { lock.lock_and_get_token(); });
  EXPECT_FALSE(probe.exists(key));
  probe.command({"DEL", name});

  // Bad arguments: nothing is sent.
  expect_error(errc::invalid_argument, name, [&] { lock.lock_and_get_token(lock_options().with_lease(0ms)); });
  expect_error(errc::invalid_argument, name, [&] { lock.try_lock_and_get_token(lock_options().with_wait(-1ms)); });
  expect_error(errc::invalid_argument, name,
               [&] { lock.try_lock_and_get_token(lock_options().with_wait(1s).with_lease(-1s)); });
  expect_error(errc::invalid_argument, name, [&] { lock.lock_and_get_token_async(0).get(); });
  expect_error(errc::invalid_argument, "''", [&] { client.get_fenced_lock(""); });
  EXPECT_TRUE(snapshot().empty());
}

TEST_F(FencedLockTest, ProcessesExcludeEachOtherAndTokensOnlyGrow) {
  // Each worker thread writes under the lock only if its token is above the
  // last one written: the storage side of fencing. A stale or repeated token
  // fails the worker.
  constexpr int processes = 3, threads = 3, iterations = 30;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(std::make_unique<ChildProcess>(
        WARDEN_TEST_WORKER, std::vector<std::string>{"counter", server.url(), "fenced:shared-counter", "counter",
                                                     std::to_string(threads), std::to_string(iterations), "fenced"}));
  }
  for (auto& child : children) {
    int code = -1;
    ASSERT_TRUE(child->wait_for(120s, &code)) << "worker hung";
    EXPECT_EQ(code, 0);
  }
  const int total = processes * threads * iterations;
  EXPECT_EQ(probe.get("counter"), std::to_string(total));
  EXPECT_EQ(probe.get(token_key("fenced:shared-counter")), std::to_string(total));
  EXPECT_EQ(probe.get("counter:last-token"), std::to_string(total));
  EXPECT_FALSE(probe.exists("fenced:shared-counter"));
}

}  // namespace
}  // namespace warden::test
