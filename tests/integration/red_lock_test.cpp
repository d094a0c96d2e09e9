// RedLock over 3, 4 and 5 independent redis-server processes.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>

#include "api/access.hpp"
#include "client/client_core.hpp"
#include "lock/lock_core.hpp"
#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

// N independent servers, each with a probe.
struct Nodes {
  explicit Nodes(int n) {
    for (int i = 0; i < n; ++i) {
      servers.push_back(std::make_unique<RedisServer>());
      probes.push_back(std::make_unique<RedisProbe>(*servers.back()));
    }
  }
  RedisServer& server(int i) { return *servers[static_cast<std::size_t>(i)]; }
  RedisProbe& probe(int i) { return *probes[static_cast<std::size_t>(i)]; }
  std::size_t size() const { return servers.size(); }
  std::string port(int i) { return std::to_string(server(i).port()); }
  // How many nodes have `key`.
  int with_key(const std::string& key) {
    int count = 0;
    for (auto& probe : probes) count += probe->exists(key) ? 1 : 0;
    return count;
  }

  std::vector<std::unique_ptr<RedisServer>> servers;
  std::vector<std::unique_ptr<RedisProbe>> probes;
};

// One process's view: a Client per node.
struct Side {
  explicit Side(Nodes& nodes, const std::function<void(Config&)>& tweak = {}) {
    for (auto& server : nodes.servers) {
      Config config = fast_config(*server);
      if (tweak) tweak(config);
      clients.push_back(std::make_unique<Client>(config));
    }
  }
  RedLock red_lock(const std::string& name) {
    std::vector<Lock> members;
    for (auto& client : clients) members.push_back(client->get_lock(name));
    return RedLock(members);
  }
  Lock plain(int node, const std::string& name) { return clients[static_cast<std::size_t>(node)]->get_lock(name); }
  std::string field(int node, thread_id owner = current_thread_id()) {
    return clients[static_cast<std::size_t>(node)]->id() + ":" + std::to_string(owner);
  }

  std::vector<std::unique_ptr<Client>> clients;
};

void short_watchdog(Config& config) { config.lock_watchdog_timeout = 300ms; }

// Stops the I/O thread of `member`'s Client until resume(), as a stopped
// process (SIGSTOP) would be: its timers, renewals and replies wait, while the
// servers go on expiring keys.
class Stall {
 public:
  explicit Stall(const Lock& member) {
    auto started = std::make_shared<std::promise<void>>();
    auto running = started->get_future();
    warden::detail::access::core(member)->client().post([started, gate = go_.get_future().share()] {
      started->set_value();
      gate.wait();
    });
    running.wait();
  }
  ~Stall() { resume(); }
  Stall(const Stall&) = delete;
  Stall& operator=(const Stall&) = delete;
  void resume() {
    if (resumed_) return;
    resumed_ = true;
    go_.set_value();
  }

 private:
  std::promise<void> go_;
  bool resumed_ = false;
};

// Stalls every member's Client, each on its own thread as in one process.
std::vector<std::unique_ptr<Stall>> stall_all(const RedLock& lock) {
  std::vector<std::unique_ptr<Stall>> stalls;
  for (auto& member : lock.members()) stalls.push_back(std::make_unique<Stall>(member));
  return stalls;
}

bool every_member_valid(const RedLock& lock) {
  for (auto& member : lock.members()) {
    if (member.valid_until() <= std::chrono::steady_clock::now()) return false;
  }
  return true;
}

