// SpinLock: Lock's layout, waiters that poll with back-off (no subscription,
// no CPU while they sleep), releases that publish nothing, Redisson-format
// holders, exclusion across processes, bad input.
#include <gtest/gtest.h>

#include <time.h>

#include <map>

#include "child_process.hpp"
#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "refusal.hpp"
#include "script_log.hpp"
#include "test_env.hpp"
#include "warden_scripts.hpp"

namespace warden::test {
namespace {

std::string channel(const std::string& name) { return "redisson_lock__channel:{" + name + "}"; }
std::string owner_of(const Client& client, thread_id thread) { return client.id() + ":" + std::to_string(thread); }

std::chrono::milliseconds process_cpu() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return std::chrono::milliseconds{now.tv_sec * 1000 + now.tv_nsec / 1'000'000};
}

class SpinLockTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string> snapshot() { return test::snapshot(probe); }

  RedisServer server{log_every_command()};
  RedisProbe probe{server};
  ScriptLog log{probe, {&detail::scripts::lock_acquire, &detail::scripts::lock_release}};
  Client client{fast_config(server)};
};

TEST_F(SpinLockTest, LocksLayoutNoSubscriptionAndReleasesPublishNothing) {
  const std::string name = "spin:orders";
  SpinLock lock = client.get_spin_lock(name);
  Client other{fast_config(server)};
  SpinLock theirs = other.get_spin_lock(name);
  const std::string me = owner_of(client, current_thread_id());
  MessageRecorder recorder(server, {channel(name)});
  const long long publishes = probe.command_calls("publish");
  const long long subscribes = probe.command_calls("subscribe");

  lock.lock();
  lock.lock();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "2"}}));
  EXPECT_GT(probe.pttl(name), 29'000);
  EXPECT_EQ(lock.hold_count(), 2);

  // A waiter polls: it runs the acquire script again and again and never subscribes.
  auto waiting = theirs.try_lock_async(7, lock_options().with_wait(10s));
  const std::string waiter = owner_of(other, 7);
  ASSERT_TRUE(eventually([&] { return log.runs(detail::scripts::lock_acquire, waiter) >= 3; }));
  EXPECT_EQ(subscribers(probe, channel(name)), 1) << "only the test's recorder listens";
  EXPECT_EQ(probe.command_calls("subscribe"), subscribes);

  lock.unlock();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "1"}}));
  auto released = std::chrono::steady_clock::now();
  lock.unlock();
  // Noticed at the next poll: within the back-off's cap (128 ms + jitter).
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(waiting.get());
  EXPECT_LT(elapsed_ms(released), 400);
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{waiter, "1"}}));
  theirs.unlock_async(7).get();
  EXPECT_FALSE(probe.exists(name));

  // force_unlock publishes nothing either.
  lock.lock();
  EXPECT_TRUE(theirs.force_unlock());
  EXPECT_FALSE(probe.exists(name));

  EXPECT_EQ(recorder.wait_for(1, 300ms).size(), 0u) << "a SpinLock published on its channel";
  EXPECT_EQ(probe.command_calls("publish"), publishes);
  EXPECT_EQ(probe.command_calls("subscribe"), subscribes);
}

