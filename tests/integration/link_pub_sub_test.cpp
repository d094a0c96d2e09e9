// PubSub against a real redis-server: classic and shard channels, a link that
// drops, the health check on a subscribed link, a paused server.
#include "link_harness.hpp"

namespace warden::test {
namespace {

// ---------------------------------------------------------------------------
// PubSub

TEST(LinkPubSub, APublishWakesAWaiterOnAClassicChannel) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), false);
  const std::string channel = "warden_test:classic";
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  EXPECT_EQ(subscribers(probe, channel), 1);
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));

  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(1, 2s));
}

TEST(LinkPubSub, ShardedModeSubscribesWithSsubscribeAndSpublishWakesTheWaiter) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), true);
  const std::string channel = "warden_test:sharded";
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  // A shard subscription, not a classic one.
  auto shard = probe.command({"PUBSUB", "SHARDNUMSUB", channel});
  ASSERT_EQ(shard.elements.size(), 2u);
  EXPECT_EQ(shard.elements[1].integer, 1);
  EXPECT_EQ(subscribers(probe, channel), 0);
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));

  // A classic PUBLISH reaches nobody; SPUBLISH reaches the waiter (smessage).
  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 0);
  EXPECT_EQ(probe.command({"SPUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(1, 2s));
  EXPECT_EQ(waiter.woken.value(), 1);
}

// A crowd of waiters served at once lets its channels go in one UNSUBSCRIBE
// per loop turn, not one each: the server runs a handful of commands where
// it ran thousands. A channel let go and wanted again in the same turn is
// subscribed again once the server confirmed the UNSUBSCRIBE, and wakes its
// new waiter.
TEST(LinkPubSub, ChannelsLetGoInOneTurnLeaveInOneUnsubscribe) {
  RedisServer server;
  RedisProbe probe(server);
  LogRecorder log;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), false);
  constexpr int count = 300;
  std::vector<Waiter> waiters(count);
  auto channel = [](int i) { return "warden_test:crowd:" + std::to_string(i); };
  for (int i = 0; i < count; ++i) waiters[i].join(harness, pubsub, channel(i));
  for (auto& waiter : waiters) ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  const long long before = command_stat(probe, "unsubscribe", "calls");

  Waiter again;
  harness.run([&] {
    for (int i = 0; i < count; ++i) pubsub.leave(channel(i), waiters[i].id, false);
    // Wanted again before the turn ends: its UNSUBSCRIBE is already owed.
    again.id = pubsub.join(
        channel(0), [&] { again.ready.add(); }, [&](wake_cause) { again.woken.add(); }, detail::lock_wake_policy());
    return 0;
  });
  ASSERT_TRUE(again.ready.wait_for_at_least(1, 3s)) << log.all();
  for (int i = 1; i < count; ++i) EXPECT_EQ(subscribers(probe, channel(i)), 0) << channel(i);
  EXPECT_EQ(command_stat(probe, "unsubscribe", "calls") - before, 1);
  EXPECT_EQ(subscribers(probe, channel(0)), 1);
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel(0)); }));
  ASSERT_TRUE(again.park(harness, pubsub, channel(0)));
  EXPECT_EQ(probe.command({"PUBLISH", channel(0), "0"}).integer, 1);
  EXPECT_TRUE(again.woken.wait_for_at_least(1, 2s));
}

// The link drops after the server took a SUBSCRIBE but before its answer was
// read: the waiter is told at once (it re-tries) instead of sleeping out its
// wait for a confirmation that only a reconnect would bring.
TEST(LinkPubSub, AWaiterNotConfirmedYetIsToldWhenTheLinkDrops) {
  RedisServer server;
  LogRecorder log;
  Waiter first, second;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), false);
  first.join(harness, pubsub, "warden_test:confirmed");
  ASSERT_TRUE(first.ready.wait_for_at_least(1, 3s)) << log.all();
  ASSERT_TRUE(first.park(harness, pubsub, "warden_test:confirmed"));
  server.pause();  // the next SUBSCRIBE gets no answer
  second.join(harness, pubsub, "warden_test:unconfirmed");
  harness.sync();
  EXPECT_EQ(second.ready.value(), 0);
  server.kill();  // the link drops with that subscription unconfirmed
  EXPECT_TRUE(second.ready.wait_for_at_least(1, 2s)) << log.all();
  EXPECT_TRUE(first.woken.wait_for_at_least(1, 2s)) << log.all();
}

