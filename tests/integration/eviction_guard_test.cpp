// Config::eviction_guard against real servers: each maxmemory-policy is
// found and said once (warn) or refuses acquires (refuse) with the typed
// error; noeviction and maxmemory 0 are safe; a user whose ACL denies both
// reads is said once and locks work; a policy changed at run time is noticed
// within the health check, both ways; every master of a cluster is watched;
// and an eviction that really happens reaches the hold's lost-lock listeners.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

const std::vector<std::string> evicting_policies = {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
                                                    "allkeys-lru",  "allkeys-lfu",  "allkeys-random"};

// What Observer::on_eviction told, copied.
struct Finding {
  std::string node;
  eviction_finding finding;
  std::string policy;
  unsigned long long maxmemory;
  bool refusing;
  std::string detail;
};

class Findings {
 public:
  void watch(Config& config) {
    config.observer.on_eviction = [this](const EvictionEvent& event) {
      std::lock_guard<std::mutex> guard(mutex_);
      seen_.push_back({std::string(event.node), event.finding, std::string(event.policy), event.maxmemory,
                       event.refusing, std::string(event.detail)});
      cv_.notify_all();
    };
  }
  std::vector<Finding> all() {
    std::lock_guard<std::mutex> guard(mutex_);
    return seen_;
  }
  // Waits until `n` findings have been told.
  bool wait_for_count(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> guard(mutex_);
    return cv_.wait_for(guard, timeout, [&] { return seen_.size() >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Finding> seen_;
};

class EvictionGuardTest : public ::testing::Test {
 protected:
  void set_memory(const std::string& maxmemory, const std::string& policy) {
    ASSERT_FALSE(probe.command({"CONFIG", "SET", "maxmemory", maxmemory}).is_error());
    ASSERT_FALSE(probe.command({"CONFIG", "SET", "maxmemory-policy", policy}).is_error());
  }
  Config config(eviction_guard_mode mode) {
    Config out = fast_config(server);
    out.eviction_guard = mode;
    findings.watch(out);
    log.watch(out);
    return out;
  }

  RedisServer server;
  RedisProbe probe{server};
  Findings findings;
  Log log;
};

TEST_F(EvictionGuardTest, EachEvictingPolicyIsSaidOnceAndLocksWorkInWarnMode) {
  for (const auto& policy : evicting_policies) {
    SCOPED_TRACE(policy);
    set_memory("100mb", policy);
    Findings seen;
    Config cfg = config(eviction_guard_mode::warn);
    seen.watch(cfg);
    Client client{cfg};
    // The read is part of the connection's set-up: in by the time it is up.
    client.wait_until_connected(5s);
    auto found = seen.all();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].finding, eviction_finding::evictable);
    EXPECT_EQ(found[0].policy, policy);
    EXPECT_EQ(found[0].maxmemory, 100ull * 1024 * 1024);
    EXPECT_FALSE(found[0].refusing);
    EXPECT_EQ(found[0].node, server.host() + ":" + std::to_string(server.port()));
    auto lock = client.get_lock("evict:warn");
    lock.lock();
    EXPECT_TRUE(lock.is_held());
    lock.unlock();
    EXPECT_EQ(seen.all().size(), 1u);
  }
  EXPECT_TRUE(log.contains("may evict lock keys"));
  EXPECT_TRUE(log.contains("Config::eviction_guard is warn"));
}

TEST_F(EvictionGuardTest, EachEvictingPolicyRefusesAcquiresWithTheTypedErrorInRefuseMode) {
  for (const auto& policy : evicting_policies) {
    SCOPED_TRACE(policy);
    set_memory("100mb", policy);
    Findings seen;
    Config cfg = config(eviction_guard_mode::refuse);
    seen.watch(cfg);
    Client client{cfg};
    client.wait_until_connected(5s);
    ASSERT_EQ(seen.all().size(), 1u);
    EXPECT_TRUE(seen.all()[0].refusing);

    auto scripts_before = probe.script_calls();
    auto expect_refused = [&](auto&& call, const char* what) {
      try {
        call();
        ADD_FAILURE() << what << " was not refused";
      } catch (const Error& error) {
        EXPECT_EQ(error.code(), make_error_code(errc::eviction_possible)) << what << ": " << error.what();
        std::string message = error.what();
        EXPECT_NE(message.find("Config::eviction_guard"), std::string::npos) << message;
        EXPECT_NE(message.find(policy), std::string::npos) << message;
      }
    };
    auto lock = client.get_lock("evict:refuse");
    expect_refused([&] { lock.lock(); }, "lock()");
    expect_refused([&] { (void)lock.try_lock_for(200ms); }, "try_lock_for()");
    expect_refused([&] { lock.lock_async(1).get(); }, "lock_async()");
    auto fenced = client.get_fenced_lock("evict:fenced");
    expect_refused([&] { (void)fenced.lock_and_get_token(); }, "lock_and_get_token()");
    auto rw = client.get_read_write_lock("evict:rw");
    expect_refused([&] { rw.lock(); }, "write lock()");
    expect_refused([&] { rw.lock_shared(); }, "read lock()");
    // Refused unsent: no script ran.
    EXPECT_EQ(probe.script_calls(), scripts_before);
    // A fair waiter that fails leaves the queue it may have joined (a
    // give-up script, not an acquire): that one may run.
    auto fair = client.get_fair_lock("evict:fair");
    expect_refused([&] { fair.lock(); }, "fair lock()");
    // Nothing was written.
    EXPECT_TRUE(probe.keys("*evict*").empty());
  }
}

TEST_F(EvictionGuardTest, NoEvictionAndNoLimitAreSafe) {
  for (auto [maxmemory, policy] : std::vector<std::pair<std::string, std::string>>{
           {"100mb", "noeviction"}, {"0", "allkeys-lru"}, {"0", "volatile-ttl"}, {"0", "noeviction"}}) {
    SCOPED_TRACE(maxmemory + " " + policy);
    set_memory(maxmemory, policy);
    Findings seen;
    Config cfg = config(eviction_guard_mode::refuse);
    seen.watch(cfg);
    Client client{cfg};
    client.wait_until_connected(5s);
    auto lock = client.get_lock("evict:safe");
    lock.lock();
    lock.unlock();
    EXPECT_TRUE(seen.all().empty());
  }
}

// The documented least-privilege line (docs/production.md) has +info: the
// read is INFO memory, and nothing is denied. Without +info and without
// CONFIG, both reads are denied: that is said once, across reconnects, and
// locks work (the guard cannot refuse what it cannot see).
TEST_F(EvictionGuardTest, AUserDeniedBothReadsIsSaidOnceAndLocksWork) {
  set_memory("100mb", "allkeys-lru");
  // +@all -@dangerous: what many deployments give an application; INFO
  // and CONFIG are both @dangerous.
  ASSERT_FALSE(
      probe.command({"ACL", "SETUSER", "blind", "on", ">secret", "~*", "&*", "+@all", "-@dangerous"}).is_error());
  probe.command({"ACL", "LOG", "RESET"});
  Config cfg = config(eviction_guard_mode::refuse);
  cfg.username = "blind";
  cfg.password = "secret";
  Client client{cfg};
  client.wait_until_connected(5s);
  auto found = findings.all();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].finding, eviction_finding::unreadable);
  EXPECT_NE(found[0].detail.find("NOPERM"), std::string::npos) << found[0].detail;
  EXPECT_NE(found[0].detail.find("INFO"), std::string::npos) << found[0].detail;
  EXPECT_NE(found[0].detail.find("CONFIG"), std::string::npos) << found[0].detail;
  EXPECT_TRUE(log.contains("cannot tell whether the server may evict lock keys"));

  auto lock = client.get_lock("evict:blind");
  lock.lock();
  lock.unlock();
  // A reconnect reads again (denied again) and says nothing more.
  probe.command({"CLIENT", "KILL", "USER", "blind"});
  lock.lock();
  lock.unlock();
  EXPECT_EQ(findings.all().size(), 1u);
}

