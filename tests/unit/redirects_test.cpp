// Following MOVED and ASK: where the command goes next, what the slot table
// learns, and when to stop.
#include <gtest/gtest.h>

#include <variant>

#include "topology/redirects.hpp"

namespace {

using warden::detail::NodeAddress;
using warden::detail::Redirects;
using warden::detail::Reply;
using warden::detail::SlotMap;

enum class action { deliver, resend, give_up };

// What the machine answered to one reply, read into one value for the
// checks; a patch_table is applied to `map`, as the router does.
struct Step {
  action what = action::deliver;
  NodeAddress to;
  bool asking = false;
  bool refresh = false;
};

Step on_reply(Redirects& redirects, const Reply& reply, const NodeAddress& from, SlotMap& map) {
  Step step;
  auto actions = redirects.on(Redirects::read(reply, from));
  EXPECT_FALSE(actions.empty());
  for (const auto& a : actions) {
    if (auto* patch = std::get_if<Redirects::patch_table>(&a)) {
      map.moved(patch->slot, patch->to);
    } else if (std::holds_alternative<Redirects::refresh_table>(a)) {
      step.refresh = true;
    } else if (auto* resend = std::get_if<Redirects::resend>(&a)) {
      step.what = action::resend;
      step.to = resend->to;
      step.asking = resend->asking;
    } else if (std::holds_alternative<Redirects::give_up>(a)) {
      step.what = action::give_up;
    }
  }
  return step;
}

const NodeAddress first{"127.0.0.1", 7000};

SlotMap everything_on_first() {
  Reply node;
  node.type = Reply::kind::array;
  node.elements = {Reply::make_string("127.0.0.1"), Reply::make_integer(7000)};
  Reply range;
  range.type = Reply::kind::array;
  range.elements = {Reply::make_integer(0), Reply::make_integer(16383), node};
  Reply slots;
  slots.type = Reply::kind::array;
  slots.elements = {range};
  return *SlotMap::from_cluster_slots(slots, first, nullptr);
}

TEST(Redirects, AnyOtherReplyIsDelivered) {
  auto map = everything_on_first();
  Redirects redirects(5);
  EXPECT_EQ(on_reply(redirects, Reply::make_integer(1), first, map).what, action::deliver);
  EXPECT_EQ(on_reply(redirects, Reply::make_error("ERR unknown command"), first, map).what, action::deliver);
  // Unreadable redirections are errors like any other, not guesses.
  EXPECT_EQ(on_reply(redirects, Reply::make_error("MOVED 3999"), first, map).what, action::deliver);
  EXPECT_EQ(redirects.taken(), 0);
}

TEST(Redirects, MovedResendsThereAndPatchesTheSlotForGood) {
  auto map = everything_on_first();
  Redirects redirects(5);
  auto step = on_reply(redirects, Reply::make_error("MOVED 3999 127.0.0.1:7001"), first, map);
  EXPECT_EQ(step.what, action::resend);
  EXPECT_EQ(step.to, (NodeAddress{"127.0.0.1", 7001}));
  EXPECT_FALSE(step.asking);
  EXPECT_TRUE(step.refresh);
  EXPECT_EQ(*map.master_of(3999), (NodeAddress{"127.0.0.1", 7001}));
  EXPECT_EQ(*map.master_of(4000), first);
}

TEST(Redirects, AskResendsOnceWithAskingAndLeavesTheTable) {
  auto map = everything_on_first();
  Redirects redirects(5);
  auto step = on_reply(redirects, Reply::make_error("ASK 3999 127.0.0.1:7002"), first, map);
  EXPECT_EQ(step.what, action::resend);
  EXPECT_EQ(step.to, (NodeAddress{"127.0.0.1", 7002}));
  EXPECT_TRUE(step.asking);
  EXPECT_FALSE(step.refresh);
  EXPECT_EQ(*map.master_of(3999), first);
}

TEST(Redirects, AnAddressWithoutAHostIsTheNodeThatAnswered) {
  auto map = everything_on_first();
  Redirects redirects(5);
  auto step = on_reply(redirects, Reply::make_error("MOVED 12 :7003"), first, map);
  EXPECT_EQ(step.to, (NodeAddress{"127.0.0.1", 7003}));
}

TEST(Redirects, TheRedirectionPastTheLimitGivesUp) {
  auto map = everything_on_first();
  Redirects redirects(2);
  auto moved = Reply::make_error("MOVED 1 127.0.0.1:7001");
  EXPECT_EQ(on_reply(redirects, moved, first, map).what, action::resend);
  EXPECT_EQ(on_reply(redirects, Reply::make_error("ASK 1 127.0.0.1:7002"), first, map).what, action::resend);
  auto step = on_reply(redirects, moved, first, map);
  EXPECT_EQ(step.what, action::give_up);
  EXPECT_TRUE(step.refresh);
  EXPECT_EQ(redirects.taken(), 2);

  Redirects none(0);
  EXPECT_EQ(on_reply(none, moved, first, map).what, action::give_up);
}

}  // namespace
