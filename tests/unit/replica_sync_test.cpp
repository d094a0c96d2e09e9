// Config::replica_sync as a node applies it: the replicas a write needs,
// ROLE's answer read, the shortfalls in words.
#include <gtest/gtest.h>

#include "topology/replica_sync.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;

Reply role_of_master(int replicas) {
  Reply role;
  role.type = Reply::kind::array;
  role.elements.push_back(Reply::make_string("master"));
  role.elements.push_back(Reply::make_integer(1234));
  Reply list;
  list.type = Reply::kind::array;
  for (int i = 0; i < replicas; ++i) {
    Reply replica;
    replica.type = Reply::kind::array;
    replica.elements = {Reply::make_string("127.0.0.1"), Reply::make_string(std::to_string(7000 + i)),
                        Reply::make_string("1234")};
    list.elements.push_back(replica);
  }
  role.elements.push_back(list);
  return role;
}

TEST(ReplicaSyncPolicy, AutomaticIsOnWhereAFailoverCanHappen) {
  ReplicaSyncConfig config;
  EXPECT_EQ(replica_policy(config, true).mode, replica_sync_mode::at_least_one);
  EXPECT_EQ(replica_policy(config, false).mode, replica_sync_mode::off);
  EXPECT_FALSE(replica_policy(config, false).on());
  config.mode = replica_sync_mode::all_known;
  config.timeout = 250ms;
  auto policy = replica_policy(config, false);
  EXPECT_EQ(policy.mode, replica_sync_mode::all_known);
  EXPECT_EQ(policy.timeout, 250ms);
}

TEST(ReplicaSyncPolicy, NeededReplicasPerMode) {
  ReplicaPolicy policy;
  policy.mode = replica_sync_mode::at_least_one;
  EXPECT_EQ(policy.needed(3), 1);
  EXPECT_EQ(policy.needed(std::nullopt), 1);
  policy.mode = replica_sync_mode::all_known;
  EXPECT_EQ(policy.needed(3), 3);
  EXPECT_EQ(policy.needed(0), 1);  // a master without replicas does not meet it
  EXPECT_EQ(policy.needed(std::nullopt), 1);
  policy.mode = replica_sync_mode::count;
  policy.replicas = 2;
  EXPECT_EQ(policy.needed(5), 2);
  EXPECT_EQ(policy.describe(), "2 replicas");
  policy.mode = replica_sync_mode::off;
  EXPECT_EQ(policy.needed(5), 0);
}

TEST(ReplicaSyncAttachedReplicas, ReadFromRole) {
  EXPECT_EQ(attached_replicas(role_of_master(0)), 0);
  EXPECT_EQ(attached_replicas(role_of_master(2)), 2);
  // A replica (or anything but a master) has none to offer.
  Reply replica;
  replica.type = Reply::kind::array;
  replica.elements = {Reply::make_string("slave"), Reply::make_string("127.0.0.1"), Reply::make_integer(6379),
                      Reply::make_string("connected"), Reply::make_integer(10)};
  EXPECT_EQ(attached_replicas(replica), 0);
  // Not ROLE's answer: unknown.
  EXPECT_EQ(attached_replicas(Reply::make_error("NOPERM this user has no permissions to run the 'role' command")),
            std::nullopt);
  Reply truncated = role_of_master(1);
  truncated.elements.pop_back();
  EXPECT_EQ(attached_replicas(truncated), std::nullopt);
}

TEST(ReplicaSyncShortfall, SaysWhatFellShort) {
  ReplicaPolicy policy;
  policy.mode = replica_sync_mode::at_least_one;
  EXPECT_EQ(too_few_attached("127.0.0.1:6380", 0, 1, policy),
            "127.0.0.1:6380 has 0 replicas attached and replica_sync (at-least-one) needs 1");
  EXPECT_EQ(too_few_acknowledged(0, 1, 1000ms), "0 of 1 replica acknowledged it within 1000 ms");
  EXPECT_EQ(too_few_acknowledged(1, 2, 300ms), "1 of 2 replicas acknowledged it within 300 ms");
}

}  // namespace
}  // namespace warden::detail
