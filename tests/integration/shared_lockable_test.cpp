// ReadWriteLock as std::shared_timed_mutex is used: SharedTimedLockable
// (lock_shared() and friends take the read lock) and TimedLockable (lock() and
// friends take the write lock), so std::shared_lock and std::unique_lock work
// over it directly.
#include <gtest/gtest.h>

#include <future>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include "redis_probe.hpp"
#include "test_env.hpp"

// The standard wrappers instantiate over it, every member.
template class std::shared_lock<warden::ReadWriteLock>;
template class std::unique_lock<warden::ReadWriteLock>;

namespace warden::test {
namespace {

// ---- the named requirements, checked at compile time ----

template <class T>
T& lvalue();

template <class T, class = void>
struct shared_timed_lockable : std::false_type {};
template <class T>
struct shared_timed_lockable<
    T, std::void_t<decltype(lvalue<T>().lock_shared()), decltype(lvalue<T>().try_lock_shared()),
                   decltype(lvalue<T>().unlock_shared()), decltype(lvalue<T>().try_lock_shared_for(1ms)),
                   decltype(lvalue<T>().try_lock_shared_until(std::chrono::steady_clock::now())),
                   decltype(lvalue<T>().try_lock_shared_until(std::chrono::system_clock::now()))>>
    : std::bool_constant<
          std::is_same_v<decltype(lvalue<T>().try_lock_shared()), bool> &&
          std::is_same_v<decltype(lvalue<T>().try_lock_shared_for(1ms)), bool> &&
          std::is_same_v<decltype(lvalue<T>().try_lock_shared_until(std::chrono::steady_clock::now())), bool>> {};

template <class T, class = void>
struct timed_lockable : std::false_type {};
template <class T>
struct timed_lockable<T, std::void_t<decltype(lvalue<T>().lock()), decltype(lvalue<T>().try_lock()),
                                     decltype(lvalue<T>().unlock()), decltype(lvalue<T>().try_lock_for(1ms)),
                                     decltype(lvalue<T>().try_lock_until(std::chrono::steady_clock::now()))>>
    : std::bool_constant<std::is_same_v<decltype(lvalue<T>().try_lock()), bool> &&
                         std::is_same_v<decltype(lvalue<T>().try_lock_for(1ms)), bool> &&
                         std::is_same_v<decltype(lvalue<T>().try_lock_until(std::chrono::steady_clock::now())), bool>> {
};

static_assert(shared_timed_lockable<std::shared_timed_mutex>::value, "the check itself");
static_assert(timed_lockable<std::timed_mutex>::value, "the check itself");
static_assert(!shared_timed_lockable<std::timed_mutex>::value, "the check itself");
static_assert(shared_timed_lockable<ReadWriteLock>::value, "ReadWriteLock is SharedTimedLockable (its read lock)");
static_assert(timed_lockable<ReadWriteLock>::value, "ReadWriteLock is TimedLockable (its write lock)");
// The standard asks that releases not throw; warden's say so in their type.
static_assert(
    noexcept(std::declval<ReadWriteLock&>().unlock_shared()) && noexcept(std::declval<ReadWriteLock&>().unlock()),
    "releases never throw");
// ---- at run time, against a server ----

class SharedLockable : public ::testing::Test {
 protected:
  // Runs `body` on another thread (another owner) and returns its result.
  template <class F>
  auto on_other_thread(F body) {
    return std::async(std::launch::async, std::move(body)).get();
  }

  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(SharedLockable, SharedLockTakesTheReadLockAndReadersShare) {
  ReadWriteLock rw = client.get_read_write_lock("sl:readers");
  {
    std::shared_lock<ReadWriteLock> reading{rw};
    EXPECT_TRUE(reading.owns_lock());
    EXPECT_EQ(rw.read_lock().hold_count(), 1);
    EXPECT_EQ(rw.write_lock().hold_count(), 0);
    EXPECT_EQ(probe.hgetall("sl:readers").at("mode"), "read");

    // Another owner reads alongside, and may not write.
    bool shared = on_other_thread([&] {
      std::shared_lock<ReadWriteLock> theirs{rw, std::try_to_lock};
      return theirs.owns_lock() && rw.read_lock().hold_count() == 1;
    });
    EXPECT_TRUE(shared);
    bool wrote = on_other_thread([&] {
      std::unique_lock<ReadWriteLock> theirs{rw, 100ms};
      return theirs.owns_lock();
    });
    EXPECT_FALSE(wrote);
  }  // unlock_shared()
  EXPECT_EQ(rw.read_lock().hold_count(), 0);
  EXPECT_FALSE(probe.exists("sl:readers"));
}

TEST_F(SharedLockable, UniqueLockTakesTheWriteLockAndExcludesReaders) {
  ReadWriteLock rw = client.get_read_write_lock("sl:writer");
  {
    std::unique_lock<ReadWriteLock> writing{rw};
    EXPECT_EQ(rw.write_lock().hold_count(), 1);
    EXPECT_EQ(probe.hgetall("sl:writer").at("mode"), "write");
    bool read = on_other_thread([&] {
      std::shared_lock<ReadWriteLock> theirs{rw, std::try_to_lock};
      return theirs.owns_lock();
    });
    EXPECT_FALSE(read);
    bool read_in_time = on_other_thread([&] {
      std::shared_lock<ReadWriteLock> theirs{rw, std::chrono::steady_clock::now() + 100ms};
      return theirs.owns_lock();
    });
    EXPECT_FALSE(read_in_time);
  }  // unlock()
  EXPECT_FALSE(probe.exists("sl:writer"));

  // Free again: a reader gets it within its wait, a writer at once.
  std::shared_lock<ReadWriteLock> reading{rw, 1s};
  EXPECT_TRUE(reading.owns_lock());
  reading.unlock();
  std::lock_guard<ReadWriteLock> guard{rw};
  EXPECT_EQ(rw.write_lock().hold_count(), 1);
}

// A waiting shared_lock is woken when the writer's unique_lock lets go.
TEST_F(SharedLockable, AReaderWaitingInSharedLockGetsItWhenTheWriterLetsGo) {
  ReadWriteLock rw = client.get_read_write_lock("sl:handoff");
  std::unique_lock<ReadWriteLock> writing{rw};
  std::promise<void> got;
  std::thread reader([&] {
    std::shared_lock<ReadWriteLock> reading{rw};
    got.set_value();
  });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_rwlock:{sl:handoff}") == 1; }));
  writing.unlock();
  EXPECT_EQ(got.get_future().wait_for(2s), std::future_status::ready);
  reader.join();
}

}  // namespace
}  // namespace warden::test
