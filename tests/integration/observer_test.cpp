// Config::observer: each hook fires with the right fields against a real
// server: acquires (free, woken by a message, woken by a
// timer, timed out, cancelled, failed), releases, watchdog renewals, lost
// holds, and connections going down and coming back.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

// Copies of the events (their string_views die with the call).
struct Recorded {
  struct Acquire {
    std::string name;
    lock_kind kind;
    thread_id owner;
    acquire_outcome outcome;
    std::error_code error;
    std::chrono::nanoseconds waited;
    int attempts, by_message, by_timer, by_reconnect;
    wake_cause last_wake;
  };
  struct Release {
    std::string name;
    lock_kind kind;
    thread_id owner;
    std::error_code error;
    bool freed;
    std::chrono::nanoseconds latency;
  };
  struct Renewal {
    std::string node;
    renewal_phase phase;
    std::size_t count, renewed, gone;
    std::chrono::nanoseconds latency;
    std::error_code error;
  };
  struct Lost {
    std::string name;
    lock_kind kind;
    thread_id owner;
    std::error_code cause;
    std::string message;
  };
  struct Link {
    std::string node;
    connection_role role;
    connection_state state;
    bool reconnect;
    std::error_code error;
    std::string detail;
    std::chrono::milliseconds retry_in;
  };

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Acquire> acquires;
  std::vector<Release> releases;
  std::vector<Renewal> renewals;
  std::vector<Lost> lost;
  std::vector<Link> links;

  template <class T>
  void add(std::vector<T>& to, T item) {
    std::lock_guard<std::mutex> guard(mutex);
    to.push_back(std::move(item));
    changed.notify_all();
  }

  // Waits until `condition` (called with the mutex held) holds.
  bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock<std::mutex> guard(mutex);
    return changed.wait_for(guard, timeout, condition);
  }

  Observer observer() {
    Observer hooks;
    hooks.on_acquire = [this](const AcquireEvent& e) {
      add(acquires, Acquire{std::string(e.lock_name), e.kind, e.owner, e.outcome, e.error, e.waited, e.attempts,
                            e.woken_by_message, e.woken_by_timer, e.woken_by_reconnect, e.last_wake});
    };
    hooks.on_release = [this](const ReleaseEvent& e) {
      add(releases, Release{std::string(e.lock_name), e.kind, e.owner, e.error, e.freed, e.latency});
    };
    hooks.on_renewal = [this](const RenewalEvent& e) {
      add(renewals, Renewal{std::string(e.node), e.phase, e.count, e.renewed, e.gone, e.latency, e.error});
    };
    hooks.on_hold_lost = [this](const HoldLostEvent& e) {
      add(lost, Lost{std::string(e.lock_name), e.kind, e.owner, e.cause, std::string(e.message)});
    };
    hooks.on_connection = [this](const ConnectionEvent& e) {
      add(links, Link{std::string(e.node), e.role, e.state, e.reconnect, e.error, std::string(e.detail), e.retry_in});
    };
    return hooks;
  }

  // The acquires of `name`, under the mutex.
  std::vector<Acquire> acquires_of(const std::string& name) {
    std::lock_guard<std::mutex> guard(mutex);
    std::vector<Acquire> out;
    for (auto& a : acquires) {
      if (a.name == name) out.push_back(a);
    }
    return out;
  }
};

class Observer : public ::testing::Test {
 protected:
  Config observed_config() {
    Config config = fast_config(server);
    config.observer = recorded.observer();
    return config;
  }
  std::string node() const { return "127.0.0.1:" + std::to_string(server.port()); }

  RedisServer server;
  RedisProbe probe{server};
  Recorded recorded;
};

