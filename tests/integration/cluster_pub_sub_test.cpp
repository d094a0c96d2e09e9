// A waiter on a Redis Cluster is woken by the unlock message in each pub/sub
// mode (automatic, sharded on, sharded off).
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

// A waiter on another Client is woken by the unlock message, in the pub/sub
// mode asked for, long before the holder's lease (30 s) would run out.
class ClusterPubSub : public ClusterLocks, public ::testing::WithParamInterface<sharded_pubsub> {};

TEST_P(ClusterPubSub, AWaiterIsWokenByTheUnlockMessage) {
  const bool sharded = GetParam() != sharded_pubsub::off;  // automatic: Redis 7 has shard channels
  Config config = cluster_config(cluster(), GetParam());
  Acquires acquires;
  acquires.watch(config);
  Client holder(config);
  Client waiter(config);
  auto name = name_on(cluster(), 1, "woken-" + std::to_string(static_cast<int>(GetParam())) + "-");
  const std::string channel = keys::lock_channel(name);
  RedisProbe master(cluster().first_master(1));

  Lock held = holder.get_lock(name);
  held.lock();
  auto started = steady::now();
  auto got = std::async(std::launch::async, [&] {
    Lock lock = waiter.get_lock(name);
    if (!lock.try_lock_for(20s)) return false;
    lock.unlock();
    return true;
  });
  // Subscribed on the master of the channel's slot, with the asked-for kind.
  ASSERT_TRUE(eventually([&] { return (sharded ? shard_subscribers(master, channel) : subscribers(master, channel)) == 1; }));
  EXPECT_EQ(sharded ? subscribers(master, channel) : shard_subscribers(master, channel), 0);
  held.unlock();
  ASSERT_TRUE(got.get());
  EXPECT_LT(elapsed_ms(started), 10'000);
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

INSTANTIATE_TEST_SUITE_P(Modes, ClusterPubSub,
                         ::testing::Values(sharded_pubsub::automatic, sharded_pubsub::on, sharded_pubsub::off),
                         [](const ::testing::TestParamInfo<sharded_pubsub>& info) {
                           switch (info.param) {
                             case sharded_pubsub::automatic: return std::string("automatic");
                             case sharded_pubsub::on: return std::string("on");
                             case sharded_pubsub::off: return std::string("off");
                           }
                           return std::string("unknown");
                         });

}  // namespace
}  // namespace warden::test