// Runs `call`, which must throw warden::Error; returns it.
template <class Call>
Error expect_error(Call&& call) {
  try {
    call();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "expected a warden::Error";
  return Error(errc::invalid_argument, "none thrown");
}

TEST(RedLock, AllNodesUpExcludesOtherClientsAndUnlockRemovesEveryKey) {
  Nodes nodes(3);
  Side mine(nodes), theirs(nodes);
  RedLock lock = mine.red_lock("res");
  RedLock rival = theirs.red_lock("res");
  EXPECT_EQ(lock.quorum(), 2u);
  lock.lock();
  // The call returns once a majority holds it; the last node follows.
  ASSERT_TRUE(eventually([&] { return nodes.with_key("res") == 3; }));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(nodes.probe(i).hgetall("res"), (std::map<std::string, std::string>{{mine.field(i), "1"}})) << i;
  }
  EXPECT_TRUE(rival.is_locked());
  EXPECT_FALSE(rival.try_lock());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(rival.try_lock_for(300ms));  // only other owners in the way: false, not an error
  EXPECT_GE(elapsed_ms(start), 300);
  EXPECT_EQ(nodes.with_key("res"), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(nodes.probe(i).hgetall("res").count(theirs.field(i)), 0u);

  lock.unlock();
  EXPECT_EQ(nodes.with_key("res"), 0);
  EXPECT_FALSE(rival.is_locked());
  EXPECT_TRUE(rival.try_lock());
  rival.unlock();
  EXPECT_EQ(nodes.with_key("res"), 0);
}

TEST(RedLock, IsReentrant) {
  Nodes nodes(3);
  Side mine(nodes);
  RedLock lock = mine.red_lock("again");
  lock.lock();
  lock.lock();
  ASSERT_TRUE(eventually([&] {
    for (int i = 0; i < 3; ++i) {
      if (nodes.probe(i).hgetall("again")[mine.field(i)] != "2") return false;
    }
    return true;
  }));
  lock.unlock();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(nodes.probe(i).hgetall("again").at(mine.field(i)), "1");
  lock.unlock();
  EXPECT_EQ(nodes.with_key("again"), 0);
  EXPECT_EQ(expect_error([&] { lock.unlock_async(current_thread_id()).get(); }).code(), errc::not_owner);
}

TEST(RedLock, ValidUntilIsTheRoundStartPlusLeaseMinusDrift) {
  Nodes nodes(3);
  Side mine(nodes);
  RedLock lock = mine.red_lock("valid");
  EXPECT_EQ(lock.valid_until(), std::chrono::steady_clock::time_point{});
  auto before = std::chrono::steady_clock::now();
  lock.lock(lock_options().with_lease(10s));
  auto after = std::chrono::steady_clock::now();
  auto valid = lock.valid_until();
  auto drift = 102ms;  // 1% of the lease + 2 ms
  EXPECT_GE(valid, before + 10s - drift);
  EXPECT_LE(valid, after + 10s - drift);
  // The call returns once a majority holds it; the last node follows.
  ASSERT_TRUE(eventually([&] { return nodes.with_key("valid") == 3; }));
  for (int i = 0; i < 3; ++i) {
    long long ttl = nodes.probe(i).pttl("valid");
    EXPECT_GT(ttl, 9'000);
    EXPECT_LE(ttl, 10'000);
  }
  lock.unlock();
  EXPECT_EQ(lock.valid_until(), std::chrono::steady_clock::time_point{});
}

TEST(RedLock, OneOfThreeNodesDownStillLocks) {
  Nodes nodes(3);
  Side mine(nodes), theirs(nodes);
  nodes.server(1).kill();
  RedLock lock = mine.red_lock("one-down");
  auto start = std::chrono::steady_clock::now();
  lock.lock();
  EXPECT_LT(elapsed_ms(start), 500) << "a majority answered; the dead node need not be waited for";
  EXPECT_TRUE(nodes.probe(0).exists("one-down"));
  EXPECT_TRUE(nodes.probe(2).exists("one-down"));
  EXPECT_FALSE(theirs.red_lock("one-down").try_lock());
  start = std::chrono::steady_clock::now();
  lock.unlock();
  EXPECT_LT(elapsed_ms(start), 500) << "unlock waited for a node that is down";
  EXPECT_FALSE(nodes.probe(0).exists("one-down"));
  EXPECT_FALSE(nodes.probe(2).exists("one-down"));
}

TEST(RedLock, TwoOfFiveNodesDownStillLocks) {
  Nodes nodes(5);
  Side mine(nodes), theirs(nodes);
  nodes.server(0).kill();
  nodes.server(3).kill();
  RedLock lock = mine.red_lock("two-down");
  EXPECT_TRUE(lock.try_lock_for(2s));
  for (int i : {1, 2, 4}) EXPECT_TRUE(nodes.probe(i).exists("two-down")) << i;
  EXPECT_FALSE(theirs.red_lock("two-down").try_lock());
  lock.unlock();
  for (int i : {1, 2, 4}) EXPECT_FALSE(nodes.probe(i).exists("two-down")) << i;
}

TEST(RedLock, AMajorityOfThreeDownIsAQuorumErrorWithEveryNodesCause) {
  Nodes nodes(3);
  Side mine(nodes);
  nodes.server(0).kill();
  nodes.server(2).kill();
  RedLock lock = mine.red_lock("majority-down");
  auto start = std::chrono::steady_clock::now();
  Error error = expect_error([&] { lock.try_lock_for(2s); });
  EXPECT_LT(elapsed_ms(start), 2'000);
  std::string what = error.what();
  EXPECT_EQ(error.code(), errc::quorum_not_reached) << what;
  EXPECT_NE(what.find("'majority-down' on 127.0.0.1:" + nodes.port(0) + ": connection refused"), std::string::npos)
      << what;
  EXPECT_NE(what.find("'majority-down' on 127.0.0.1:" + nodes.port(2) + ": connection refused"), std::string::npos)
      << what;
  EXPECT_NE(what.find("127.0.0.1:" + nodes.port(1) + ": acquired (released again)"), std::string::npos) << what;
  EXPECT_FALSE(nodes.probe(1).exists("majority-down")) << "the live node kept the key";
}

TEST(RedLock, AMajorityOfFiveDownIsAQuorumErrorWithEveryNodesCause) {
  Nodes nodes(5);
  Side mine(nodes);
  for (int i : {0, 2, 4}) nodes.server(i).kill();
  RedLock lock = mine.red_lock("five-down");
  auto start = std::chrono::steady_clock::now();
  Error error = expect_error([&] { lock.lock(); });
  EXPECT_LT(elapsed_ms(start), 2'000);
  std::string what = error.what();
  EXPECT_EQ(error.code(), errc::quorum_not_reached) << what;
  for (int i : {0, 2, 4}) {
    EXPECT_NE(what.find("127.0.0.1:" + nodes.port(i) + ": connection refused"), std::string::npos) << what;
  }
  EXPECT_NE(what.find("2 of 5 nodes acquired, 3 needed"), std::string::npos) << what;
  EXPECT_EQ(nodes.probe(1).exists("five-down") + nodes.probe(3).exists("five-down"), 0);
}

TEST(RedLock, ACompetitorOnSomeNodesFollowsTheQuorumRule) {
  Nodes nodes(3);
  Side mine(nodes), competitor(nodes);
  RedLock lock = mine.red_lock("rule");
  Lock on_0 = competitor.plain(0, "rule");
  Lock on_1 = competitor.plain(1, "rule");

  on_0.lock();  // 1 of 3 taken by someone else: 2 of 3 is still a majority
  EXPECT_TRUE(lock.try_lock());
  EXPECT_EQ(nodes.probe(0).hgetall("rule").count(mine.field(0)), 0u);
  lock.unlock();
  EXPECT_FALSE(nodes.probe(2).exists("rule"));

  on_1.lock();  // 2 of 3: no majority left
  EXPECT_FALSE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock_for(200ms));
  // A round is lost once the quorum is out of reach; a free node's answer may come after that and
  // is then taken back.
  EXPECT_TRUE(eventually([&] { return !nodes.probe(2).exists("rule"); }, 5s))
      << "the free node kept a hold of a failed round";

  on_0.unlock();  // back to 1 of 3
  EXPECT_TRUE(lock.try_lock_for(1s));
  lock.unlock();
  on_1.unlock();
  EXPECT_EQ(nodes.with_key("rule"), 0);
}

TEST(RedLock, ACompetitorOnTwoOrThreeOfFiveNodes) {
  Nodes nodes(5);
  Side mine(nodes), competitor(nodes);
  RedLock lock = mine.red_lock("rule5");
  Lock on_0 = competitor.plain(0, "rule5"), on_1 = competitor.plain(1, "rule5"), on_2 = competitor.plain(2, "rule5");
  on_0.lock();
  on_1.lock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
  on_2.lock();
  EXPECT_FALSE(lock.try_lock());
  EXPECT_TRUE(eventually([&] { return !nodes.probe(3).exists("rule5") && !nodes.probe(4).exists("rule5"); }, 5s));
  for (Lock* held : {&on_0, &on_1, &on_2}) held->unlock();
}

TEST(RedLock, ContentionAndAFailedNodeTogetherIsAnErrorNamingBoth) {
  Nodes nodes(3);
  Side mine(nodes), competitor(nodes);
  Lock on_0 = competitor.plain(0, "mixed");
  on_0.lock();
  nodes.server(2).kill();
  RedLock lock = mine.red_lock("mixed");
  Error error = expect_error([&] { lock.try_lock_for(300ms); });
  std::string what = error.what();
  EXPECT_EQ(error.code(), errc::quorum_not_reached) << what;
  EXPECT_NE(what.find("127.0.0.1:" + nodes.port(0) + ": taken by another owner"), std::string::npos) << what;
  EXPECT_NE(what.find("127.0.0.1:" + nodes.port(2) + ": connection refused"), std::string::npos) << what;
  EXPECT_TRUE(eventually([&] { return !nodes.probe(1).exists("mixed"); }, 5s));
  on_0.unlock();
}

TEST(RedLock, ANodeThatMissesItsBudgetIsATimedOutNo) {
  Nodes nodes(3);
  Side mine(nodes);
  RedLock lock = mine.red_lock("slow");
  ASSERT_FALSE(lock.is_locked());  // every connection is up
  // A 2 s lease gives each node a 200 ms budget.
  nodes.server(2).pause();
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(lock.try_lock()) << "2 of 3 answered";
  lock.lock(lock_options().with_lease(2s));
  EXPECT_LT(elapsed_ms(start), 500);
  lock.unlock();
  lock.unlock();

  nodes.server(1).pause();
  start = std::chrono::steady_clock::now();
  Error error = expect_error([&] { lock.try_lock(lock_options().with_wait(0ms).with_lease(2s)); });
  auto took = elapsed_ms(start);
  std::string what = error.what();
  EXPECT_EQ(error.code(), errc::quorum_not_reached) << what;
  EXPECT_NE(what.find("127.0.0.1:" + nodes.port(1) + ": timed out (no answer within its 200 ms budget)"),
            std::string::npos)
      << what;
  EXPECT_GE(took, 200);
  EXPECT_LT(took, 800);
  EXPECT_FALSE(nodes.probe(0).exists("slow"));
  nodes.server(1).resume();
  nodes.server(2).resume();
  // The acquires the paused nodes ran late are taken back, not kept.
  EXPECT_TRUE(eventually([&] { return nodes.with_key("slow") == 0; }, 10s));
}

TEST(RedLock, AWrongTypeKeyIsNamedAsTheNodesCause) {
  Nodes nodes(3);
  Side mine(nodes);
  nodes.probe(0).command({"SET", "typed", "not a hash"});
  nodes.probe(1).command({"SET", "typed", "not a hash"});
  RedLock lock = mine.red_lock("typed");
  Error error = expect_error([&] { lock.try_lock(); });
  std::string what = error.what();
  EXPECT_EQ(error.code(), errc::quorum_not_reached) << what;
  EXPECT_NE(what.find("127.0.0.1:" + nodes.port(0) + ": key is not a lock of this kind ("), std::string::npos) << what;
  EXPECT_NE(what.find("127.0.0.1:" + nodes.port(1) + ": key is not a lock of this kind ("), std::string::npos) << what;
  // The call fails as soon as two nodes refuse; the third node's hold, if its acquire landed
  // first, is taken back a moment later rather than kept.
  EXPECT_TRUE(eventually([&] { return !nodes.probe(2).exists("typed"); }, 5s));
}

TEST(RedLock, ANodeRestartedEmptyDuringAWatchdogHoldGetsTheKeyBack) {
  Nodes nodes(3);
  Side mine(nodes, short_watchdog);
  RedLock lock = mine.red_lock("phoenix");
  Event lost;
  auto listening = lock.subscribe_lost([&](const LockLost&) { lost.set(); });
  lock.lock();
  // lock() returns once a majority holds it; wait for the third node too.
  ASSERT_TRUE(eventually([&] {
    for (auto& member : lock.members()) {
      if (member.valid_until() <= std::chrono::steady_clock::now()) return false;
    }
    return true;
  }));
  nodes.server(1).kill();
  nodes.server(1).start();  // same port, no data
  EXPECT_TRUE(eventually([&] { return nodes.probe(1).hgetall("phoenix").count(mine.field(1)) == 1; }, 5s))
      << "the renewal did not put the key back";
  EXPECT_FALSE(lost.is_set());
  EXPECT_GT(lock.valid_until(), std::chrono::steady_clock::now());
  // Still renewed on every node afterwards: three more leases.
  std::this_thread::sleep_for(900ms);
  EXPECT_EQ(nodes.with_key("phoenix"), 3);
  lock.unlock();
  EXPECT_EQ(nodes.with_key("phoenix"), 0);
  EXPECT_FALSE(lost.is_set());
}

TEST(RedLock, LosingTheMajorityFiresTheCallback) {
  Nodes nodes(3);
  Side mine(nodes, short_watchdog);
  RedLock lock = mine.red_lock("usurped");
  std::mutex mutex;
  std::vector<LockLost> seen;
  Event lost;
  auto listening = lock.subscribe_lost([&](const LockLost& event) {
    std::lock_guard<std::mutex> guard(mutex);
    seen.push_back(event);
    lost.set();
  });
  lock.lock();
  // Another owner takes the key on two nodes, so taking them back fails. In
  // one step per node: between a separate DEL and HSET the re-take could win
  // the free key and share the hash with the usurper.
  for (int i : {0, 1}) {
    nodes.probe(i).command({"EVAL", "redis.call('del', KEYS[1]); redis.call('hset', KEYS[1], ARGV[1], 1)", "1",
                            "usurped", "someone-else:1"});
  }
  ASSERT_TRUE(lost.wait_for(3s)) << "no lost-lock callback";
  {
    std::lock_guard<std::mutex> guard(mutex);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].lock_name, "usurped");
    EXPECT_EQ(seen[0].owner, current_thread_id());
    EXPECT_EQ(seen[0].cause, errc::lease_expired);
    EXPECT_NE(seen[0].message.find("1 of 3 nodes confirmed valid, 2 needed"), std::string::npos) << seen[0].message;
  }
  EXPECT_EQ(lock.valid_until(), std::chrono::steady_clock::time_point{});
  Error error = expect_error([&] { lock.unlock_async(current_thread_id()).get(); });
  EXPECT_EQ(error.code(), errc::lease_expired) << error.what();
  // A lost hold lets go of the node it still had, without waiting for unlock().
  EXPECT_TRUE(eventually([&] { return !nodes.probe(2).exists("usurped"); }));
  for (int i : {0, 1}) {
    EXPECT_EQ(nodes.probe(i).hgetall("usurped"), (std::map<std::string, std::string>{{"someone-else:1", "1"}}));
  }
}

TEST(RedLock, FewerThanThreeNodesOrADuplicateIsRefused) {
  Nodes nodes(2);
  Side mine(nodes);
  Error two = expect_error([&] { RedLock lock{mine.plain(0, "few"), mine.plain(1, "few")}; });
  EXPECT_EQ(two.code(), errc::invalid_argument);
  EXPECT_NE(std::string(two.what()).find("at least 3"), std::string::npos) << two.what();
  Error twice = expect_error([&] { RedLock lock{mine.plain(0, "few"), mine.plain(0, "few"), mine.plain(1, "few")}; });
  EXPECT_EQ(twice.code(), errc::invalid_argument);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(nodes.probe(i).command_calls("evalsha") + nodes.probe(i).command_calls("eval"), 0);
  }
}

// A holder stopped past its lease while another owner took the lock and let
// it go: when it resumes, each node's loss is reported on its own. The first
// one already finds no majority confirmed valid, so the hold is lost for good:
// the callback fires once, nothing is taken back, and unlock reports the loss.
TEST(RedLock, AHolderStoppedPastItsLeaseIsLostAndNeverTakenBack) {
  Nodes nodes(3);
  Side mine(nodes, [](Config& config) { config.lock_watchdog_timeout = 600ms; });
  Side theirs(nodes);
  RedLock lock = mine.red_lock("stopped");
  RedLock rival = theirs.red_lock("stopped");
  std::atomic<int> calls{0};
  Event lost;
  auto subscription = lock.subscribe_lost([&](const LockLost&) {
    ++calls;
    lost.set();
  });
  lock.lock();
  ASSERT_TRUE(eventually([&] { return every_member_valid(lock); }));
  {
    auto stalls = stall_all(lock);
    // The servers let the keys expire while their holder is stopped.
    ASSERT_TRUE(eventually([&] { return nodes.with_key("stopped") == 0; }));
    ASSERT_TRUE(rival.try_lock()) << "another owner takes the lock meanwhile";
    rival.unlock();
    // It resumes one node at a time, so that each loss is reported while the
    // other nodes are still taken as far as this process knows.
    stalls[0]->resume();
    EXPECT_TRUE(lost.wait_for(3s)) << "no lost-lock callback after the first node resumed";
    stalls[1]->resume();
    stalls[2]->resume();
  }
  EXPECT_LT(lock.valid_until(), std::chrono::steady_clock::now());
  // Time is the subject here: two leases later, still nothing was taken back.
  std::this_thread::sleep_for(1200ms);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(nodes.probe(i).hgetall("stopped").count(mine.field(i)), 0u) << "node " << i << " was taken back";
  }
  EXPECT_LT(lock.valid_until(), std::chrono::steady_clock::now());
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(lock.unlock_checked(), errc::lease_expired);
  EXPECT_EQ(nodes.with_key("stopped"), 0);
  EXPECT_EQ(calls.load(), 1);
}

