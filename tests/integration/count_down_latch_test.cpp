// CountDownLatch on real servers: Redisson's RCountDownLatch layout, waiters
// on several threads and Clients released by the last count_down at once
// (pub/sub, no timer), the blocking/future/callback forms, wait_for's bound,
// cancellation, bad input, a Cluster (sharded pub/sub, names with braces),
// Sentinel, replica acknowledgement, and interop with Redisson's layout
// spoken by the test itself.
#include <gtest/gtest.h>

#include <warden/warden.hpp>

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cluster_fixture.hpp"
#include "message_recorder.hpp"
#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

using steady = std::chrono::steady_clock;

std::string channel_of(const std::string& name) { return "redisson_countdownlatch__channel__{" + name + "}"; }

template <class F>
errc error_of(F&& call) {
  try {
    call();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("count-down latch"), std::string::npos) << error.what();
    return static_cast<errc>(error.code().value());
  }
  ADD_FAILURE() << "no error";
  return errc{};
}

TEST(CountDownLatch, KeepsItsCountInRedissonsLayoutAndTellsItsChannel) {
  RedisServer server;
  RedisProbe probe(server);
  MessageRecorder recorder(server, {channel_of("cdl")});
  Client client(fast_config(server));
  CountDownLatch latch = client.get_count_down_latch("cdl");
  EXPECT_EQ(latch.name(), "cdl");
  EXPECT_EQ(latch.count(), 0);  // no key: open
  EXPECT_TRUE(latch.try_set_count(3));
  EXPECT_EQ(probe.get("cdl"), "3");
  EXPECT_FALSE(latch.try_set_count(5));  // only when absent
  EXPECT_EQ(probe.get("cdl"), "3");
  latch.count_down();
  latch.count_down();
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(probe.get("cdl"), "1");
  latch.count_down();
  EXPECT_FALSE(probe.exists("cdl"));  // DEL at 0
  latch.count_down();                 // open: nothing kept, nothing told
  EXPECT_FALSE(probe.exists("cdl"));
  auto seen = recorder.wait_for(2, 2s);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].payload, "1");  // the new count
  EXPECT_EQ(seen[1].payload, "0");  // opened, once
  EXPECT_TRUE(latch.try_set_count(2));
  EXPECT_TRUE(latch.remove());
  EXPECT_FALSE(latch.remove());
  EXPECT_FALSE(probe.exists("cdl"));
  seen = recorder.wait_for(4, 2s);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[3].payload, "1");  // delete tells "1", as Redisson does
}

// Four threads on each of two Clients wait; the last count_down opens the
// latch and every one returns within a round trip or so, long before any
// timer: an unbounded wait has none.
TEST(CountDownLatch, WaitersOnSeveralThreadsAndClientsAreAllReleasedByTheLastCountDown) {
  RedisServer server;
  RedisProbe probe(server);
  Client a(fast_config(server));
  Client b(fast_config(server));
  Client counter(fast_config(server));
  ASSERT_TRUE(counter.get_count_down_latch("gate").try_set_count(2));
  std::atomic<int> released{0};
  std::vector<std::future<steady::time_point>> waiters;
  for (Client* client : {&a, &b}) {
    for (int i = 0; i < 4; ++i) {
      waiters.push_back(std::async(std::launch::async, [client, &released] {
        client->get_count_down_latch("gate").wait();
        released.fetch_add(1);
        return steady::now();
      }));
    }
  }
  // One subscription per Client however many of its threads wait.
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel_of("gate")) == 2; }));
  CountDownLatch latch = counter.get_count_down_latch("gate");
  latch.count_down();
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(released.load(), 0);
  auto opened = steady::now();
  latch.count_down();
  for (auto& waiter : waiters) {
    ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(waiter.get() - opened).count(), 500);
  }
  EXPECT_EQ(released.load(), 8);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, channel_of("gate")) == 0; }));
}