TEST_F(Observer, AFreeLockIsOneAttemptAndItsReleaseFreesIt) {
  Client client{observed_config()};
  Lock lock = client.get_lock("free");
  lock.lock();
  lock.unlock();
  ASSERT_TRUE(recorded.wait_until([&] { return recorded.releases.size() == 1; }));
  auto acquires = recorded.acquires_of("free");
  ASSERT_EQ(acquires.size(), 1u);
  EXPECT_EQ(acquires[0].kind, lock_kind::lock);
  EXPECT_EQ(acquires[0].owner, current_thread_id());
  EXPECT_EQ(acquires[0].outcome, acquire_outcome::acquired);
  EXPECT_FALSE(acquires[0].error);
  EXPECT_EQ(acquires[0].attempts, 1);
  EXPECT_EQ(acquires[0].last_wake, wake_cause::none);
  EXPECT_EQ(acquires[0].by_message + acquires[0].by_timer + acquires[0].by_reconnect, 0);
  EXPECT_GT(acquires[0].waited.count(), 0);
  std::lock_guard<std::mutex> guard(recorded.mutex);
  auto& release = recorded.releases[0];
  EXPECT_EQ(release.name, "free");
  EXPECT_EQ(release.owner, current_thread_id());
  EXPECT_FALSE(release.error);
  EXPECT_TRUE(release.freed);
  EXPECT_GT(release.latency.count(), 0);
}

TEST_F(Observer, AReEnteredHoldIsNotFreedByItsFirstRelease) {
  Client client{observed_config()};
  Lock lock = client.get_lock("twice");
  lock.lock();
  lock.lock();
  lock.unlock();
  lock.unlock();
  ASSERT_TRUE(recorded.wait_until([&] { return recorded.releases.size() == 2; }));
  std::lock_guard<std::mutex> guard(recorded.mutex);
  EXPECT_FALSE(recorded.releases[0].freed);
  EXPECT_TRUE(recorded.releases[1].freed);
}

TEST_F(Observer, AWaiterWokenByTheUnlockMessageSaysSo) {
  Client holder{fast_config(server)};
  Client client{observed_config()};
  Lock held = holder.get_lock("message");
  held.lock();
  Lock lock = client.get_lock("message");
  std::thread waiter([&] {
    lock.lock();
    lock.unlock();
  });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{message}") == 1; }));
  held.unlock();
  waiter.join();
  auto acquires = recorded.acquires_of("message");
  ASSERT_EQ(acquires.size(), 1u);
  EXPECT_EQ(acquires[0].outcome, acquire_outcome::acquired);
  EXPECT_GE(acquires[0].attempts, 2);
  EXPECT_GE(acquires[0].by_message, 1);
  EXPECT_EQ(acquires[0].last_wake, wake_cause::message);
}

TEST_F(Observer, AWaiterWokenByItsTimerWhenTheHoldersLeaseRunsOut) {
  Client holder{fast_config(server)};
  Client client{observed_config()};
  // A fixed lease that simply runs out: nobody publishes an unlock message.
  holder.get_lock("timer").lock(lock_options().with_lease(300ms));
  Lock lock = client.get_lock("timer");
  ASSERT_TRUE(lock.try_lock_for(5s));
  lock.unlock();
  auto acquires = recorded.acquires_of("timer");
  ASSERT_EQ(acquires.size(), 1u);
  EXPECT_EQ(acquires[0].outcome, acquire_outcome::acquired);
  EXPECT_GE(acquires[0].by_timer, 1);
  EXPECT_EQ(acquires[0].last_wake, wake_cause::timer);
  EXPECT_GE(acquires[0].waited, std::chrono::milliseconds(100));
}

TEST_F(Observer, TimedOutCancelledAndFailedAcquiresAreTold) {
  Client holder{fast_config(server)};
  Client client{observed_config()};
  holder.get_lock("busy").lock();
  Lock lock = client.get_lock("busy");
  EXPECT_FALSE(lock.try_lock_for(100ms));

  cancel_source cancel;
  std::thread waiter([&] { EXPECT_THROW(lock.lock(lock_options().with_cancel(cancel.token())), Error); });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{busy}") == 1; }));
  cancel.cancel();
  waiter.join();

  probe.command({"SET", "not-a-lock", "x"});
  EXPECT_THROW(client.get_lock("not-a-lock").try_lock(), Error);

  auto busy = recorded.acquires_of("busy");
  ASSERT_EQ(busy.size(), 2u);
  EXPECT_EQ(busy[0].outcome, acquire_outcome::timed_out);
  EXPECT_FALSE(busy[0].error);
  EXPECT_GE(busy[0].waited, std::chrono::milliseconds(100));
  EXPECT_EQ(busy[1].outcome, acquire_outcome::cancelled);
  EXPECT_EQ(busy[1].error, errc::cancelled);
  auto wrong = recorded.acquires_of("not-a-lock");
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0].outcome, acquire_outcome::failed);
  EXPECT_EQ(wrong[0].error, errc::wrong_type);
}

