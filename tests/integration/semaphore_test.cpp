// Semaphore on one server: Redisson's layout and messages, N permits never
// more than N holders (threads of one Client, several Clients), a release
// waking a waiter within a round trip, the blocking/future/callback forms,
// cancellation, bad input, and interop with Redisson's layout spoken raw.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>
#include <vector>

#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::string channel(const std::string& name) { return "redisson_sc:{" + name + "}"; }

// Redisson's tryAcquire and release, as a Java service would run them
// (written here from Redisson's documented behaviour: GET, compare, DECRBY;
// INCRBY and publish the new count).
const char* redisson_try_acquire =
    "local v = redis.call('get', KEYS[1]); "
    "if v ~= false and tonumber(v) >= tonumber(ARGV[1]) then redis.call('decrby', KEYS[1], ARGV[1]); return 1; end; "
    "return 0;";
const char* redisson_release = "local v = redis.call('incrby', KEYS[1], ARGV[1]); redis.call(ARGV[2], KEYS[2], v);";

class SemaphoreTest : public ::testing::Test {
 protected:
  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

template <class T>
std::error_code error_of(std::future<T>& future) {
  try {
    future.get();
  } catch (const Error& error) {
    return error.code();
  }
  return {};
}

TEST_F(SemaphoreTest, RedissonsLayoutAndMessages) {
  const std::string name = "sem:layout";
  Semaphore semaphore = client.get_semaphore(name);
  EXPECT_EQ(semaphore.name(), name);
  MessageRecorder recorder(server, {channel(name)});

  EXPECT_EQ(semaphore.available_permits(), 0);  // no key: no permits
  EXPECT_FALSE(semaphore.try_acquire());
  EXPECT_TRUE(semaphore.try_set_permits(3));
  EXPECT_FALSE(semaphore.try_set_permits(5));  // only while the key is absent
  EXPECT_EQ(probe.get(name), "3");
  EXPECT_EQ(probe.pttl(name), -1);

  EXPECT_TRUE(semaphore.try_acquire(2));
  EXPECT_EQ(probe.get(name), "1");
  EXPECT_FALSE(semaphore.try_acquire(2));
  semaphore.release();
  EXPECT_EQ(probe.get(name), "2");
  semaphore.add_permits(4);
  EXPECT_EQ(semaphore.available_permits(), 6);
  EXPECT_EQ(semaphore.drain_permits(), 6);
  EXPECT_EQ(probe.get(name), "0");

  // Messages: the new count, on redisson_sc:{NAME}.
  auto messages = recorder.wait_for(3, 5s);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].payload, "3");  // try_set_permits
  EXPECT_EQ(messages[1].payload, "2");  // release
  EXPECT_EQ(messages[2].payload, "6");  // add_permits
  for (const auto& message : messages) EXPECT_EQ(message.channel, channel(name));
}

// Checks that at most `permits` holders overlap while `threads` callers on
// `clients` take and give back one permit each, `rounds` times.
void never_more_than(const std::vector<Client*>& clients, const std::string& name, int permits, int threads,
                     int rounds) {
  clients.front()->get_semaphore(name).add_permits(permits);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::atomic<int> done{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Semaphore semaphore = clients[static_cast<std::size_t>(t) % clients.size()]->get_semaphore(name);
      for (int i = 0; i < rounds; ++i) {
        semaphore.acquire();
        int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::yield();
        --inside;
        semaphore.release();
      }
      ++done;
    });
  }
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(done.load(), threads);
  EXPECT_LE(most.load(), permits);
  EXPECT_GE(most.load(), 1);
  EXPECT_EQ(clients.front()->get_semaphore(name).available_permits(), permits);
}