TEST(CountDownLatch, FutureAndCallbackFormsWaitAndAnswer) {
  RedisServer server;
  Client client(fast_config(server));
  CountDownLatch latch = client.get_count_down_latch("forms");
  EXPECT_TRUE(latch.try_set_count_async(1).get());
  EXPECT_EQ(latch.count_async().get(), 1);
  auto waited = latch.wait_async();
  auto bounded = latch.wait_for_async(10s);
  Event called;
  std::error_code callback_error = make_error_code(errc::server_error);
  latch.wait_async({}, [&](std::error_code error) {
    callback_error = error;
    called.set();
  });
  Event counted;
  std::int64_t seen = -1;
  latch.count_async([&](std::error_code, std::int64_t count) {
    seen = count;
    counted.set();
  });
  ASSERT_TRUE(counted.wait_for(5s));
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(waited.wait_for(200ms), std::future_status::timeout);  // closed: still waiting
  Event down;
  latch.count_down_async([&](std::error_code error) {
    EXPECT_FALSE(error);
    down.set();
  });
  ASSERT_TRUE(down.wait_for(5s));
  ASSERT_EQ(waited.wait_for(5s), std::future_status::ready);
  waited.get();
  EXPECT_TRUE(bounded.get());
  ASSERT_TRUE(called.wait_for(5s));
  EXPECT_FALSE(callback_error);
  Event set;
  latch.try_set_count_async(4, [&](std::error_code, bool done) {
    EXPECT_TRUE(done);
    set.set();
  });
  ASSERT_TRUE(set.wait_for(5s));
  latch.count_down_async().get();
  EXPECT_EQ(latch.count(), 3);
  EXPECT_TRUE(latch.remove_async().get());
}

TEST(CountDownLatch, WaitForRunsOutOnAClosedLatchAndReturnsAtOnceOnAnOpenOne) {
  RedisServer server;
  RedisProbe probe(server);
  Client client(fast_config(server));
  CountDownLatch latch = client.get_count_down_latch("bounded");
  auto started = steady::now();
  EXPECT_TRUE(latch.wait_for(5s));
  EXPECT_LT(elapsed_ms(started), 1'000);
  ASSERT_TRUE(latch.try_set_count(1));
  started = steady::now();
  EXPECT_FALSE(latch.wait_for(300ms));
  auto took = elapsed_ms(started);
  EXPECT_GE(took, 300);
  EXPECT_LT(took, 1'300);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, channel_of("bounded")) == 0; }));
  EXPECT_EQ(latch.count(), 1);
  EXPECT_EQ(error_of([&] { latch.wait_for(std::chrono::milliseconds(-1)); }), errc::invalid_argument);
}

TEST(CountDownLatch, ACancelledWaitEndsWithErrcCancelledAndLeavesNoSubscription) {
  RedisServer server;
  RedisProbe probe(server);
  Client client(fast_config(server));
  CountDownLatch latch = client.get_count_down_latch("cancelled");
  ASSERT_TRUE(latch.try_set_count(1));
  cancel_source source;
  auto waited = latch.wait_async(source.token());
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel_of("cancelled")) == 1; }));
  source.cancel();
  ASSERT_EQ(waited.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(error_of([&] { waited.get(); }), errc::cancelled);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, channel_of("cancelled")) == 0; }));
  EXPECT_EQ(latch.count(), 1);
  // A token cancelled before the call: nothing is waited for.
  EXPECT_EQ(error_of([&] { latch.wait(source.token()); }), errc::cancelled);
}

TEST(CountDownLatch, AWaitEndsWithErrcShutDownWhenItsClientCloses) {
  RedisServer server;
  RedisProbe probe(server);
  auto client = std::make_unique<Client>(fast_config(server));
  CountDownLatch latch = client->get_count_down_latch("closing");
  ASSERT_TRUE(latch.try_set_count(1));
  auto waited = latch.wait_async();
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel_of("closing")) == 1; }));
  client->close();
  ASSERT_EQ(waited.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(error_of([&] { waited.get(); }), errc::shut_down);
  EXPECT_EQ(error_of([&] { latch.count_down(); }), errc::shut_down);
  EXPECT_EQ(probe.get("closing"), "1");
}