TEST_F(Observer, EachKindIsNamedAndAFailedReleaseCarriesItsCause) {
  Client client{observed_config()};
  FairLock fair = client.get_fair_lock("fair");
  fair.lock();
  fair.unlock();
  ReadWriteLock rw = client.get_read_write_lock("rw");
  rw.read_lock().lock();
  rw.read_lock().unlock();
  rw.write_lock().lock();
  rw.write_lock().unlock();
  EXPECT_EQ(client.get_lock("never-held").unlock_checked(), errc::not_owner);
  FencedLock fenced = client.get_fenced_lock("fenced");
  fenced.lock();
  fenced.unlock();
  SpinLock spin = client.get_spin_lock("spin");
  spin.lock();
  spin.unlock();
  ASSERT_TRUE(recorded.wait_until([&] { return recorded.releases.size() == 6; }));
  ASSERT_EQ(recorded.acquires_of("fenced").size(), 1u);
  EXPECT_EQ(recorded.acquires_of("fenced")[0].kind, lock_kind::fenced);
  ASSERT_EQ(recorded.acquires_of("spin").size(), 1u);
  EXPECT_EQ(recorded.acquires_of("spin")[0].kind, lock_kind::spin);
  ASSERT_EQ(recorded.acquires_of("fair").size(), 1u);
  EXPECT_EQ(recorded.acquires_of("fair")[0].kind, lock_kind::fair);
  auto rw_acquires = recorded.acquires_of("rw");
  ASSERT_EQ(rw_acquires.size(), 2u);
  EXPECT_EQ(rw_acquires[0].kind, lock_kind::read);
  EXPECT_EQ(rw_acquires[1].kind, lock_kind::write);
  std::lock_guard<std::mutex> guard(recorded.mutex);
  EXPECT_EQ(recorded.releases[0].kind, lock_kind::fair);
  EXPECT_EQ(recorded.releases[1].kind, lock_kind::read);
  EXPECT_EQ(recorded.releases[2].kind, lock_kind::write);
  EXPECT_EQ(recorded.releases[3].name, "never-held");
  EXPECT_EQ(recorded.releases[3].error, errc::not_owner);
  EXPECT_FALSE(recorded.releases[3].freed);
  EXPECT_EQ(recorded.releases[4].kind, lock_kind::fenced);
  EXPECT_EQ(recorded.releases[5].kind, lock_kind::spin);
}

TEST_F(Observer, RenewalBatchesAreSentAndConfirmedAndAGoneHoldIsLost) {
  Config config = observed_config();
  config.lock_watchdog_timeout = 300ms;  // renewed every 100 ms
  Client client{config};
  Lock a = client.get_lock("renew-a"), b = client.get_lock("renew-b"), c = client.get_lock("renew-c");
  a.lock();
  b.lock();
  c.lock();
  auto confirmed_all = [&] {
    for (auto& r : recorded.renewals) {
      if (r.phase == renewal_phase::confirmed && r.count == 3 && r.renewed == 3) return true;
    }
    return false;
  };
  ASSERT_TRUE(recorded.wait_until(confirmed_all));
  {
    std::lock_guard<std::mutex> guard(recorded.mutex);
    auto& first = recorded.renewals.front();
    EXPECT_EQ(first.phase, renewal_phase::sent);
    EXPECT_EQ(first.node, node());
    for (auto& r : recorded.renewals) {
      if (r.phase != renewal_phase::confirmed) continue;
      EXPECT_EQ(r.node, node());
      EXPECT_GT(r.latency.count(), 0);
      EXPECT_FALSE(r.error);
    }
  }

  probe.command({"DEL", "renew-b"});
  ASSERT_TRUE(recorded.wait_until([&] { return !recorded.lost.empty(); }));
  {
    std::lock_guard<std::mutex> guard(recorded.mutex);
    auto& lost = recorded.lost[0];
    EXPECT_EQ(lost.name, "renew-b");
    EXPECT_EQ(lost.kind, lock_kind::lock);
    EXPECT_EQ(lost.owner, current_thread_id());
    EXPECT_EQ(lost.cause, errc::lease_expired);
    EXPECT_NE(lost.message.find("renew-b"), std::string::npos);
    bool told_gone = false;
    for (auto& r : recorded.renewals) told_gone |= r.phase == renewal_phase::confirmed && r.gone == 1;
    EXPECT_TRUE(told_gone);
  }
  a.unlock();
  c.unlock();
}

