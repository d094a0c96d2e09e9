// The everyday hand-off: one party holds a lock, another waits for it, and
// the holder's unlock() lets the waiter in at once. Every kind, with the
// waiter on the holder's own Client (another thread of it) or on another
// Client, waiting in each form a caller can use. The bound (250 ms from the
// START of unlock() to the waiter holding) is far below any timer warden
// keeps (command_timeout 1 s here, the health check 500 ms, leases 30 s): a
// hand-off that waits for a timer fails it, a prompt one passes with two
// orders of magnitude to spare. It is a liveness check, not a speed claim.
#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "lock_by_kind.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using clock_type = std::chrono::steady_clock;
constexpr auto bound = 250ms;

enum class kind { lock, fair, fenced, spin, write_write, write_read, read_write, multi, red };
enum class form { lock, try_lock_for, future, callback };

const char* name_of(kind k) {
  switch (k) {
    case kind::lock:
      return "Lock";
    case kind::fair:
      return "FairLock";
    case kind::fenced:
      return "FencedLock";
    case kind::spin:
      return "SpinLock";
    case kind::write_write:
      return "WriteThenWrite";
    case kind::write_read:
      return "WriteThenRead";
    case kind::read_write:
      return "ReadThenWrite";
    case kind::multi:
      return "MultiLock";
    case kind::red:
      return "RedLock";
  }
  return "?";
}

const char* name_of(form f) {
  switch (f) {
    case form::lock:
      return "Lock";
    case form::try_lock_for:
      return "TryLockFor";
    case form::future:
      return "Future";
    case form::callback:
      return "Callback";
  }
  return "?";
}

// One side of a hand-off, whatever its kind: the calls the test makes, bound
// to a handle.
struct Side {
  std::function<void()> lock;
  std::function<bool(std::chrono::milliseconds)> try_lock_for;
  std::function<AcquireFuture<void>(thread_id)> lock_future;
  std::function<void(thread_id, completion<void>)> lock_callback;
  std::function<void()> unlock;
  std::function<void(thread_id)> unlock_owner;
};

template <class Handle>
Side side_of(Handle handle) {
  auto h = std::make_shared<Handle>(std::move(handle));
  Side side;
  side.lock = [h] { h->lock(); };
  side.try_lock_for = [h](std::chrono::milliseconds wait) { return h->try_lock_for(wait); };
  side.lock_future = [h](thread_id owner) { return h->lock_async(owner); };
  side.lock_callback = [h](thread_id owner, completion<void> done) { h->lock_async(owner, {}, std::move(done)); };
  side.unlock = [h] { h->unlock(); };
  side.unlock_owner = [h](thread_id owner) { h->unlock_async(owner).get(); };
  return side;
}

// Three servers for the whole suite: RedLock's members live on all three,
// every other kind on the first. Each test uses names of its own.
class EverydayHandoff : public ::testing::TestWithParam<std::tuple<kind, bool, form>> {
 protected:
  static void SetUpTestSuite() {
    for (auto& server : servers_) server = std::make_unique<RedisServer>();
  }
  static void TearDownTestSuite() {
    for (auto& server : servers_) server.reset();
  }

  // The clients of one party: one per server for RedLock, else one.
  using Clients = std::vector<std::shared_ptr<Client>>;
  static Clients clients(kind k) {
    Clients out;
    for (auto& server : servers_) {
      out.push_back(std::make_shared<Client>(fast_config(*server)));
      if (k != kind::red) break;
    }
    return out;
  }

  static Side side_for(kind k, const Clients& clients, const std::string& name, bool holder) {
    Client& client = *clients[0];
    switch (k) {
      case kind::lock:
        return side_of(client.get_lock(name));
      case kind::fair:
        return side_of(client.get_fair_lock(name));
      case kind::fenced:
        return side_of(client.get_fenced_lock(name));
      case kind::spin:
        return side_of(client.get_spin_lock(name));
      case kind::write_write:
        return side_of(client.get_read_write_lock(name).write_lock());
      case kind::write_read: {
        auto rw = client.get_read_write_lock(name);
        return side_of(holder ? rw.write_lock() : rw.read_lock());
      }
      case kind::read_write: {
        auto rw = client.get_read_write_lock(name);
        return side_of(holder ? rw.read_lock() : rw.write_lock());
      }
      case kind::multi:
        return side_of(MultiLock{client.get_lock(name + ":a"), client.get_fair_lock(name + ":b"),
                                 client.get_read_write_lock(name + ":c").write_lock()});
      case kind::red:
        return side_of(RedLock{clients[0]->get_lock(name), clients[1]->get_lock(name), clients[2]->get_lock(name)});
    }
    throw std::logic_error("unknown kind");
  }

  // Acquire scripts the servers ran, all three together.
  static long long script_calls() {
    long long calls = 0;
    for (auto& server : servers_) calls += RedisProbe(*server).script_calls();
    return calls;
  }

  static std::unique_ptr<RedisServer> servers_[3];
};

std::unique_ptr<RedisServer> EverydayHandoff::servers_[3];

