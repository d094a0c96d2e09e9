// ChannelState: the subscription state of one pub/sub channel.
#include <gtest/gtest.h>

#include <variant>

#include "io/channel_state.hpp"

namespace {

using warden::detail::ChannelState;

// What the machine answered to one event: nothing, or its one action.
enum class action { none, subscribe, unsubscribe };

action act(const ChannelState::actions& actions) {
  EXPECT_LE(actions.size(), 1u);
  if (actions.empty()) return action::none;
  return std::holds_alternative<ChannelState::subscribe>(actions[0]) ? action::subscribe : action::unsubscribe;
}

// A channel whose SUBSCRIBE was sent and confirmed for one user.
ChannelState subscribed_with_one_user() {
  ChannelState channel;
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.active());
  return channel;
}

TEST(ChannelState, StartsIdle) {
  ChannelState channel;
  EXPECT_TRUE(channel.idle());
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(channel.users(), 0);
}

TEST(ChannelState, FirstWantSubscribes) {
  ChannelState channel;
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(channel.users(), 1);
  EXPECT_FALSE(channel.active());  // not confirmed yet
  EXPECT_FALSE(channel.idle());
}

TEST(ChannelState, SubscribedMakesItActive) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.active());
  EXPECT_FALSE(channel.idle());
}

TEST(ChannelState, SecondWantSendsNothing) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);  // while subscribing
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);  // while subscribed
  EXPECT_EQ(channel.users(), 3);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, WantWhileLinkDownWaitsForLinkUp) {
  ChannelState channel;
  EXPECT_EQ(act(channel.on(ChannelState::wanted{false})), action::none);
  EXPECT_EQ(channel.users(), 1);
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, LastUnwantUnsubscribes) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);  // one user left
  EXPECT_TRUE(channel.active());
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::unsubscribe);
  EXPECT_EQ(channel.users(), 0);
  EXPECT_FALSE(channel.active());
  EXPECT_FALSE(channel.idle());  // UNSUBSCRIBE in flight
  EXPECT_EQ(act(channel.on(ChannelState::unsubscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, WantWhileUnsubscribingSendsNoSecondCommand) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(act(channel.on(ChannelState::unwanted{})), action::unsubscribe);
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);  // never a SUBSCRIBE over the UNSUBSCRIBE
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(act(channel.on(ChannelState::unsubscribe_confirmed{})),
            action::subscribe);  // acted on when the reply arrives
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.active());
  EXPECT_EQ(channel.users(), 2);
}

TEST(ChannelState, UnwantWhileSubscribingUnsubscribesOnConfirmation) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);  // never an UNSUBSCRIBE over the SUBSCRIBE
  EXPECT_EQ(channel.users(), 0);
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::unsubscribe);
  EXPECT_FALSE(channel.active());
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(act(channel.on(ChannelState::unsubscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, MindChangedTwiceWhileInFlightEndsWhereItStarted) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);  // a user again: stay subscribed
  EXPECT_TRUE(channel.active());
  EXPECT_EQ(channel.users(), 1);
}

TEST(ChannelState, UnwantTwiceWhileUnsubscribingSendsNothing) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(act(channel.on(ChannelState::unwanted{})), action::unsubscribe);
  EXPECT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::unsubscribe_confirmed{})), action::none);  // nobody wants it any more
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, UnwantWithoutUsersIsHarmless) {
  ChannelState channel;
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);
  EXPECT_EQ(channel.users(), 0);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, StrayConfirmationsAreIgnored) {
  ChannelState channel;
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::unsubscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.idle());
  EXPECT_FALSE(channel.active());

  ChannelState active = subscribed_with_one_user();
  EXPECT_EQ(act(active.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_EQ(act(active.on(ChannelState::unsubscribe_confirmed{})), action::none);
  EXPECT_TRUE(active.active());
}

TEST(ChannelState, LinkDownThenUpWithUsersResubscribes) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(act(channel.on(ChannelState::link_lost{})), action::none);
  EXPECT_FALSE(channel.active());
  EXPECT_FALSE(channel.idle());  // still wanted
  EXPECT_EQ(channel.users(), 1);
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, LinkDownWhileSubscribingResubscribesOnLinkUp) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::link_lost{})), action::none);  // the SUBSCRIBE is lost with the connection
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::subscribe);
}

TEST(ChannelState, LinkDownWhileUnsubscribingWithoutUsersGoesIdle) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(act(channel.on(ChannelState::unwanted{})), action::unsubscribe);
  EXPECT_EQ(act(channel.on(ChannelState::link_lost{})), action::none);
  EXPECT_TRUE(channel.idle());
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, LinkDownWhileUnsubscribingWithNewUserResubscribesOnLinkUp) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(act(channel.on(ChannelState::unwanted{})), action::unsubscribe);
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::link_lost{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::subscribe);
}

TEST(ChannelState, LinkUpWithoutUsersDoesNothing) {
  ChannelState channel;
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, UsersLeavingWhileLinkDownSendNothing) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(act(channel.on(ChannelState::link_lost{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);  // the server already forgot the subscription
  EXPECT_TRUE(channel.idle());
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::none);
}

TEST(ChannelState, LinkUpWhileAlreadySubscribingSendsNothing) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::none);
  ASSERT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, IdleOnlyWhenUnusedAndNothingInFlight) {
  ChannelState channel;
  EXPECT_TRUE(channel.idle());
  act(channel.on(ChannelState::wanted{true}));
  EXPECT_FALSE(channel.idle());  // subscribing, one user
  act(channel.on(ChannelState::unwanted{}));
  EXPECT_FALSE(channel.idle());  // subscribing, no user
  act(channel.on(ChannelState::subscribe_confirmed{}));
  EXPECT_FALSE(channel.idle());  // unsubscribing
  act(channel.on(ChannelState::unsubscribe_confirmed{}));
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, ARefusedSubscribeLeavesTheChannelUnsubscribedAndFreeable) {
  ChannelState channel;
  ASSERT_EQ(act(channel.on(ChannelState::wanted{true})), action::subscribe);
  EXPECT_EQ(act(channel.on(ChannelState::refused{})), action::none);
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::none);  // nothing to unsubscribe from
  EXPECT_TRUE(channel.idle());
}

}  // namespace

namespace {

TEST(ChannelState, DroppedByTheServerWhileNeededSubscribesAgain) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(act(channel.on(ChannelState::dropped{true})), action::subscribe);
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(act(channel.on(ChannelState::subscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, DroppedWhileTheLinkIsDownWaitsForTheLink) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(act(channel.on(ChannelState::dropped{false})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::link_restored{})), action::subscribe);
}

TEST(ChannelState, DroppedWithACommandInFlightLeavesItToThatCommand) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(act(channel.on(ChannelState::unwanted{})), action::unsubscribe);
  EXPECT_EQ(act(channel.on(ChannelState::dropped{true})), action::none);
  EXPECT_EQ(act(channel.on(ChannelState::unsubscribe_confirmed{})), action::none);
  EXPECT_TRUE(channel.idle());
}

}  // namespace
