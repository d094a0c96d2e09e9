// The slot map: CLUSTER SLOTS replies read into who serves which slot,
// corrected by MOVED, with uncovered slots and odd replies reported.
#include <gtest/gtest.h>

#include "lock/keys.hpp"
#include "topology/key_slot.hpp"
#include "topology/slot_map.hpp"

namespace {

using warden::detail::NodeAddress;
using warden::detail::Reply;
using warden::detail::SlotMap;

Reply array(std::vector<Reply> elements) {
  Reply r;
  r.type = Reply::kind::array;
  r.elements = std::move(elements);
  return r;
}
Reply integer(long long value) { return Reply::make_integer(value); }
Reply text(std::string value) { return Reply::make_string(std::move(value)); }

Reply node(std::string host, long long port, std::string id = "0123456789abcdef") {
  return array({text(std::move(host)), integer(port), text(std::move(id))});
}

Reply range(long long first, long long last, Reply master, std::vector<Reply> replicas = {}) {
  std::vector<Reply> elements{integer(first), integer(last), std::move(master)};
  for (auto& replica : replicas) elements.push_back(std::move(replica));
  return array(std::move(elements));
}

const NodeAddress asked{"127.0.0.1", 7000};

// Three masters splitting the slots as a fresh cluster does, one replica each.
Reply three_masters() {
  return array({range(0, 5460, node("127.0.0.1", 7000), {node("127.0.0.1", 7003)}),
                range(5461, 10922, node("127.0.0.1", 7001), {node("127.0.0.1", 7004)}),
                range(10923, 16383, node("127.0.0.1", 7002), {node("127.0.0.1", 7005)})});
}

SlotMap parse(const Reply& reply) {
  std::string problem;
  auto map = SlotMap::from_cluster_slots(reply, asked, &problem);
  EXPECT_TRUE(map) << problem;
  return map ? *map : SlotMap{};
}

TEST(SlotMap, EachSlotGoesToTheMasterOfItsRange) {
  auto map = parse(three_masters());
  EXPECT_EQ(*map.master_of(0), (NodeAddress{"127.0.0.1", 7000}));
  EXPECT_EQ(*map.master_of(5460), (NodeAddress{"127.0.0.1", 7000}));
  EXPECT_EQ(*map.master_of(5461), (NodeAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(*map.master_of(16383), (NodeAddress{"127.0.0.1", 7002}));
  EXPECT_EQ(map.replicas_of(10923), 1u);
  EXPECT_EQ(map.masters().size(), 3u);
  EXPECT_TRUE(map.uncovered().empty());
}

TEST(SlotMap, AKeyIsRoutedByTheSlotOfItsHashTag) {
  auto map = parse(three_masters());
  // Every key of one lock shares its slot, so they share a master.
  auto slot = warden::detail::keys::slot("{orders}");
  EXPECT_EQ(slot, warden::detail::keys::slot("redisson_lock__channel:{orders}"));
  EXPECT_EQ(map.master_of(slot), map.master_of(warden::detail::keys::slot("redisson_lock_queue:{orders}")));
}

TEST(SlotMap, AMasterServingSeveralRangesIsOneNode) {
  auto map = parse(array({range(0, 99, node("127.0.0.1", 7000)), range(100, 199, node("127.0.0.1", 7001)),
                          range(200, 16383, node("127.0.0.1", 7000))}));
  EXPECT_EQ(map.masters().size(), 2u);
  EXPECT_EQ(*map.master_of(250), (NodeAddress{"127.0.0.1", 7000}));
}

TEST(SlotMap, UncoveredSlotsAreReportedAsRanges) {
  auto map = parse(array({range(0, 99, node("127.0.0.1", 7000)), range(200, 16000, node("127.0.0.1", 7001))}));
  EXPECT_EQ(map.master_of(150), nullptr);
  auto gaps = map.uncovered();
  ASSERT_EQ(gaps.size(), 2u);
  EXPECT_EQ(gaps[0].first, 100);
  EXPECT_EQ(gaps[0].last, 199);
  EXPECT_EQ(gaps[1].first, 16001);
  EXPECT_EQ(gaps[1].last, 16383);
}

TEST(SlotMap, ANodeWithoutSlotsServesNothing) {
  auto map = parse(array({}));
  EXPECT_TRUE(map.masters().empty());
  ASSERT_EQ(map.uncovered().size(), 1u);
  EXPECT_EQ(map.uncovered()[0].last, 16383);
}

TEST(SlotMap, AnEmptyOrUnknownHostIsTheNodeThatAnswered) {
  auto map = parse(array({range(0, 8191, node("", 7000)), range(8192, 16383, node("?", 7001))}));
  EXPECT_EQ(*map.master_of(0), (NodeAddress{"127.0.0.1", 7000}));
  EXPECT_EQ(*map.master_of(9000), (NodeAddress{"127.0.0.1", 7001}));
}

TEST(SlotMap, MovedPatchesOneSlotAndRetiresAMasterLeftWithNone) {
  auto map = parse(array({range(0, 0, node("127.0.0.1", 7000)), range(1, 16383, node("127.0.0.1", 7001))}));
  EXPECT_TRUE(map.moved(0, NodeAddress{"127.0.0.1", 7001}));
  EXPECT_FALSE(map.moved(0, NodeAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(*map.master_of(0), (NodeAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(map.masters(), (std::vector<NodeAddress>{{"127.0.0.1", 7001}}));
  // A master first heard of in a MOVED has no known replicas yet.
  EXPECT_TRUE(map.moved(1, NodeAddress{"127.0.0.1", 7009}));
  EXPECT_EQ(map.replicas_of(1), 0u);
}

TEST(SlotMap, AnIpv6AddressIsWrittenInBrackets) {
  EXPECT_EQ((NodeAddress{"::1", 7000}).to_string(), "[::1]:7000");
  EXPECT_EQ((NodeAddress{"127.0.0.1", 7000}).to_string(), "127.0.0.1:7000");
}

TEST(SlotMap, RepliesOfAnotherShapeAreRefusedWithAReason) {
  std::string problem;
  // A node that is not in cluster mode.
  EXPECT_FALSE(SlotMap::from_cluster_slots(Reply::make_error("ERR This instance has cluster support disabled"), asked,
                                           &problem));
  EXPECT_NE(problem.find("cluster support disabled"), std::string::npos);
  EXPECT_FALSE(SlotMap::from_cluster_slots(text("OK"), asked, &problem));
  // A slot outside 0..16383, a reversed range, a master without a port.
  EXPECT_FALSE(SlotMap::from_cluster_slots(array({range(0, 16384, node("h", 1))}), asked, &problem));
  EXPECT_FALSE(SlotMap::from_cluster_slots(array({range(10, 5, node("h", 1))}), asked, &problem));
  EXPECT_FALSE(SlotMap::from_cluster_slots(array({range(0, 5, array({text("h")}))}), asked, &problem));
  EXPECT_FALSE(SlotMap::from_cluster_slots(array({range(0, 5, node("h", 0))}), asked, &problem));
  EXPECT_FALSE(SlotMap::from_cluster_slots(array({array({integer(0), integer(5)})}), asked, &problem));
}

}  // namespace
