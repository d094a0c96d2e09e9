// warden locks under the standard library's lock guards.
#include <gtest/gtest.h>

#include <mutex>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

class Guards : public ::testing::Test {
 protected:
  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(Guards, LockGuardLocksForItsScope) {
  Lock lock = client.get_lock("guarded");
  {
    std::lock_guard<Lock> guard(lock);
    EXPECT_TRUE(probe.exists("guarded"));
  }
  EXPECT_FALSE(probe.exists("guarded"));
}

TEST_F(Guards, UniqueLockWithTryToLockAndTimedLocking) {
  Lock lock = client.get_lock("unique");
  {
    std::unique_lock<Lock> guard(lock, std::try_to_lock);
    EXPECT_TRUE(guard.owns_lock());
    guard.unlock();
    EXPECT_FALSE(probe.exists("unique"));
    EXPECT_TRUE(guard.try_lock_for(100ms));
    EXPECT_TRUE(probe.exists("unique"));
  }
  EXPECT_FALSE(probe.exists("unique"));

  Client other{fast_config(server)};
  Lock theirs = other.get_lock("unique");
  std::lock_guard<Lock> held(theirs);
  std::unique_lock<Lock> timed(lock, 100ms);  // TimedLockable: try_lock_for
  EXPECT_FALSE(timed.owns_lock());
  std::unique_lock<Lock> until(lock, std::chrono::steady_clock::now() + 50ms);  // try_lock_until
  EXPECT_FALSE(until.owns_lock());
}

TEST_F(Guards, ScopedLockTakesSeveralLocks) {
  Lock a = client.get_lock("scoped:a");
  Lock b = client.get_lock("scoped:b");
  {
    std::scoped_lock guard(a, b);
    EXPECT_TRUE(probe.exists("scoped:a"));
    EXPECT_TRUE(probe.exists("scoped:b"));
  }
  EXPECT_FALSE(probe.exists("scoped:a"));
  EXPECT_FALSE(probe.exists("scoped:b"));
}

TEST_F(Guards, AGuardUnwindingFromAnExceptionReleasesWithoutThrowing) {
  Lock lock = client.get_lock("unwinding");
  EXPECT_THROW(
      {
        std::lock_guard<Lock> guard(lock);
        probe.command({"DEL", "unwinding"});  // the hold is gone; unlock will fail
        throw std::runtime_error("work failed");
      },
      std::runtime_error);
}

}  // namespace
}  // namespace warden::test