TEST(CountDownLatch, DeleteOpensTheLatchForItsWaiters) {
  RedisServer server;
  Client client(fast_config(server));
  Client other(fast_config(server));
  CountDownLatch latch = client.get_count_down_latch("deleted");
  ASSERT_TRUE(latch.try_set_count(5));
  auto waited = other.get_count_down_latch("deleted").wait_for_async(20s);
  EXPECT_EQ(waited.wait_for(200ms), std::future_status::timeout);
  auto started = steady::now();
  EXPECT_TRUE(latch.remove());
  EXPECT_TRUE(waited.get());
  EXPECT_LT(elapsed_ms(started), 1'000);
}

TEST(CountDownLatch, BadInputIsATypedErrorAndChangesNothing) {
  RedisServer server;
  RedisProbe probe(server);
  Client client(fast_config(server));
  EXPECT_THROW(client.get_count_down_latch(""), Error);
  CountDownLatch fresh = client.get_count_down_latch("fresh");
  EXPECT_EQ(error_of([&] { fresh.try_set_count(0); }), errc::invalid_argument);
  EXPECT_EQ(error_of([&] { fresh.try_set_count(-3); }), errc::invalid_argument);
  EXPECT_FALSE(probe.exists("fresh"));

  probe.command({"HSET", "a-hash", "f", "v"});
  probe.command({"SET", "a-word", "hello"});
  probe.command({"RPUSH", "a-list", "x"});
  auto before = probe.script_calls();
  for (std::string name : {"a-hash", "a-word", "a-list"}) {
    MessageRecorder recorder(server, {channel_of(name)});
    CountDownLatch latch = client.get_count_down_latch(name);
    EXPECT_EQ(error_of([&] { latch.try_set_count(2); }), errc::wrong_type) << name;
    EXPECT_EQ(error_of([&] { latch.count_down(); }), errc::wrong_type) << name;
    EXPECT_EQ(error_of([&] { latch.count(); }), errc::wrong_type) << name;
    EXPECT_EQ(error_of([&] { latch.remove(); }), errc::wrong_type) << name;
    EXPECT_EQ(error_of([&] { latch.wait_for(1s); }), errc::wrong_type) << name;
    EXPECT_TRUE(recorder.messages().empty()) << name;
  }
  EXPECT_GT(probe.script_calls(), before);
  EXPECT_EQ(probe.hgetall("a-hash").at("f"), "v");
  EXPECT_EQ(probe.get("a-word"), "hello");
  EXPECT_EQ(probe.command({"LRANGE", "a-list", "0", "-1"}).elements.size(), 1u);
}

// The test speaks Redisson's layout itself: its count-down is a DECR, a DEL
// at 0 and a PUBLISH of "0" on the channel, as RCountDownLatch.countDown's
// script does; warden's waiters are woken by it.
TEST(CountDownLatch, ACountDownInRedissonsLayoutReleasesWardenWaiters) {
  RedisServer server;
  RedisProbe probe(server);
  probe.command({"SET", "interop", "2"});  // RCountDownLatch.trySetCount(2)
  Client client(fast_config(server));
  auto waited = client.get_count_down_latch("interop").wait_for_async(20s);
  ASSERT_TRUE(eventually([&] { return subscribers(probe, channel_of("interop")) == 1; }));
  EXPECT_EQ(probe.command({"DECR", "interop"}).integer, 1);
  EXPECT_EQ(waited.wait_for(200ms), std::future_status::timeout);
  EXPECT_EQ(probe.command({"DECR", "interop"}).integer, 0);
  probe.command({"DEL", "interop"});
  auto started = steady::now();
  probe.command({"PUBLISH", channel_of("interop"), "0"});
  EXPECT_TRUE(waited.get());
  EXPECT_LT(elapsed_ms(started), 1'000);
}

// The other way: a Redisson waiter subscribes to the channel and reads the
// key with GET; warden's writes are what it expects.
TEST(CountDownLatch, WardensWritesAreWhatARedissonWaiterReads) {
  RedisServer server;
  RedisProbe probe(server);
  MessageRecorder redisson_waiter(server, {channel_of("java side")});
  Client client(fast_config(server));
  CountDownLatch latch = client.get_count_down_latch("java side");
  ASSERT_TRUE(latch.try_set_count(2));
  EXPECT_EQ(probe.command({"GET", "java side"}).str, "2");  // getCount is a GET
  latch.count_down();
  EXPECT_EQ(probe.command({"GET", "java side"}).str, "1");
  latch.count_down();
  EXPECT_TRUE(probe.command({"GET", "java side"}).is_nil());
  auto seen = redisson_waiter.wait_for(2, 2s);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].payload, "1");
  EXPECT_EQ(seen[1].payload, "0");
  // A count Redisson set (a plain SET) is counted down by warden.
  probe.command({"SET", "java side", "1"});
  EXPECT_EQ(latch.count(), 1);
  latch.count_down();
  EXPECT_FALSE(probe.exists("java side"));
  EXPECT_EQ(redisson_waiter.wait_for(3, 2s).size(), 3u);
}

