// A waiter on a Redis Cluster is woken by the unlock message in each pub/sub
// mode (automatic, sharded on, sharded off), also by a release sent before the
// releasing Client's first slot table.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <system_error>

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
  ASSERT_TRUE(
      eventually([&] { return (sharded ? shard_subscribers(master, channel) : subscribers(master, channel)) == 1; }));
  EXPECT_EQ(sharded ? subscribers(master, channel) : shard_subscribers(master, channel), 0);
  held.unlock();
  ASSERT_TRUE(got.get());
  EXPECT_LT(elapsed_ms(started), 10'000);
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

// A loopback port that takes connections (the kernel completes them) and
// never answers: as a cluster's first seed it holds a Client's first slot
// table back until the Client gives up on it and asks the next seed.
class SilentSeed {
 public:
  SilentSeed() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0 || listen(fd_, 8) != 0) {
      int error = errno;
      close(fd_);
      throw std::system_error(error, std::generic_category(), "listen");
    }
    port_ = ntohs(address.sin_port);
  }
  ~SilentSeed() { close(fd_); }
  SilentSeed(const SilentSeed&) = delete;
  SilentSeed& operator=(const SilentSeed&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// A release that a Client sends before its first slot table says which
// pub/sub mode the cluster uses still publishes with the mode's command: the
// waiter (on another Client, subscribed the asked-for way) is woken by it.
TEST_P(ClusterPubSub, AReleaseSentBeforeTheFirstSlotTableWakesTheWaiter) {
  Config config = cluster_config(cluster(), GetParam());
  Acquires acquires;
  acquires.watch(config);
  Client holder(config);
  Client waiter(config);
  auto name = name_on(cluster(), 2, "early-" + std::to_string(static_cast<int>(GetParam())) + "-");
  const std::string channel = keys::lock_channel(name);
  const bool sharded = GetParam() != sharded_pubsub::off;
  RedisProbe master(cluster().first_master(2));

  Lock held = holder.get_lock(name);
  held.lock();
  auto got = std::async(std::launch::async, [&] {
    Lock lock = waiter.get_lock(name);
    if (!lock.try_lock_for(20s)) return false;
    lock.unlock();
    return true;
  });
  ASSERT_TRUE(
      eventually([&] { return (sharded ? shard_subscribers(master, channel) : subscribers(master, channel)) == 1; }));

  // A third Client, whose first seed never answers, force-releases the lock
  // as soon as it is made: the release script is built long before its
  // table (the silent seed is given up on after a second at the earliest).
  SilentSeed silent;
  Config late = cluster_config(cluster(), GetParam());
  late.command_timeout = 5s;  // the release outlasts the wait for the silent seed (1 s)
  late.cluster.seeds.insert(late.cluster.seeds.begin(), endpoint{"127.0.0.1", silent.port()});
  Client releaser(late);
  auto started = steady::now();
  EXPECT_TRUE(releaser.get_lock(name).force_unlock());
  EXPECT_GE(elapsed_ms(started), 500) << "the release did not wait for the first slot table";

  ASSERT_TRUE(got.get());
  EXPECT_EQ(acquires.last_wake(name), wake_cause::message);
}

INSTANTIATE_TEST_SUITE_P(Modes, ClusterPubSub,
                         ::testing::Values(sharded_pubsub::automatic, sharded_pubsub::on, sharded_pubsub::off),
                         [](const ::testing::TestParamInfo<sharded_pubsub>& info) {
                           switch (info.param) {
                             case sharded_pubsub::automatic:
                               return std::string("automatic");
                             case sharded_pubsub::on:
                               return std::string("on");
                             case sharded_pubsub::off:
                               return std::string("off");
                           }
                           return std::string("unknown");
                         });

}  // namespace
}  // namespace warden::test