// The last waiter leaves and the link drops before the server answered the
// UNSUBSCRIBE: nothing is subscribed or in flight any more, so the channel's
// entry goes, and once the link is back the subscriber is idle again (the
// loop thread may park). Kept, the entry would keep it busy for good.
TEST(LinkPubSub, AChannelLetGoWhileTheLinkDropsLeavesTheSubscriberIdle) {
  RedisServer server;
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  PubSub& pubsub = harness.pubsub(options_for(server, log, connection_role::subscriber), false);
  const std::string channel = "warden_test:let_go";
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  EXPECT_FALSE(harness.run([&] { return pubsub.idle(); }));
  server.pause();  // the UNSUBSCRIBE gets no answer
  harness.run([&] {
    pubsub.leave(channel, waiter.id, false);
    return 0;
  });
  harness.sync();
  server.kill();
  server.start();
  EXPECT_TRUE(eventually([&] { return harness.run([&] { return pubsub.idle(); }); }, 5s)) << log.all();
  EXPECT_FALSE(harness.run([&] { return pubsub.subscribed(channel); }));
}

// A subscriber probed every 50 ms with one waiter parked on `channel`, and
// the server's id of its connection. Members are destroyed loop first.
struct ProbedSubscriber {
  RedisServer server;
  RedisProbe probe{server};
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  ConnectionOptions options = options_for(server, log, connection_role::subscriber);
  PubSub* pubsub = nullptr;
  std::string channel;
  std::vector<std::string> ids;

  // Call through ASSERT_NO_FATAL_FAILURE.
  void start(std::string name) {
    channel = std::move(name);
    options.health_check_interval = 50ms;
    pubsub = &harness.pubsub(options, false);
    waiter.join(harness, *pubsub, channel);
    ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
    ASSERT_TRUE(waiter.park(harness, *pubsub, channel));
    ids = pubsub_client_ids(probe);
    ASSERT_EQ(ids.size(), 1u);
  }
};

TEST(LinkPubSub, TheHealthCheckPingsASubscribedLinkWithoutDroppingIt) {
  ProbedSubscriber link;
  ASSERT_NO_FATAL_FAILURE(link.start("warden_test:health"));
  auto& [server, probe, log, waiter, harness, options, pubsub_ptr, channel, ids] = link;
  PubSub& pubsub = *pubsub_ptr;

  // A PING goes out whenever the link was quiet for an interval: at least one
  // every two intervals. Wait for several, and for ten intervals to pass.
  auto start = steady::now();
  long long pings = probe.command_calls("ping");
  ASSERT_TRUE(eventually([&] { return probe.command_calls("ping") >= pings + 5; }, 2s)) << log.all();
  if (steady::now() - start < 10 * options.health_check_interval) {
    std::this_thread::sleep_for(10 * options.health_check_interval - (steady::now() - start));  // time itself is tested
  }

  EXPECT_EQ(pubsub_client_ids(probe), ids) << "the subscriber connection was re-made";
  EXPECT_EQ(waiter.woken.value(), 0) << "a reconnect woke the waiter";
  EXPECT_FALSE(log.contains("lost")) << log.all();
  EXPECT_FALSE(log.contains("re-established")) << log.all();
  EXPECT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(1, 2s));
}

TEST(LinkPubSub, APausedServerMakesTheSubscriberDropAndReconnectAfterResume) {
  ProbedSubscriber link;
  ASSERT_NO_FATAL_FAILURE(link.start("warden_test:paused"));
  auto& [server, probe, log, waiter, harness, options, pubsub_ptr, channel, ids] = link;
  PubSub& pubsub = *pubsub_ptr;

  server.pause();
  // The unanswered PING drops the link, and the waiter is woken to re-poll
  // rather than sleeping out a lock's TTL.
  ASSERT_TRUE(waiter.woken.wait_for_at_least(1, 2s)) << log.all();
  EXPECT_TRUE(log.contains("health check got no reply")) << log.all();
  EXPECT_FALSE(harness.run([&] { return pubsub.subscribed(channel); }));

  int woken_before_resume = waiter.woken.value();
  server.resume();
  // Connections abandoned while the server was stopped are processed (and
  // closed) by it after resume: wait until only the current one subscribes.
  ASSERT_TRUE(eventually(
      [&] { return harness.run([&] { return pubsub.subscribed(channel); }) && pubsub_client_ids(probe).size() == 1; },
      2s))
      << log.all();
  EXPECT_NE(pubsub_client_ids(probe), ids);
  // Re-subscribed: what was published meanwhile is lost, so the waiter re-polls.
  EXPECT_GT(waiter.woken.value(), woken_before_resume);
  EXPECT_TRUE(log.contains("re-established")) << log.all();

  int woken = waiter.woken.value();
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));
  EXPECT_EQ(probe.command({"PUBLISH", channel, "0"}).integer, 1);
  EXPECT_TRUE(waiter.woken.wait_for_at_least(woken + 1, 2s));
}

}  // namespace
}  // namespace warden::test
