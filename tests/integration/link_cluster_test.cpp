// PubSub in a real two-node cluster: a slot moving away ends the shard
// subscription and says where the slot went.
#include "link_harness.hpp"

namespace warden::test {
namespace {

// ---------------------------------------------------------------------------
// A real two-node cluster

// Two cluster-enabled redis-server processes on loopback with every slot on
// node A, each knowing the other. The cluster bus ports are chosen freely
// (--cluster-port) rather than port + 10000, which may be taken or too high.
class TwoNodeCluster {
 public:
  TwoNodeCluster() : directory_("warden-cluster-") {
    a_ = start_node("a");
    b_ = start_node("b");
    probe_a_ = std::make_unique<RedisProbe>(*a_);
    probe_b_ = std::make_unique<RedisProbe>(*b_);
    id_a_ = probe_a_->command({"CLUSTER", "MYID"}).str;
    id_b_ = probe_b_->command({"CLUSTER", "MYID"}).str;
    expect_ok(*probe_a_, {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
    expect_ok(*probe_a_, {"CLUSTER", "MEET", "127.0.0.1", std::to_string(b_->port()), std::to_string(bus_b_)});
    // The cluster state itself may stay "fail" for a moment (a master waits
    // before declaring itself writable); shard pub/sub is served regardless
    // (cluster-allow-pubsubshard-when-down), so only the handshake matters.
    if (!eventually([&] { return knows(*probe_a_, id_b_) && knows(*probe_b_, id_a_); }, 5s)) {
      throw std::runtime_error("the nodes did not meet:\n" + probe_a_->command({"CLUSTER", "NODES"}).str + "\n" +
                               probe_b_->command({"CLUSTER", "NODES"}).str);
    }
  }

  RedisServer& a() { return *a_; }
  RedisServer& b() { return *b_; }
  RedisProbe& probe_a() { return *probe_a_; }
  RedisProbe& probe_b() { return *probe_b_; }

  // Hands an empty slot to B as the last step of a resharding does: the new
  // owner first, then the old one.
  void move_slot_to_b(long long slot) {
    expect_ok(*probe_b_, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", id_b_});
    expect_ok(*probe_a_, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", id_b_});
  }

 private:
  std::unique_ptr<RedisServer> start_node(const std::string& name) {
    // A bus port taken between choosing and binding makes the server exit:
    // start over with another.
    for (int attempt = 0;; ++attempt) {
      std::string node_directory = directory_.path() + "/" + name + std::to_string(attempt);
      std::filesystem::create_directory(node_directory);
      std::uint16_t bus = free_port();
      try {
        auto server = std::make_unique<RedisServer>(
            std::vector<std::string>{"--cluster-enabled", "yes", "--cluster-config-file",
                                     node_directory + "/nodes.conf", "--cluster-port", std::to_string(bus)});
        (name == "a" ? bus_a_ : bus_b_) = bus;
        return server;
      } catch (const std::runtime_error&) {
        if (attempt == 2) throw;
      }
    }
  }

  static void expect_ok(RedisProbe& probe, const std::vector<std::string>& argv) {
    auto reply = probe.command(argv);
    if (reply.is_error()) throw std::runtime_error(argv[1] + " failed: " + reply.str);
  }

  // Whether `probe`'s node lists `id` as a connected peer (handshake done).
  static bool knows(RedisProbe& probe, const std::string& id) {
    std::istringstream lines(probe.command({"CLUSTER", "NODES"}).str);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(id, 0) == 0) {
        return line.find("handshake") == std::string::npos && line.find("noaddr") == std::string::npos &&
               line.find(" connected") != std::string::npos;
      }
    }
    return false;
  }

  TempDirectory directory_;
  std::uint16_t bus_a_ = 0;
  std::uint16_t bus_b_ = 0;
  std::unique_ptr<RedisServer> a_;
  std::unique_ptr<RedisServer> b_;
  std::unique_ptr<RedisProbe> probe_a_;
  std::unique_ptr<RedisProbe> probe_b_;
  std::string id_a_;
  std::string id_b_;
};

// Redis 7.0, seen by hand with redis-cli: when A gives up a slot (CLUSTER
// SETSLOT <slot> NODE <B>), it ends every shard subscription in that slot by
// sending ["sunsubscribe", channel, 0] on its own, and an SSUBSCRIBE to that
// channel on A is answered with "-MOVED <slot> <B's address>". PubSub then
// re-subscribes, is refused and falls back to polling.
TEST(LinkCluster, ASlotMovingAwayEndsTheShardSubscriptionWakesTheWaiterAndTellsWhereTheSlotWent) {
  TwoNodeCluster cluster;
  const std::string channel = "warden_test:moving";
  long long slot = cluster.probe_a().command({"CLUSTER", "KEYSLOT", channel}).integer;
  LogRecorder log;
  Waiter waiter;
  LoopHarness harness;
  auto options = options_for(cluster.a(), log, connection_role::subscriber);
  PubSub& pubsub = harness.pubsub(options, true);
  std::mutex mutex;
  std::vector<std::string> redirects;
  harness.run([&] {
    pubsub.on_redirect([&](const detail::Reply& refusal) {
      std::lock_guard<std::mutex> guard(mutex);
      redirects.push_back(refusal.str);
    });
    return true;
  });
  waiter.join(harness, pubsub, channel);
  ASSERT_TRUE(waiter.ready.wait_for_at_least(1, 3s)) << log.all();
  ASSERT_TRUE(harness.run([&] { return pubsub.subscribed(channel); }));
  ASSERT_TRUE(waiter.park(harness, pubsub, channel));
  auto shard = cluster.probe_a().command({"PUBSUB", "SHARDNUMSUB", channel});
  ASSERT_EQ(shard.elements.size(), 2u);
  ASSERT_EQ(shard.elements[1].integer, 1);
  long long ssubscribe_rejected = command_stat(cluster.probe_a(), "ssubscribe", "rejected_calls");

  cluster.move_slot_to_b(slot);

  // The unsolicited sunsubscribe wakes the waiter to re-poll at once.
  ASSERT_TRUE(waiter.woken.wait_for_at_least(1, 2s)) << log.all();
  EXPECT_TRUE(log.contains("ended the subscription to " + channel)) << log.all();
  // PubSub subscribed again and A answered MOVED: that is passed on (the
  // router learns where the slot went; the waiter joins B's subscriber
  // there), and is no reason to fall back to polling.
  const std::string moved = "MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(cluster.b().port());
  ASSERT_TRUE(eventually(
      [&] {
        std::lock_guard<std::mutex> guard(mutex);
        return !redirects.empty();
      },
      2s))
      << log.all();
  {
    std::lock_guard<std::mutex> guard(mutex);
    EXPECT_EQ(redirects.front(), moved);
  }
  EXPECT_FALSE(harness.run([&] { return pubsub.polling(); }));
  EXPECT_FALSE(harness.run([&] { return pubsub.subscribed(channel); }));
  EXPECT_EQ(command_stat(cluster.probe_a(), "ssubscribe", "rejected_calls"), ssubscribe_rejected + 1);
  EXPECT_EQ(cluster.probe_a().command({"PUBSUB", "SHARDNUMSUB", channel}).elements.at(1).integer, 0);
  // The connection itself stays up: nothing was dropped or re-made.
  EXPECT_FALSE(log.contains("lost")) << log.all();
}

}  // namespace
}  // namespace warden::test