TEST_P(EverydayHandoff, UnlockReturnsAndTheWaiterHoldsWithin250ms) {
  auto [k, same_client, f] = GetParam();
  std::string name = std::string("everyday:") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  Clients holder_clients = clients(k);
  Clients waiter_clients = same_client ? holder_clients : clients(k);
  Side holder = side_for(k, holder_clients, name, true);
  Side waiter = side_for(k, waiter_clients, name, false);

  holder.lock();
  auto before = script_calls();

  // The waiter, on a thread of its own, in the form under test. It reports
  // when it holds the lock, then lets it go.
  std::promise<clock_type::time_point> held;
  auto held_at = held.get_future();
  Event may_release;
  std::thread waiting([&, f = f] {
    try {
      thread_id owner = new_owner_id();
      switch (f) {
        case form::lock:
          waiter.lock();
          held.set_value(clock_type::now());
          may_release.wait_for(10s);
          waiter.unlock();
          return;
        case form::try_lock_for:
          if (!waiter.try_lock_for(10s)) throw std::runtime_error("try_lock_for(10s) gave up");
          held.set_value(clock_type::now());
          may_release.wait_for(10s);
          waiter.unlock();
          return;
        case form::future: {
          auto future = waiter.lock_future(owner);
          future.get();
          held.set_value(clock_type::now());
          may_release.wait_for(10s);
          waiter.unlock_owner(owner);
          return;
        }
        case form::callback: {
          Event called;
          std::error_code error;
          waiter.lock_callback(owner, [&](std::error_code e) {
            error = e;
            held.set_value(clock_type::now());
            called.set();
          });
          if (!called.wait_for(10s)) throw std::runtime_error("the callback was never called");
          if (error) throw std::system_error(error);
          may_release.wait_for(10s);
          waiter.unlock_owner(owner);
          return;
        }
      }
    } catch (...) {
      try {
        held.set_exception(std::current_exception());
      } catch (const std::future_error&) {
        // the callback already set a value
      }
    }
  });

  // The waiter has tried at least once and found the lock taken: it waits.
  // (Its first try and, for the kinds that subscribe, the re-try after
  // subscribing; a SpinLock polls.)
  EXPECT_TRUE(eventually([&] { return script_calls() >= before + 2; }));
  EXPECT_EQ(held_at.wait_for(0s), std::future_status::timeout) << "the waiter got a lock someone holds";

  auto start = clock_type::now();
  holder.unlock();
  auto unlocked = clock_type::now();
  bool in_time = held_at.wait_for(5s) == std::future_status::ready;
  may_release.set();
  waiting.join();
  ASSERT_TRUE(in_time) << "the waiter never got the lock";
  auto got = held_at.get();
  EXPECT_LT(unlocked - start, bound) << "unlock() took "
                                     << std::chrono::duration_cast<std::chrono::milliseconds>(unlocked - start).count()
                                     << " ms";
  EXPECT_LT(got - start, bound) << "the waiter held the lock "
                                << std::chrono::duration_cast<std::chrono::milliseconds>(got - start).count()
                                << " ms after unlock() began";
}

std::string param_name(const ::testing::TestParamInfo<EverydayHandoff::ParamType>& info) {
  auto [k, same_client, f] = info.param;
  return std::string(name_of(k)) + (same_client ? "_OneClient_" : "_TwoClients_") + name_of(f);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, EverydayHandoff,
    ::testing::Combine(::testing::Values(kind::lock, kind::fair, kind::fenced, kind::spin, kind::write_write,
                                         kind::write_read, kind::read_write, kind::multi, kind::red),
                       ::testing::Bool(),
                       ::testing::Values(form::lock, form::try_lock_for, form::future, form::callback)),
    param_name);

}  // namespace
}  // namespace warden::test

namespace warden::test {
namespace {

// While one thread of a Client waits for a lock, every other call of that
// Client (a query, a try, a callback-form call, another lock's acquire and
// release) is answered at once: none waits behind the waiter for a timer.
TEST(EverydayHandoffOtherCalls, CallsOfOtherThreadsAreAnsweredWhileAThreadWaits) {
  RedisServer server;
  Client client{fast_config(server)};
  RedisProbe probe(server);
  Lock held = client.get_lock("everyday:calls");
  held.lock();
  auto before = probe.script_calls();
  std::thread waiting([&] {
    Lock lock = client.get_lock("everyday:calls");
    lock.lock();
    lock.unlock();
  });
  ASSERT_TRUE(eventually([&] { return probe.script_calls() >= before + 2; }));

  auto timed = [](const char* what, const std::function<void()>& call) {
    auto start = clock_type::now();
    call();
    auto took = clock_type::now() - start;
    EXPECT_LT(took, bound) << what << " took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                           << " ms";
  };
  std::thread other([&] {
    Lock lock = client.get_lock("everyday:calls");
    timed("is_locked()", [&] { EXPECT_TRUE(lock.is_locked()); });
    timed("remain_time_to_live()", [&] { EXPECT_TRUE(lock.remain_time_to_live().has_value()); });
    timed("try_lock()", [&] { EXPECT_FALSE(lock.try_lock()); });
    timed("is_locked_async(callback)", [&] {
      Event answered;
      lock.is_locked_async([&](std::error_code, bool) { answered.set(); });
      EXPECT_TRUE(answered.wait_for(5s));
    });
    Lock another = client.get_lock("everyday:calls:another");
    timed("another lock's lock()", [&] { another.lock(); });
    timed("another lock's unlock()", [&] { another.unlock(); });
  });
  other.join();
  timed("unlock() with a waiter", [&] { held.unlock(); });
  waiting.join();
}

}  // namespace
}  // namespace warden::test