TEST_F(SpinLockTest, WaitersBackOffExponentiallyAndEachSleepEndsWithTheWait) {
  const std::string name = "spin:backoff";
  Client holder{fast_config(server)};
  holder.get_lock(name).lock_async(1).get();  // a pub/sub Lock holds it: one layout

  // Default: 1, 2, 4, ... 128 ms (+ up to 2 ms each). 300 ms is about nine
  // sleeps; a waiter that did not back off would try hundreds of times.
  SpinLock lock = client.get_spin_lock(name);
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(lock.try_lock_async(2, lock_options().with_wait(300ms)).get());
  auto took = elapsed_ms(start);
  EXPECT_GE(took, 300);
  EXPECT_LT(took, 450) << "the last sleep ran past the wait";
  auto attempts = log.runs(detail::scripts::lock_acquire, owner_of(client, 2));
  EXPECT_GE(attempts, 6);
  EXPECT_LE(attempts, 12);

  // Constant: one attempt per delay.
  SpinLock steady = client.get_spin_lock(name, SpinBackoff::constant(100ms));
  EXPECT_FALSE(steady.try_lock_async(3, lock_options().with_wait(350ms)).get());
  attempts = log.runs(detail::scripts::lock_acquire, owner_of(client, 3));
  EXPECT_GE(attempts, 4);
  EXPECT_LE(attempts, 5);

  // A sleep is capped by the time the wait has left...
  SpinLock slow = client.get_spin_lock(name, SpinBackoff::constant(std::chrono::seconds(5)));
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(slow.try_lock_async(4, lock_options().with_wait(100ms)).get());
  EXPECT_LT(elapsed_ms(start), 300);
  EXPECT_EQ(log.runs(detail::scripts::lock_acquire, owner_of(client, 4)), 2) << "one try, one at the deadline";

  // ... and by the holder's lease: a free lock is found when the lease ends.
  holder.get_lock(name).force_unlock();
  holder.get_lock(name).lock_async(1, lock_options().with_lease(300ms)).get();
  start = std::chrono::steady_clock::now();
  EXPECT_TRUE(slow.try_lock_async(4, lock_options().with_wait(3s)).get());
  EXPECT_LT(elapsed_ms(start), 1'000);
  slow.unlock_async(4).get();
}

TEST_F(SpinLockTest, AWaitingPollerUsesNoCpu) {
  const std::string name = "spin:idle";
  Client holder{fast_config(server)};
  holder.get_spin_lock(name).lock_async(1).get();
  SpinLock lock = client.get_spin_lock(name);
  auto cpu_before = process_cpu();
  EXPECT_FALSE(lock.try_lock_for(1s));
  auto used = process_cpu() - cpu_before;
  // A busy wait would burn the whole second on one core.
  EXPECT_LT(used.count(), 150) << "the process used " << used.count() << " ms of CPU during a 1 s wait";
}

TEST_F(SpinLockTest, ARedissonHolderIsWaitedForWithoutItsUnlockMessage) {
  const std::string name = "spin:redisson";
  // An RSpinLock holder: Lock's hash, and its release publishes nothing.
  const std::string java = "6f1c7a52-5b7e-4c0a-9d55-3c2f0e6f4a11:1";
  probe.command({"HSET", name, java, "1"});
  probe.command({"PEXPIRE", name, "30000"});
  SpinLock lock = client.get_spin_lock(name);
  EXPECT_FALSE(lock.try_lock());
  auto waiting = lock.lock_async(5);
  std::this_thread::sleep_for(300ms);  // long enough for the waiter to be backing off at its cap
  probe.command({"DEL", name});
  auto freed = std::chrono::steady_clock::now();
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready);
  waiting.get();
  EXPECT_LT(elapsed_ms(freed), 400);
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{owner_of(client, 5), "1"}}));
  lock.unlock_async(5).get();
}

TEST_F(SpinLockTest, ProcessesExcludeEachOther) {
  constexpr int processes = 3, threads = 3, iterations = 30;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int p = 0; p < processes; ++p) {
    children.push_back(std::make_unique<ChildProcess>(
        WARDEN_TEST_WORKER, std::vector<std::string>{"counter", server.url(), "spin:shared-counter", "counter",
                                                     std::to_string(threads), std::to_string(iterations), "spin"}));
  }
  for (auto& child : children) {
    int code = -1;
    ASSERT_TRUE(child->wait_for(120s, &code)) << "worker hung";
    EXPECT_EQ(code, 0);
  }
  EXPECT_EQ(probe.get("counter"), std::to_string(processes * threads * iterations));
  EXPECT_FALSE(probe.exists("spin:shared-counter"));
}

TEST_F(SpinLockTest, BadInputIsATypedErrorAndChangesNothing) {
  const std::string name = "spin:bad";
  auto before = snapshot();
  for (auto backoff : {SpinBackoff{std::chrono::milliseconds{0}, 128ms, 2, 0ms}, SpinBackoff{10ms, 5ms, 2, 0ms},
                       SpinBackoff{1ms, 128ms, 0, 0ms}, SpinBackoff{1ms, 128ms, 2, -1ms}}) {
    try {
      client.get_spin_lock(name, backoff);
      ADD_FAILURE() << "a bad back-off was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument);
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("SpinBackoff::"), std::string::npos) << error.what();
    }
  }
  probe.command({"SET", name, "not a lock"});
  before = snapshot();
  SpinLock lock = client.get_spin_lock(name);
  try {
    lock.try_lock_for(100ms);
    ADD_FAILURE() << "a string was taken for a lock";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::wrong_type) << error.what();
  }
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace warden::test