TEST_F(EvictionGuardTest, AUserAllowedOnlyOneOfTheReadsIsRead) {
  set_memory("100mb", "volatile-lru");
  for (const char* allowed : {"+info", "+config|get"}) {
    SCOPED_TRACE(allowed);
    ASSERT_FALSE(probe
                     .command({"ACL", "SETUSER", "half", "reset", "on", ">secret", "-@all", "+evalsha", "+eval",
                               "+ping", "+client|setname", allowed, "~*", "&*"})
                     .is_error());
    Findings seen;
    Config cfg = config(eviction_guard_mode::warn);
    seen.watch(cfg);
    cfg.username = "half";
    cfg.password = "secret";
    Client client{cfg};
    client.wait_until_connected(5s);
    auto found = seen.all();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].finding, eviction_finding::evictable);
    EXPECT_EQ(found[0].policy, "volatile-lru");
  }
}

TEST_F(EvictionGuardTest, APolicyChangedAtRunTimeIsNoticedWithinTheHealthCheck) {
  set_memory("100mb", "noeviction");
  Config cfg = config(eviction_guard_mode::refuse);
  cfg.health_check_interval = 200ms;
  Client client{cfg};
  client.wait_until_connected(5s);
  auto lock = client.get_lock("evict:runtime");
  lock.lock();
  lock.unlock();
  ASSERT_TRUE(findings.all().empty());

  set_memory("100mb", "allkeys-lru");
  auto changed = std::chrono::steady_clock::now();
  ASSERT_TRUE(findings.wait_for_count(1, 5s));
  // One interval to the next read, and its round trip: within two, with room
  // for a sanitizer build on a loaded machine (a read only at reconnect, or
  // never, would miss it by seconds).
  EXPECT_LT(elapsed_ms(changed), 2 * 200 + 800);
  EXPECT_EQ(findings.all()[0].finding, eviction_finding::evictable);
  EXPECT_TRUE(findings.all()[0].refusing);
  try {
    lock.lock();
    ADD_FAILURE() << "not refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), make_error_code(errc::eviction_possible));
  }

  set_memory("100mb", "noeviction");
  changed = std::chrono::steady_clock::now();
  ASSERT_TRUE(findings.wait_for_count(2, 5s));
  EXPECT_LT(elapsed_ms(changed), 2 * 200 + 800);
  EXPECT_EQ(findings.all()[1].finding, eviction_finding::safe);
  lock.lock();
  lock.unlock();
}