// The same stop, with the other owner still holding the lock when the stopped
// holder resumes: it keeps the lock on every node, and the stale holder
// learns of its loss from the callback, valid_until() and unlock().
TEST(RedLock, AnOwnerThatTookTheLockFromAStoppedHolderKeepsIt) {
  Nodes nodes(3);
  Side mine(nodes, [](Config& config) { config.lock_watchdog_timeout = 600ms; });
  Side theirs(nodes);
  RedLock lock = mine.red_lock("taken-over");
  RedLock rival = theirs.red_lock("taken-over");
  Event lost;
  auto subscription = lock.subscribe_lost([&](const LockLost&) { lost.set(); });
  lock.lock();
  ASSERT_TRUE(eventually([&] { return every_member_valid(lock); }));
  {
    auto stalls = stall_all(lock);
    ASSERT_TRUE(eventually([&] { return nodes.with_key("taken-over") == 0; }));
    ASSERT_TRUE(rival.try_lock());
    ASSERT_TRUE(eventually([&] { return nodes.with_key("taken-over") == 3; }));
  }
  ASSERT_TRUE(lost.wait_for(3s)) << "no lost-lock callback";
  EXPECT_LT(lock.valid_until(), std::chrono::steady_clock::now());
  EXPECT_EQ(lock.unlock_checked(), errc::lease_expired);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(nodes.probe(i).hgetall("taken-over"), (std::map<std::string, std::string>{{theirs.field(i), "1"}})) << i;
  }
  EXPECT_GT(rival.valid_until(), std::chrono::steady_clock::now());
  rival.unlock();
  EXPECT_EQ(nodes.with_key("taken-over"), 0);
}