TEST_F(SemaphoreTest, ThreadsOfOneClientNeverHoldMoreThanThePermits) {
  auto started = std::chrono::steady_clock::now();
  never_more_than({&client}, "sem:threads", 3, 8, 40);
  EXPECT_LT(elapsed_ms(started), 20'000);
}

TEST_F(SemaphoreTest, SeveralClientsNeverHoldMoreThanThePermits) {
  Client second{fast_config(server)};
  Client third{fast_config(server)};
  auto started = std::chrono::steady_clock::now();
  never_more_than({&client, &second, &third}, "sem:clients", 2, 6, 30);
  EXPECT_LT(elapsed_ms(started), 20'000);
}

// A waiter that subscribed is handed the permit within a round trip of the
// release: the wait has no timer (unbounded), so only the message can wake it.
void release_wakes(RedisProbe& probe, Client& waiter_client, const std::string& name,
                   const std::function<void()>& release) {
  Semaphore semaphore = waiter_client.get_semaphore(name);
  auto waiting = std::async(std::launch::async, [&] {
    semaphore.acquire();
    return std::chrono::steady_clock::now();
  });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  // Subscribed; its re-try after the subscription may still be in flight,
  // which is fine: a release then either meets that re-try or wakes it.
  auto released = std::chrono::steady_clock::now();
  release();
  ASSERT_EQ(waiting.wait_for(5s), std::future_status::ready);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(waiting.get() - released);
  EXPECT_LT(took.count(), 250) << "a release must wake its waiter within a round trip";
  EXPECT_EQ(semaphore.available_permits(), 0);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 0; }));
}

TEST_F(SemaphoreTest, AReleaseOnTheSameClientWakesAWaiterWithinARoundTrip) {
  release_wakes(probe, client, "sem:wake-same", [&] { client.get_semaphore("sem:wake-same").release(); });
}

TEST_F(SemaphoreTest, AReleaseOnAnotherClientWakesAWaiterWithinARoundTrip) {
  Client other{fast_config(server)};
  release_wakes(probe, client, "sem:wake-other", [&] { other.get_semaphore("sem:wake-other").release(); });
}

TEST_F(SemaphoreTest, ARedissonReleaseWakesAWardenWaiter) {
  const std::string name = "sem:wake-redisson";
  release_wakes(probe, client, name, [&] {
    auto reply = probe.command({"EVAL", redisson_release, "2", name, channel(name), "1", "publish"});
    ASSERT_FALSE(reply.is_error()) << reply.str;
  });
}

TEST_F(SemaphoreTest, AReleaseOfSeveralPermitsWakesAsManyWaiters) {
  const std::string name = "sem:wake-many";
  std::vector<std::future<void>> waiting;
  for (int i = 0; i < 3; ++i) {
    waiting.push_back(std::async(std::launch::async, [&] { client.get_semaphore(name).acquire(); }));
  }
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  Semaphore semaphore = client.get_semaphore(name);
  semaphore.release(2);
  auto ready = [&] {
    int n = 0;
    for (auto& w : waiting) n += w.wait_for(0s) == std::future_status::ready ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(eventually([&] { return ready() == 2; }, 2s));
  // The third sleeps on: no permit is free, and nothing polls.
  EXPECT_EQ(probe.get(name), "0");
  EXPECT_EQ(ready(), 2);
  semaphore.release();
  for (auto& w : waiting) ASSERT_EQ(w.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(semaphore.available_permits(), 0);
}

TEST_F(SemaphoreTest, FutureAndCallbackForms) {
  const std::string name = "sem:async";
  Semaphore semaphore = client.get_semaphore(name);
  EXPECT_TRUE(semaphore.try_set_permits_async(2).get());
  auto first = semaphore.acquire_async(2);
  first.get();
  EXPECT_EQ(semaphore.available_permits_async().get(), 0);
  auto later = semaphore.try_acquire_async(1, lock_options().with_wait(10s));
  std::promise<std::error_code> released;
  semaphore.release_async(1, [&](std::error_code error) { released.set_value(error); });
  EXPECT_FALSE(released.get_future().get());
  EXPECT_TRUE(later.get());
  std::promise<std::pair<std::error_code, bool>> tried;
  semaphore.try_acquire_async(1, lock_options(), [&](std::error_code error, bool got) {
    tried.set_value({error, got});
  });
  auto [error, got] = tried.get_future().get();
  EXPECT_FALSE(error);
  EXPECT_FALSE(got);  // the one permit released went to the waiter
  semaphore.add_permits_async(3).get();
  std::promise<std::int64_t> count;
  semaphore.available_permits_async([&](std::error_code, std::int64_t value) { count.set_value(value); });
  EXPECT_EQ(count.get_future().get(), 3);
  EXPECT_EQ(semaphore.drain_permits_async().get(), 3);
}

TEST_F(SemaphoreTest, AnAcquireFutureNobodyCollectsGivesItsPermitsBack) {
  const std::string name = "sem:abandoned";
  Semaphore semaphore = client.get_semaphore(name);
  semaphore.add_permits(2);
  {
    auto dropped = semaphore.acquire_async(2);
    dropped.wait();
    EXPECT_EQ(probe.get(name), "0");
  }
  EXPECT_TRUE(eventually([&] { return probe.get(name) == std::optional<std::string>("2"); }));
}

TEST_F(SemaphoreTest, CancellingAWaitLeavesNothingBehind) {
  const std::string name = "sem:cancel";
  Semaphore semaphore = client.get_semaphore(name);
  cancel_source source;
  auto waiting = semaphore.acquire_async(1, lock_options().with_cancel(source.token()));
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  auto cancelled_at = std::chrono::steady_clock::now();
  source.cancel();
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready);
  EXPECT_LT(elapsed_ms(cancelled_at), 500);
  try {
    waiting.get();
    FAIL() << "a cancelled wait must fail";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::cancelled);
  }
  EXPECT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 0; }));
  EXPECT_FALSE(probe.exists(name));
  // A permit released now is there for the next caller, not for the cancelled one.
  semaphore.release();
  EXPECT_EQ(semaphore.available_permits(), 1);
}