TEST_F(EvictionGuardTest, OffReadsNothing) {
  set_memory("100mb", "allkeys-lru");
  auto info_before = probe.command_calls("info");
  Config cfg = config(eviction_guard_mode::off);
  cfg.health_check_interval = 50ms;
  Client client{cfg};
  client.wait_until_connected(5s);
  auto lock = client.get_lock("evict:off");
  lock.lock();
  std::this_thread::sleep_for(200ms);  // several intervals in which a read would have happened
  lock.unlock();
  EXPECT_TRUE(findings.all().empty());
  // The probe's own INFO commandstats calls are the only ones.
  EXPECT_EQ(probe.command_calls("info"), info_before + 1);
  EXPECT_EQ(probe.command_calls("config|get"), 0);
}

// A hold whose key the server evicts is reported lost by the watchdog's next
// renewal, as any hold whose key vanished: the guard (warn, or off) does
// not stand in the way of that.
TEST_F(EvictionGuardTest, AnEvictionThatHappensReachesTheLostListeners) {
  for (auto mode : {eviction_guard_mode::warn, eviction_guard_mode::off}) {
    SCOPED_TRACE(static_cast<int>(mode));
    probe.command({"FLUSHALL"});
    probe.command({"CONFIG", "RESETSTAT"});
    set_memory("0", "volatile-lru");
    auto used = probe.command({"INFO", "memory"}).str;
    auto at = used.find("used_memory:");
    ASSERT_NE(at, std::string::npos);
    auto baseline = std::stoull(used.substr(at + 12));
    Config cfg = config(mode);
    cfg.lock_watchdog_timeout = 1500ms;  // renewed every 500 ms
    Client client{cfg};
    client.wait_until_connected(5s);
    auto lock = client.get_lock("evict:victim");
    lock.lock();
    std::promise<LockLost> lost;
    std::atomic<bool> told{false};
    auto subscription = lock.subscribe_lost([&](const LockLost& what) {
      if (!told.exchange(true)) lost.set_value(what);
    });
    auto lost_future = lost.get_future();
    // A limit 2 MB above what the server uses now, filled past it with other
    // volatile keys until the lock's key is among those evicted.
    set_memory(std::to_string(baseline + 2 * 1024 * 1024), "volatile-lru");
    std::string value(8 * 1024, 'x');
    auto until = std::chrono::steady_clock::now() + 30s;
    int i = 0;
    while (lost_future.wait_for(0s) != std::future_status::ready && std::chrono::steady_clock::now() < until) {
      auto reply = probe.command({"SET", "evict:filler:" + std::to_string(i++), value, "PX", "3600000"});
      ASSERT_FALSE(reply.is_error()) << reply.str;
    }
    ASSERT_EQ(lost_future.wait_for(0s), std::future_status::ready) << "no eviction reported after " << i << " keys";
    auto what = lost_future.get();
    EXPECT_EQ(what.cause, make_error_code(errc::lease_expired)) << what.message;
    EXPECT_EQ(what.lock_name, "evict:victim");
    auto stats = probe.command({"INFO", "stats"}).str;
    EXPECT_EQ(stats.find("evicted_keys:0\r"), std::string::npos) << "nothing was evicted";
    EXPECT_FALSE(lock.is_held());
    set_memory("0", "noeviction");
    if (mode == eviction_guard_mode::warn) {
      ASSERT_TRUE(findings.wait_for_count(1, 5s));
      EXPECT_EQ(findings.all().back().finding, eviction_finding::evictable);
    }
  }
}

