// warden locks under the standard library's lock guards, including holds
// lost while a guard holds them: the process goes on, the loss is reported.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

class Guard : public ::testing::Test {
 protected:
  RedisServer server;
  RedisProbe probe{server};
  Client client{fast_config(server)};
};

TEST_F(Guard, LockGuardLocksForItsScope) {
  Lock lock = client.get_lock("guarded");
  {
    std::lock_guard<Lock> guard(lock);
    EXPECT_TRUE(probe.exists("guarded"));
  }
  EXPECT_FALSE(probe.exists("guarded"));
}

TEST_F(Guard, UniqueLockWithTryToLockAndTimedLocking) {
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

TEST_F(Guard, ScopedLockTakesSeveralLocks) {
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

TEST_F(Guard, AGuardUnwindingFromAnExceptionReleasesWithoutThrowing) {
  Lock lock = client.get_lock("unwinding");
  EXPECT_THROW(
      {
        std::lock_guard<Lock> guard(lock);
        probe.command({"DEL", "unwinding"});  // the hold is gone; unlock will fail
        throw std::runtime_error("work failed");
      },
      std::runtime_error);
}

// ---- a hold lost while a guard holds it ----

enum class guard_kind { lock_guard, unique_lock, scoped_lock_one, scoped_lock_two, checked };
enum class loss { force_unlock, deleted, server_restarted };

std::string name_of(guard_kind kind) {
  switch (kind) {
    case guard_kind::lock_guard:
      return "LockGuard";
    case guard_kind::unique_lock:
      return "UniqueLock";
    case guard_kind::scoped_lock_one:
      return "ScopedLockOfOne";
    case guard_kind::scoped_lock_two:
      return "ScopedLockOfTwo";
    case guard_kind::checked:
      return "UnlockChecked";
  }
  return "?";
}

std::string name_of(loss way) {
  switch (way) {
    case loss::force_unlock:
      return "ForceUnlockedByAnotherClient";
    case loss::deleted:
      return "KeyDeleted";
    case loss::server_restarted:
      return "ServerRestartedEmpty";
  }
  return "?";
}

// Records what the logger and the lost-lock listeners are told.
struct Reports {
  std::mutex mutex;
  std::vector<LockLost> lost;
  std::vector<std::string> errors;

  std::size_t lost_count() {
    std::lock_guard<std::mutex> guard(mutex);
    return lost.size();
  }
};

class GuardLostMidScope : public ::testing::TestWithParam<std::tuple<guard_kind, loss>> {
 protected:
  Config logged_config() {
    Config config = fast_config(server);
    config.logger = [reports = reports](log_level level, std::string_view message) {
      if (level != log_level::error) return;
      std::lock_guard<std::mutex> guard(reports->mutex);
      reports->errors.emplace_back(message);
    };
    return config;
  }

  void lose(loss way, const std::vector<std::string>& names) {
    switch (way) {
      case loss::force_unlock:
        for (auto& name : names) EXPECT_TRUE(other.get_lock(name).force_unlock());
        break;
      case loss::deleted:
        for (auto& name : names) probe.command({"DEL", name});
        break;
      case loss::server_restarted:
        server.stop();
        server.start();
        for (auto& name : names) EXPECT_FALSE(probe.exists(name));
        break;
    }
  }

  RedisServer server;
  RedisProbe probe{server};
  std::shared_ptr<Reports> reports = std::make_shared<Reports>();
  Client client{logged_config()};
  Client other{fast_config(server)};
};

TEST_P(GuardLostMidScope, TheProcessGoesOnAndTheLossIsReported) {
  auto [kind, way] = GetParam();
  Lock a = client.get_lock("lost:a");
  Lock b = client.get_lock("lost:b");
  auto record = [reports = reports](const LockLost& event) {
    std::lock_guard<std::mutex> guard(reports->mutex);
    reports->lost.push_back(event);
  };
  auto watch_a = a.subscribe_lost(record);
  auto watch_b = b.subscribe_lost(record);
  std::vector<std::string> names{"lost:a"};
  if (kind == guard_kind::scoped_lock_two) names.push_back("lost:b");

  switch (kind) {
    case guard_kind::lock_guard: {
      std::lock_guard<Lock> guard(a);
      lose(way, names);
      break;
    }
    case guard_kind::unique_lock: {
      std::unique_lock<Lock> guard(a);
      lose(way, names);
      guard.unlock();  // fails, does not throw; the guard no longer owns
      EXPECT_FALSE(guard.owns_lock());
      break;
    }
    case guard_kind::scoped_lock_one: {
      std::scoped_lock guard(a);
      lose(way, names);
      break;
    }
    case guard_kind::scoped_lock_two: {
      std::scoped_lock guard(a, b);
      lose(way, names);
      break;
    }
    case guard_kind::checked: {
      a.lock();
      lose(way, names);
      EXPECT_EQ(a.unlock_checked(), errc::lease_expired);
      break;
    }
  }
  // Still running: no std::terminate. Each lost hold was reported once.
  std::lock_guard<std::mutex> guard(reports->mutex);
  ASSERT_EQ(reports->lost.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    bool found = false;
    for (auto& event : reports->lost) {
      if (event.lock_name != names[i]) continue;
      found = true;
      EXPECT_EQ(event.owner, current_thread_id());
      EXPECT_EQ(event.cause, errc::lease_expired) << event.message;
    }
    EXPECT_TRUE(found) << names[i];
  }
  EXPECT_EQ(reports->errors.size(), names.size()) << "each failed release is logged";
  // The client goes on working.
  EXPECT_TRUE(a.try_lock());
  EXPECT_FALSE(a.unlock_checked());
}

INSTANTIATE_TEST_SUITE_P(
    EveryGuardEveryLoss, GuardLostMidScope,
    ::testing::Combine(::testing::Values(guard_kind::lock_guard, guard_kind::unique_lock, guard_kind::scoped_lock_one,
                                         guard_kind::scoped_lock_two, guard_kind::checked),
                       ::testing::Values(loss::force_unlock, loss::deleted, loss::server_restarted)),
    [](const ::testing::TestParamInfo<std::tuple<guard_kind, loss>>& info) {
      return name_of(std::get<0>(info.param)) + "_" + name_of(std::get<1>(info.param));
    });

TEST_F(Guard, EveryLockKindUnderALockGuardSurvivesLosingIt) {
  ReadWriteLock rw = client.get_read_write_lock("kinds:rw");
  std::vector<std::pair<Lock, std::string>> kinds{
      {client.get_fair_lock("kinds:fair"), "kinds:fair"}, {rw.read_lock(), "kinds:rw"}, {rw.write_lock(), "kinds:rw"}};
  for (auto& [lock, key] : kinds) {
    std::error_code cause;
    auto watch = lock.subscribe_lost([&cause](const LockLost& event) { cause = event.cause; });
    {
      std::lock_guard<Lock> guard(lock);
      ASSERT_TRUE(probe.exists(key));
      probe.command({"DEL", key});
    }
    EXPECT_EQ(cause, errc::lease_expired) << key;
    EXPECT_TRUE(lock.try_lock()) << key;
    EXPECT_FALSE(lock.unlock_checked()) << key;
  }
}

TEST_F(Guard, UnlockCheckedSaysNotOwnerAndChangesNothing) {
  Lock lock = client.get_lock("never-held");
  Client other{fast_config(server)};
  other.get_lock("never-held").lock();
  auto before = probe.hgetall("never-held");
  EXPECT_EQ(lock.unlock_checked(), errc::not_owner);
  lock.unlock();  // the same, reported through the logger only
  EXPECT_EQ(probe.hgetall("never-held"), before);
}

TEST_F(Guard, MultiLockUnderALockGuardSurvivesALostMember) {
  MultiLock multi{client.get_lock("m:a"), client.get_lock("m:b")};
  Event lost;
  std::error_code cause;
  auto watch = multi.subscribe_lost([&](const LockLost& event) {
    cause = event.cause;
    lost.set();
  });
  {
    std::lock_guard<MultiLock> guard(multi);
    probe.command({"DEL", "m:b"});
  }
  ASSERT_TRUE(lost.wait_for(2s)) << "the failed release was not reported to the listeners";
  EXPECT_EQ(cause, errc::lease_expired);
  EXPECT_FALSE(probe.exists("m:a")) << "the member still held was not released";
  EXPECT_TRUE(multi.try_lock());
  EXPECT_FALSE(multi.unlock_checked());
  EXPECT_EQ(multi.unlock_checked(), errc::not_owner);
}

TEST(GuardRedLock, ARedLockUnderALockGuardSurvivesLosingTheMajority) {
  std::vector<std::unique_ptr<RedisServer>> servers;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<Lock> members;
  for (int i = 0; i < 3; ++i) {
    servers.push_back(std::make_unique<RedisServer>());
    clients.push_back(std::make_unique<Client>(fast_config(*servers.back())));
    members.push_back(clients.back()->get_lock("red"));
  }
  RedLock lock(members);
  Event lost;
  std::error_code cause;
  auto watch = lock.subscribe_lost([&](const LockLost& event) {
    cause = event.cause;
    lost.set();
  });
  {
    std::lock_guard<RedLock> guard(lock);
    // It returns once a majority holds it; the last node follows.
    ASSERT_TRUE(eventually([&] {
      for (auto& server : servers) {
        if (!RedisProbe(*server).exists("red")) return false;
      }
      return true;
    }));
    for (int i : {0, 1}) RedisProbe(*servers[static_cast<std::size_t>(i)]).command({"DEL", "red"});
  }
  ASSERT_TRUE(lost.wait_for(2s)) << "the failed release was not reported to the listeners";
  EXPECT_EQ(cause, errc::lease_expired);
  EXPECT_FALSE(RedisProbe(*servers[2]).exists("red"));
  EXPECT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.unlock_checked());
}

}  // namespace
}  // namespace warden::test
