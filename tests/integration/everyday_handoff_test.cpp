// The everyday hand-off: one party holds a lock, another waits for it, and
// the holder's unlock() lets the waiter in at once. Every kind, with the
// waiter on the holder's own Client (another thread of it) or on another
// Client, waiting in each form a caller can use, on single servers, a Redis
// Cluster and the master of a Sentinel group. The bound (250 ms from the
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
#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
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

// The clients of one party: one, and for RedLock one per server.
using Clients = std::vector<std::shared_ptr<Client>>;

// The holder's or the waiter's handle of kind `k` on lock `name`: on the
// first client, a RedLock on all three (its members must be on different
// servers).
Side side_for(kind k, const Clients& clients, const std::string& name, bool holder) {
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

// The name of the running test, for lock names of its own.
std::string test_lock_name() {
  return std::string("everyday:") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
}

// The hand-off itself: `holder` holds, `waiter` waits on a thread of its own
// in form `f`; the holder's unlock() must return, and the waiter hold, within
// the bound from the start of unlock(). `script_calls` counts the scripts
// the servers ran (the waiter has tried once it rose by two).
void expect_prompt_handoff(Side& holder, Side& waiter, form f, const std::function<long long()>& script_calls) {
  holder.lock();
  auto before = script_calls();

  // The waiter, on a thread of its own, in the form under test. It reports
  // when it holds the lock, then lets it go.
  std::promise<clock_type::time_point> held;
  auto held_at = held.get_future();
  Event may_release;
  std::thread waiting([&] {
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

// A hand-off of kind `k` in form `f` between two parties whose clients
// `clients` makes (the waiter's are the holder's when `same_client`).
void expect_prompt_handoff_of(kind k, bool same_client, form f, const std::function<Clients()>& clients,
                              const std::function<long long()>& script_calls) {
  std::string name = test_lock_name();
  Clients holder_clients = clients();
  Clients waiter_clients = same_client ? holder_clients : clients();
  Side holder = side_for(k, holder_clients, name, true);
  Side waiter = side_for(k, waiter_clients, name, false);
  expect_prompt_handoff(holder, waiter, f, script_calls);
}

// Every kind, the waiter on the holder's Client or on another, every form.
auto every_handoff() {
  return ::testing::Combine(::testing::Values(kind::lock, kind::fair, kind::fenced, kind::spin, kind::write_write,
                                              kind::write_read, kind::read_write, kind::multi, kind::red),
                            ::testing::Bool(),
                            ::testing::Values(form::lock, form::try_lock_for, form::future, form::callback));
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

  static Clients clients(kind k) {
    Clients out;
    for (auto& server : servers_) {
      out.push_back(std::make_shared<Client>(fast_config(*server)));
      if (k != kind::red) break;
    }
    return out;
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
  expect_prompt_handoff_of(
      k, same_client, f, [k = k] { return clients(k); }, script_calls);
}

std::string param_name(const ::testing::TestParamInfo<EverydayHandoff::ParamType>& info) {
  auto [k, same_client, f] = info.param;
  return std::string(name_of(k)) + (same_client ? "_OneClient_" : "_TwoClients_") + name_of(f);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EverydayHandoff, every_handoff(), param_name);

// The same hand-offs on a Redis Cluster (three masters with a replica each;
// MultiLock's members fall on several masters) and on the master of a
// Sentinel group, with replica acknowledgement on (their default): their
// routing and their idle I/O thread (a lone caller reads its own answers
// there too) must not make a hand-off wait for a timer. Neither topology's
// own timers can rescue one within the bound: the slot table is read every
// 5 s, Sentinel is polled every 5 s here. A RedLock's first member is on
// the topology, the other two on single servers of their own (its members
// must be on different servers).
class EverydayHandoffOnTopology : public ::testing::TestWithParam<std::tuple<kind, bool, form>> {
 protected:
  static void start_spares() {
    for (auto& server : spares_) server = std::make_unique<RedisServer>();
  }
  static void stop_spares() {
    for (auto& server : spares_) server.reset();
  }
  // A client of the topology (`config`), and for RedLock one of each spare.
  static Clients clients_of(kind k, const Config& config) {
    Clients out{std::make_shared<Client>(config)};
    if (k == kind::red) {
      for (auto& server : spares_) out.push_back(std::make_shared<Client>(fast_config(*server)));
    }
    return out;
  }
  static long long spare_script_calls() {
    long long calls = 0;
    for (auto& server : spares_) calls += RedisProbe(*server).script_calls();
    return calls;
  }

  inline static std::unique_ptr<RedisServer> spares_[2];
};

class EverydayHandoffCluster : public EverydayHandoffOnTopology {
 protected:
  static void SetUpTestSuite() {
    cluster_ = std::make_unique<RedisCluster>();
    start_spares();
  }
  static void TearDownTestSuite() {
    cluster_.reset();
    stop_spares();
  }

  // Scripts the masters ran (the first three nodes; no node changes role in
  // this suite), and the spares.
  static long long script_calls() {
    long long calls = spare_script_calls();
    for (std::size_t i = 0; i < 3; ++i) calls += RedisProbe(cluster_->first_master(i)).script_calls();
    return calls;
  }

  inline static std::unique_ptr<RedisCluster> cluster_;
};

TEST_P(EverydayHandoffCluster, UnlockReturnsAndTheWaiterHoldsWithin250ms) {
  auto [k, same_client, f] = GetParam();
  auto clients = [k = k] { return clients_of(k, fast_config(Config::from_url(cluster_->url()))); };
  expect_prompt_handoff_of(k, same_client, f, clients, script_calls);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EverydayHandoffCluster, every_handoff(), param_name);

class EverydayHandoffSentinel : public EverydayHandoffOnTopology {
 protected:
  static void SetUpTestSuite() {
    group_ = std::make_unique<RedisSentinelGroup>();
    start_spares();
  }
  static void TearDownTestSuite() {
    group_.reset();
    stop_spares();
  }

  static Config config() {
    Config config = fast_sentinel_config(group_->url());
    config.sentinel.poll_interval = 5s;
    return config;
  }

  // Scripts the master ran (no failover in this suite), and the spares.
  static long long script_calls() { return RedisProbe(group_->node(0)).script_calls() + spare_script_calls(); }

  inline static std::unique_ptr<RedisSentinelGroup> group_;
};

TEST_P(EverydayHandoffSentinel, UnlockReturnsAndTheWaiterHoldsWithin250ms) {
  auto [k, same_client, f] = GetParam();
  expect_prompt_handoff_of(
      k, same_client, f, [k = k] { return clients_of(k, config()); }, script_calls);
}

INSTANTIATE_TEST_SUITE_P(Kinds, EverydayHandoffSentinel, every_handoff(), param_name);

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