TEST_F(SemaphoreTest, ABoundedWaitEndsAtItsBound) {
  Semaphore semaphore = client.get_semaphore("sem:bounded");
  auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(semaphore.try_acquire_for(300ms));
  auto waited = elapsed_ms(started);
  EXPECT_GE(waited, 290);
  EXPECT_LT(waited, 1500);
  EXPECT_FALSE(probe.exists("sem:bounded"));
}

// A try held up on the server (CLIENT PAUSE WRITE: scripts wait, as behind a
// long one) has no answer by the bound: the call ends with its commands,
// wait + command_timeout, rather than after a settle of its own, and the
// permit the try takes once the server runs it is given back behind it.
TEST_F(SemaphoreTest, ABoundedWaitWhoseTryIsHeldUpEndsWithItsCommandsAndLeavesThePermitFree) {
  const std::string name = "sem:held-up";
  Config config = fast_config(server);
  config.command_timeout = 400ms;
  Client paused{config};
  Semaphore semaphore = paused.get_semaphore(name);
  ASSERT_TRUE(semaphore.try_set_permits(1));
  ASSERT_TRUE(semaphore.try_acquire());  // connection up, scripts loaded
  semaphore.release();

  probe.command({"CLIENT", "PAUSE", "5000", "WRITE"});
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(semaphore.try_acquire_for(100ms), Error);
  auto took = elapsed_ms(start);
  // The bound is wait + command_timeout = 500 ms; allow for scheduling.
  EXPECT_LE(took, 500 + 150) << "try_acquire_for(100ms) took " << took << " ms";
  probe.command({"CLIENT", "UNPAUSE"});

  // The try runs now, and the give-back after it.
  EXPECT_TRUE(eventually([&] { return probe.get(name) == std::optional<std::string>("1"); }))
      << "free permits: " << probe.get(name).value_or("none");
  EXPECT_TRUE(semaphore.try_acquire());
  semaphore.release();
}

TEST_F(SemaphoreTest, BadInputIsRefusedAndChangesNothing) {
  const std::string name = "sem:bad";
  Semaphore semaphore = client.get_semaphore(name);
  auto refused = [&](const std::function<void()>& call) {
    try {
      call();
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument);
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
      return;
    }
    ADD_FAILURE() << "accepted";
  };
  refused([&] { semaphore.acquire(0); });
  refused([&] { semaphore.try_acquire(-1); });
  refused([&] { semaphore.release(0); });
  refused([&] { semaphore.try_set_permits(0); });
  refused([&] { semaphore.add_permits(-3); });
  refused([&] { semaphore.release_if_exists(0); });
  refused([&] { semaphore.acquire(1, lock_options().with_wait(1s)); });
  refused([&] { semaphore.try_acquire(1, lock_options().with_lease(1s)); });
  auto future = semaphore.release_async(0);
  EXPECT_EQ(error_of(future), errc::invalid_argument);
  EXPECT_FALSE(probe.exists(name));
  for (const char* bad : {"", "a{", "x{}y", "a}b"}) {
    try {
      client.get_semaphore(bad);
      ADD_FAILURE() << "accepted the name '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument);
    }
  }
}