// A quorum counts servers: members that share one fail together.
TEST(RedLock, MembersOnOneServerAreRefused) {
  Nodes nodes(2);
  Side mine(nodes);
  Client again{fast_config(nodes.server(0))};
  auto refused = [&](std::initializer_list<Lock> members) {
    Error error = expect_error([&] { RedLock lock(members); });
    EXPECT_EQ(error.code(), errc::invalid_argument) << error.what();
    EXPECT_NE(std::string(error.what()).find("127.0.0.1:" + nodes.port(0)), std::string::npos) << error.what();
  };
  // One Client twice, under two names.
  refused({mine.plain(0, "a"), mine.plain(0, "b"), mine.plain(1, "a")});
  // Two Clients of one address.
  refused({mine.plain(0, "a"), again.get_lock("a"), mine.plain(1, "a")});
  // ... also when one spells the address "localhost".
  Config local = fast_config(nodes.server(0));
  local.host = "localhost";
  Client spelled{local};
  refused({spelled.get_lock("a"), mine.plain(0, "a"), mine.plain(1, "a")});
  // A MultiLock is no quorum: it takes any members.
  EXPECT_NO_THROW((MultiLock{mine.plain(0, "a"), again.get_lock("b"), mine.plain(1, "a")}));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(nodes.probe(i).command_calls("evalsha") + nodes.probe(i).command_calls("eval"), 0);
  }
}