// Every master of a cluster is read: the one that may evict refuses the
// acquires routed to it, the others take theirs.
TEST(EvictionGuardCluster, EachMasterIsWatched) {
  RedisCluster cluster({3, 0, {}});
  {
    RedisProbe risky(cluster.node(1));
    ASSERT_FALSE(risky.command({"CONFIG", "SET", "maxmemory", "100mb"}).is_error());
    ASSERT_FALSE(risky.command({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"}).is_error());
  }
  Config cfg = cluster_config(cluster);
  cfg.eviction_guard = eviction_guard_mode::refuse;
  cfg.replica_sync.mode = replica_sync_mode::off;  // masters without replicas
  Findings findings;
  findings.watch(cfg);
  Client client{cfg};
  client.wait_until_connected(10s);
  auto safe = client.get_lock(name_on(cluster, 0, "evict:c0:"));
  safe.lock();
  safe.unlock();
  auto risky = client.get_lock(name_on(cluster, 1, "evict:c1:"));
  try {
    risky.lock();
    ADD_FAILURE() << "not refused";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), make_error_code(errc::eviction_possible)) << error.what();
  }
  auto fair = client.get_fair_lock(name_on(cluster, 2, "evict:c2:"));
  fair.lock();
  fair.unlock();
  auto found = findings.all();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].node, "127.0.0.1:" + std::to_string(cluster.node(1).port()));
  EXPECT_EQ(found[0].policy, "volatile-ttl");
}

}  // namespace
}  // namespace warden::test