TEST_F(Observer, ConnectionsReportUpDownFailedAttemptsAndReconnects) {
  Config config = observed_config();
  config.lock_watchdog_timeout = 300ms;
  Client client{config};
  auto count = [&](connection_role role, connection_state state, bool reconnect) {
    int n = 0;
    for (auto& link : recorded.links) n += link.role == role && link.state == state && link.reconnect == reconnect;
    return n;
  };
  auto both = [&](connection_state state, bool reconnect) {
    return count(connection_role::command, state, reconnect) >= 1 &&
           count(connection_role::subscriber, state, reconnect) >= 1;
  };
  ASSERT_TRUE(recorded.wait_until([&] { return both(connection_state::up, false); }));
  Lock lock = client.get_lock("across-restart");
  lock.lock();  // the watchdog renews it; its renewal fails while the server is away

  server.kill();
  ASSERT_TRUE(recorded.wait_until([&] {
    bool renewal_failed = false;
    for (auto& r : recorded.renewals) renewal_failed |= r.phase == renewal_phase::failed;
    return both(connection_state::down, false) && both(connection_state::connect_failed, false) && renewal_failed;
  }));
  {
    std::lock_guard<std::mutex> guard(recorded.mutex);
    for (auto& link : recorded.links) {
      EXPECT_EQ(link.node, node());
      if (link.state == connection_state::down) {
        EXPECT_EQ(link.error, errc::connection_lost);
        EXPECT_FALSE(link.detail.empty());
      }
      if (link.state == connection_state::connect_failed) {
        // Refused, or (an attempt that raced the kill) reset during set-up.
        EXPECT_TRUE(link.error == errc::connection_refused || link.error == errc::connection_lost) << link.detail;
        EXPECT_NE(link.detail.find("(E"), std::string::npos) << link.detail;  // "connection refused (ECONNREFUSED)"
        EXPECT_GT(link.retry_in.count(), 0);
      }
    }
    for (auto& r : recorded.renewals) {
      if (r.phase == renewal_phase::failed) {
        EXPECT_TRUE(r.error) << "a failed renewal says why";
      }
    }
  }

  server.start();
  ASSERT_TRUE(recorded.wait_until([&] { return both(connection_state::up, true); }));
}

TEST_F(Observer, AHookThatThrowsIsLoggedAndTheLockStillWorks) {
  Config config = fast_config(server);
  auto logged = std::make_shared<std::vector<std::string>>();
  auto logged_mutex = std::make_shared<std::mutex>();
  config.logger = [logged, logged_mutex](log_level level, std::string_view message) {
    std::lock_guard<std::mutex> guard(*logged_mutex);
    if (level == log_level::error) logged->emplace_back(message);
  };
  config.observer.on_acquire = [](const AcquireEvent&) { throw std::runtime_error("hook boom"); };
  Client client{config};
  Lock lock = client.get_lock("throwing-hook");
  lock.lock();
  EXPECT_TRUE(lock.is_held());
  lock.unlock();
  std::lock_guard<std::mutex> guard(*logged_mutex);
  ASSERT_EQ(logged->size(), 1u);
  EXPECT_NE(logged->front().find("on_acquire threw"), std::string::npos) << logged->front();
  EXPECT_NE(logged->front().find("hook boom"), std::string::npos) << logged->front();
}

}  // namespace
}  // namespace warden::test