// Every call on a moved-from handle is invalid_argument (unlock() does
// nothing), never a crash, and nothing reaches a server.
TEST(RedLock, AMovedFromHandleRefusesEveryCall) {
  Nodes nodes(3);
  Side mine(nodes);
  RedLock lock = mine.red_lock("moved");
  RedLock other = std::move(lock);
  // NOLINTBEGIN(bugprone-use-after-move): the subject of the test
  EXPECT_EQ(expect_error([&] { lock.try_lock(); }).code(), errc::invalid_argument);
  EXPECT_EQ(expect_error([&] { lock.lock(); }).code(), errc::invalid_argument);
  EXPECT_EQ(expect_error([&] { lock.is_locked(); }).code(), errc::invalid_argument);
  EXPECT_EQ(expect_error([&] { lock.valid_until(); }).code(), errc::invalid_argument);
  EXPECT_EQ(expect_error([&] { lock.lock_async(current_thread_id()).get(); }).code(), errc::invalid_argument);
  EXPECT_EQ(expect_error([&] { lock.unlock_async(current_thread_id()).get(); }).code(), errc::invalid_argument);
  std::error_code code;
  lock.try_lock_async(current_thread_id(), lock_options().with_wait(0ms),
                      [&](std::error_code error, bool) { code = error; });
  EXPECT_EQ(code, errc::invalid_argument);
  lock.unlock();
  EXPECT_EQ(lock.unlock_checked(), errc::invalid_argument);
  EXPECT_TRUE(lock.members().empty());
  EXPECT_EQ(lock.quorum(), 0u);
  // NOLINTEND(bugprone-use-after-move)
  EXPECT_EQ(nodes.with_key("moved"), 0);
  EXPECT_TRUE(other.try_lock());
  other.unlock();
}