TEST(CountDownLatch, ReplicaSyncWaitsForTheReplicaOnEveryWrite) {
  MasterWithReplica servers;
  ASSERT_TRUE(replica_online(servers.probe));
  Config config = fast_config(servers.master);
  config.replica_sync.mode = replica_sync_mode::all_known;
  Client client(config);
  RedisProbe replica_probe(servers.replica);
  CountDownLatch latch = client.get_count_down_latch("replicated");
  auto waits = servers.probe.command_calls("wait");
  ASSERT_TRUE(latch.try_set_count(2));
  EXPECT_EQ(replica_probe.get("replicated"), "2");  // acknowledged by the time it returns
  latch.count_down();
  EXPECT_EQ(replica_probe.get("replicated"), "1");
  latch.count_down();
  EXPECT_FALSE(replica_probe.exists("replicated"));
  EXPECT_GE(servers.probe.command_calls("wait") - waits, 3);
}

TEST(CountDownLatch, WorksOnTheMasterTheSentinelsName) {
  RedisSentinelGroup group;
  Client client(fast_sentinel_config(group.url()));
  Client other(fast_sentinel_config(group.url()));
  RedisProbe master(group.node(0));
  CountDownLatch latch = client.get_count_down_latch("s-latch");
  ASSERT_TRUE(latch.try_set_count(1));
  EXPECT_EQ(master.get("s-latch"), "1");
  auto waited = other.get_count_down_latch("s-latch").wait_for_async(20s);
  ASSERT_TRUE(eventually([&] { return subscribers(master, channel_of("s-latch")) == 1; }));
  auto started = steady::now();
  latch.count_down();
  EXPECT_TRUE(waited.get());
  EXPECT_LT(elapsed_ms(started), 1'000);
}

// ---- Redis Cluster ----

class CountDownLatchCluster : public ClusterLocks, public ::testing::WithParamInterface<sharded_pubsub> {};

// The key lives on the master of the name's slot; waiters subscribe on the
// master of the channel's slot (the name in braces as it stands, so for a
// name with braces of its own that is another slot), and the opening reaches
// them there: in the script when both share a slot, else by a (S)PUBLISH of
// its own.
TEST_P(CountDownLatchCluster, WaitersOnAnotherClientAreReleasedWhateverBracesTheNameHolds) {
  const bool sharded = GetParam() != sharded_pubsub::off;
  Config config = cluster_config(cluster(), GetParam());
  Client counter(config);
  Client waiter(config);
  std::string mode = std::to_string(static_cast<int>(GetParam()));
  for (std::string name : {"plain-" + mode, "{tag" + mode + "}-x", "a{b" + mode + "}c", "x}y" + mode}) {
    SCOPED_TRACE(name);
    const std::string channel = channel_of(name);
    std::size_t key_node = static_cast<std::size_t>(cluster().master_of_slot(keys::slot(name)));
    std::size_t channel_node = static_cast<std::size_t>(cluster().master_of_slot(keys::slot(channel)));
    // A name with braces of its own hashes elsewhere than its channel: the
    // opening is published apart from the script.
    EXPECT_EQ(keys::slot(name) == keys::slot(channel), name.rfind("plain-", 0) == 0);
    RedisProbe key_master(cluster().first_master(key_node));
    RedisProbe channel_master(cluster().first_master(channel_node));
    MessageRecorder recorder(cluster().first_master(channel_node), {channel}, sharded);

    CountDownLatch latch = counter.get_count_down_latch(name);
    ASSERT_TRUE(latch.try_set_count(2));
    EXPECT_EQ(key_master.get(name), "2");
    auto waited = waiter.get_count_down_latch(name).wait_for_async(20s);
    // The recorder's subscription and the waiting Client's one.
    ASSERT_TRUE(eventually([&] {
      return (sharded ? shard_subscribers(channel_master, channel) : subscribers(channel_master, channel)) == 2;
    })) << "key slot "
        << keys::slot(name) << " on " << key_node << ", channel slot " << keys::slot(channel) << " on " << channel_node;
    latch.count_down();
    EXPECT_EQ(waited.wait_for(200ms), std::future_status::timeout);
    auto started = steady::now();
    latch.count_down();
    EXPECT_TRUE(waited.get());
    EXPECT_LT(elapsed_ms(started), 1'000);
    EXPECT_FALSE(key_master.exists(name));
    auto seen = recorder.wait_for(2, 2s);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].payload, "1");
    EXPECT_EQ(seen[1].payload, "0");
  }
}

INSTANTIATE_TEST_SUITE_P(PubSubModes, CountDownLatchCluster,
                         ::testing::Values(sharded_pubsub::automatic, sharded_pubsub::off));

}  // namespace
}  // namespace warden::test