TEST_F(SemaphoreTest, AKeyOfAnotherKindIsRefusedAndLeftAsItIs) {
  probe.command({"HSET", "sem:hash", "f", "1"});
  probe.command({"SET", "sem:text", "hello"});
  probe.command({"RPUSH", "sem:list", "a"});
  for (std::string name : {"sem:hash", "sem:text", "sem:list"}) {
    auto before = probe.command({"DUMP", name}).str;
    Semaphore semaphore = client.get_semaphore(name);
    auto wrong = [&](const std::function<void()>& call) {
      try {
        call();
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), errc::wrong_type) << name;
        EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
        return;
      }
      ADD_FAILURE() << "accepted " << name;
    };
    wrong([&] { semaphore.try_acquire(); });
    wrong([&] { semaphore.try_acquire_for(100ms); });
    wrong([&] { semaphore.release(); });
    wrong([&] { semaphore.available_permits(); });
    wrong([&] { semaphore.drain_permits(); });
    wrong([&] { semaphore.try_set_permits(1); });
    wrong([&] { semaphore.add_permits(1); });
    wrong([&] { semaphore.release_if_exists(1); });
    EXPECT_EQ(probe.command({"DUMP", name}).str, before) << name;
  }
}

// Redisson's releaseIfExists: a semaphore whose key is missing stays
// missing (false, nothing published); one that exists gets its permits and
// its waiters hear the new count.
TEST_F(SemaphoreTest, ReleaseIfExistsLeavesAMissingSemaphoreMissing) {
  const std::string name = "sem:if-exists";
  Semaphore semaphore = client.get_semaphore(name);
  MessageRecorder listener(server, {channel(name)});
  EXPECT_FALSE(semaphore.release_if_exists(2));
  EXPECT_FALSE(semaphore.release_if_exists_async().get());
  EXPECT_FALSE(probe.exists(name));

  probe.command({"SET", name, "0"});
  EXPECT_TRUE(semaphore.release_if_exists(2));
  EXPECT_EQ(probe.get(name), "2");
  std::promise<bool> released;
  semaphore.release_if_exists_async(1, [&](std::error_code, bool ok) { released.set_value(ok); });
  EXPECT_TRUE(released.get_future().get());
  EXPECT_EQ(probe.get(name), "3");
  auto messages = listener.wait_for(2, 5s);
  ASSERT_EQ(messages.size(), 2u) << "a release to a missing semaphore published";
  EXPECT_EQ(messages[0].payload, "2");
  EXPECT_EQ(messages[1].payload, "3");
  // A waiter is woken by it as by release().
  semaphore.drain_permits();
  auto waiting = semaphore.acquire_async();
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel(name)) == 1; }));
  EXPECT_TRUE(semaphore.release_if_exists());
  ASSERT_EQ(waiting.wait_for(2s), std::future_status::ready);
  waiting.get();
  EXPECT_EQ(probe.get(name), "0");
}

TEST_F(SemaphoreTest, RedissonHoldersAndWardenHoldersShareThePermits) {
  const std::string name = "sem:interop";
  Semaphore semaphore = client.get_semaphore(name);
  // Set up as Redisson's trySetPermits would: the count, published.
  probe.command({"SET", name, "2"});
  // A Redisson holder takes one, warden the other; then neither can.
  EXPECT_EQ(probe.command({"EVAL", redisson_try_acquire, "1", name, "1"}).integer, 1);
  EXPECT_TRUE(semaphore.try_acquire());
  EXPECT_EQ(probe.command({"EVAL", redisson_try_acquire, "1", name, "1"}).integer, 0);
  EXPECT_FALSE(semaphore.try_acquire());
  // A Redisson waiter listens on redisson_sc:{NAME} for the new count: a
  // warden release tells it "1".
  MessageRecorder redisson_waiter(server, {channel(name)});
  semaphore.release();
  auto messages = redisson_waiter.wait_for(1, 5s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].payload, "1");
  EXPECT_EQ(probe.command({"EVAL", redisson_try_acquire, "1", name, "1"}).integer, 1);
  EXPECT_EQ(probe.get(name), "0");
}

}  // namespace
}  // namespace warden::test