namespace warden::test {
namespace {

// The same hand-off with the other party in another process
// (warden-test-worker handoff), this process's side on one thread in lock().
// KIND of the holder and of the waiter.
struct ProcessPair {
  const char* holder;
  const char* waiter;
};

class EverydayHandoffAcrossProcesses : public ::testing::TestWithParam<std::tuple<ProcessPair, bool>> {};

clock_type::time_point time_in(RedisProbe& probe, const std::string& key) {
  auto value = probe.get(key);
  if (!value) throw std::runtime_error("the worker did not write " + key);
  return clock_type::time_point(std::chrono::nanoseconds(std::stoll(*value)));
}

long long ms_between(clock_type::time_point from, clock_type::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

TEST_P(EverydayHandoffAcrossProcesses, UnlockReturnsAndTheWaiterHoldsWithin250ms) {
  auto [pair, worker_holds] = GetParam();
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  const std::string name = "everyday:processes";
  const std::string key = "everyday:times";
  int exit_code = -1;
  if (!worker_holds) {
    Lock held = lock_by_kind(client, pair.holder, name);
    held.lock();
    auto before = probe.script_calls();
    ChildProcess worker(WARDEN_TEST_WORKER, {"handoff", server.url(), pair.waiter, name, "wait", key});
    ASSERT_TRUE(eventually([&] { return probe.script_calls() >= before + 2; }));
    auto start = clock_type::now();
    held.unlock();
    auto unlocked = clock_type::now();
    ASSERT_TRUE(worker.wait_for(10s, &exit_code));
    ASSERT_EQ(exit_code, 0);
    EXPECT_LT(unlocked - start, bound) << "unlock() took " << ms_between(start, unlocked) << " ms";
    auto got = time_in(probe, key + ":got");
    EXPECT_LT(got - start, bound) << "the worker held the lock " << ms_between(start, got)
                                  << " ms after unlock() began";
    return;
  }
  ChildProcess worker(WARDEN_TEST_WORKER, {"handoff", server.url(), pair.holder, name, "hold", key});
  ASSERT_TRUE(eventually([&] { return probe.exists(key + ":held"); }, 10s));
  auto before = probe.script_calls();
  std::promise<clock_type::time_point> held;
  auto held_at = held.get_future();
  std::thread waiting([&] {
    try {
      Lock lock = lock_by_kind(client, pair.waiter, name);
      lock.lock();
      held.set_value(clock_type::now());
      lock.unlock();
    } catch (...) {
      held.set_exception(std::current_exception());
    }
  });
  EXPECT_TRUE(eventually([&] { return probe.script_calls() >= before + 2; }));
  probe.command({"RPUSH", key + ":go", "1"});
  bool in_time = held_at.wait_for(10s) == std::future_status::ready;
  waiting.join();
  ASSERT_TRUE(in_time) << "the waiter never got the lock";
  auto got = held_at.get();
  ASSERT_TRUE(worker.wait_for(10s, &exit_code));
  ASSERT_EQ(exit_code, 0);
  auto start = time_in(probe, key + ":start");
  auto unlocked = time_in(probe, key + ":unlocked");
  EXPECT_LT(unlocked - start, bound) << "the worker's unlock() took " << ms_between(start, unlocked) << " ms";
  EXPECT_LT(got - start, bound) << "this process held the lock " << ms_between(start, got)
                                << " ms after the worker's unlock() began";
}

std::string process_param_name(const ::testing::TestParamInfo<EverydayHandoffAcrossProcesses::ParamType>& info) {
  auto [pair, worker_holds] = info.param;
  auto title = [](std::string kind) {
    kind[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(kind[0])));
    return kind;
  };
  return title(pair.holder) + "Then" + title(pair.waiter) + (worker_holds ? "_WorkerHolds" : "_WorkerWaits");
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, EverydayHandoffAcrossProcesses,
    ::testing::Combine(::testing::Values(ProcessPair{"lock", "lock"}, ProcessPair{"fair", "fair"},
                                         ProcessPair{"fenced", "fenced"}, ProcessPair{"spin", "spin"},
                                         ProcessPair{"write", "write"}, ProcessPair{"write", "read"},
                                         ProcessPair{"read", "write"}),
                       ::testing::Bool()),
    process_param_name);

}  // namespace
}  // namespace warden::test