// A waiting RedLock cancelled from another thread ends with errc::cancelled
// and leaves no node taken.
TEST(RedLock, AWaitCanBeCancelled) {
  Nodes nodes(3);
  Side mine(nodes);
  Side theirs(nodes);
  RedLock held = theirs.red_lock("cancel-red");
  held.lock();
  RedLock lock = mine.red_lock("cancel-red");
  cancel_source source;
  auto waiting = std::async(std::launch::async, [&]() -> std::error_code {
    try {
      lock.lock(lock_options().with_cancel(source.token()));
    } catch (const Error& error) {
      return error.code();
    }
    return {};
  });
  // RedLock members do not wait: rounds repeat after short pauses. Two more
  // acquire scripts on a node show the wait under way.
  long long before = nodes.probe(0).command_calls("evalsha");
  bool retrying = eventually([&] { return nodes.probe(0).command_calls("evalsha") >= before + 2; });
  source.cancel();
  ASSERT_TRUE(retrying);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  held.unlock();
  EXPECT_TRUE(eventually([&] { return nodes.with_key("cancel-red") == 0; }));
}

TEST(RedLock, AnEvenNodeCountNeedsMoreThanHalf) {
  Nodes nodes(4);
  Side mine(nodes), competitor(nodes);
  RedLock lock = mine.red_lock("even");
  EXPECT_EQ(lock.quorum(), 3u);
  Lock on_0 = competitor.plain(0, "even"), on_1 = competitor.plain(1, "even");
  on_0.lock();
  EXPECT_TRUE(lock.try_lock());  // 3 of 4
  lock.unlock();
  on_1.lock();
  EXPECT_FALSE(lock.try_lock());  // 2 of 4 is a tie, not a majority
  on_0.unlock();
  on_1.unlock();
  nodes.server(3).kill();
  EXPECT_TRUE(lock.try_lock_for(2s));  // one failure tolerated, as with 3 nodes
  lock.unlock();
}

TEST(RedLock, IsLockedFollowsTheMajority) {
  Nodes nodes(3);
  Side mine(nodes), competitor(nodes);
  RedLock lock = mine.red_lock("seen");
  Lock on_0 = competitor.plain(0, "seen"), on_1 = competitor.plain(1, "seen");
  on_0.lock();
  EXPECT_FALSE(lock.is_locked());
  on_1.lock();
  EXPECT_TRUE(lock.is_locked());
  on_0.unlock();
  on_1.unlock();
}

TEST(RedLock, GuardsAndAsyncTwins) {
  Nodes nodes(3);
  Side mine(nodes);
  RedLock lock = mine.red_lock("twins");
  {
    std::unique_lock<RedLock> guard(lock, 1s);
    ASSERT_TRUE(guard.owns_lock());
    EXPECT_TRUE(eventually([&] { return nodes.with_key("twins") == 3; }));
  }
  EXPECT_EQ(nodes.with_key("twins"), 0);
  constexpr thread_id owner = 777;
  EXPECT_TRUE(lock.try_lock_async(owner, lock_options().with_wait(1s).with_lease(5s)).get());
  EXPECT_TRUE(eventually([&] { return nodes.probe(0).hgetall("twins").count(mine.field(0, owner)) == 1; }));
  EXPECT_GT(lock.valid_until(owner), std::chrono::steady_clock::now());
  std::thread other([&] { lock.unlock_async(owner).get(); });
  other.join();
  EXPECT_EQ(nodes.with_key("twins"), 0);
}

}  // namespace
}  // namespace warden::test
