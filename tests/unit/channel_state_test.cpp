// ChannelState: the subscription state of one pub/sub channel.
#include <gtest/gtest.h>

#include "io/channel_state.hpp"

namespace {

using warden::detail::ChannelState;
using action = ChannelState::action;

// A channel whose SUBSCRIBE was sent and confirmed for one user.
ChannelState subscribed_with_one_user() {
  ChannelState channel;
  EXPECT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.subscribed(), action::none);
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
  EXPECT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.users(), 1);
  EXPECT_FALSE(channel.active());  // not confirmed yet
  EXPECT_FALSE(channel.idle());
}

TEST(ChannelState, SubscribedMakesItActive) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_TRUE(channel.active());
  EXPECT_FALSE(channel.idle());
}

TEST(ChannelState, SecondWantSendsNothing) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.want(true), action::none);  // while subscribing
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_EQ(channel.want(true), action::none);  // while subscribed
  EXPECT_EQ(channel.users(), 3);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, WantWhileLinkDownWaitsForLinkUp) {
  ChannelState channel;
  EXPECT_EQ(channel.want(false), action::none);
  EXPECT_EQ(channel.users(), 1);
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(channel.link_up(), action::subscribe);
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, LastUnwantUnsubscribes) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(channel.want(true), action::none);
  EXPECT_EQ(channel.unwant(), action::none);  // one user left
  EXPECT_TRUE(channel.active());
  EXPECT_EQ(channel.unwant(), action::unsubscribe);
  EXPECT_EQ(channel.users(), 0);
  EXPECT_FALSE(channel.active());
  EXPECT_FALSE(channel.idle());  // UNSUBSCRIBE in flight
  EXPECT_EQ(channel.unsubscribed(), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, WantWhileUnsubscribingSendsNoSecondCommand) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(channel.unwant(), action::unsubscribe);
  EXPECT_EQ(channel.want(true), action::none);  // never a SUBSCRIBE over the UNSUBSCRIBE
  EXPECT_EQ(channel.want(true), action::none);
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(channel.unsubscribed(), action::subscribe);  // acted on when the reply arrives
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_TRUE(channel.active());
  EXPECT_EQ(channel.users(), 2);
}

TEST(ChannelState, UnwantWhileSubscribingUnsubscribesOnConfirmation) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.unwant(), action::none);  // never an UNSUBSCRIBE over the SUBSCRIBE
  EXPECT_EQ(channel.users(), 0);
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(channel.subscribed(), action::unsubscribe);
  EXPECT_FALSE(channel.active());
  EXPECT_FALSE(channel.idle());
  EXPECT_EQ(channel.unsubscribed(), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, MindChangedTwiceWhileInFlightEndsWhereItStarted) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.unwant(), action::none);
  EXPECT_EQ(channel.want(true), action::none);
  EXPECT_EQ(channel.subscribed(), action::none);  // a user again: stay subscribed
  EXPECT_TRUE(channel.active());
  EXPECT_EQ(channel.users(), 1);
}

TEST(ChannelState, UnwantTwiceWhileUnsubscribingSendsNothing) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(channel.unwant(), action::unsubscribe);
  EXPECT_EQ(channel.want(true), action::none);
  EXPECT_EQ(channel.unwant(), action::none);
  EXPECT_EQ(channel.unsubscribed(), action::none);  // nobody wants it any more
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, UnwantWithoutUsersIsHarmless) {
  ChannelState channel;
  EXPECT_EQ(channel.unwant(), action::none);
  EXPECT_EQ(channel.users(), 0);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, StrayConfirmationsAreIgnored) {
  ChannelState channel;
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_EQ(channel.unsubscribed(), action::none);
  EXPECT_TRUE(channel.idle());
  EXPECT_FALSE(channel.active());

  ChannelState active = subscribed_with_one_user();
  EXPECT_EQ(active.subscribed(), action::none);
  EXPECT_EQ(active.unsubscribed(), action::none);
  EXPECT_TRUE(active.active());
}

TEST(ChannelState, LinkDownThenUpWithUsersResubscribes) {
  ChannelState channel = subscribed_with_one_user();
  channel.link_down();
  EXPECT_FALSE(channel.active());
  EXPECT_FALSE(channel.idle());  // still wanted
  EXPECT_EQ(channel.users(), 1);
  EXPECT_EQ(channel.link_up(), action::subscribe);
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, LinkDownWhileSubscribingResubscribesOnLinkUp) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  channel.link_down();  // the SUBSCRIBE is lost with the connection
  EXPECT_EQ(channel.link_up(), action::subscribe);
}

TEST(ChannelState, LinkDownWhileUnsubscribingWithoutUsersGoesIdle) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(channel.unwant(), action::unsubscribe);
  channel.link_down();
  EXPECT_TRUE(channel.idle());
  EXPECT_EQ(channel.link_up(), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, LinkDownWhileUnsubscribingWithNewUserResubscribesOnLinkUp) {
  ChannelState channel = subscribed_with_one_user();
  ASSERT_EQ(channel.unwant(), action::unsubscribe);
  ASSERT_EQ(channel.want(true), action::none);
  channel.link_down();
  EXPECT_EQ(channel.link_up(), action::subscribe);
}

TEST(ChannelState, LinkUpWithoutUsersDoesNothing) {
  ChannelState channel;
  EXPECT_EQ(channel.link_up(), action::none);
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, UsersLeavingWhileLinkDownSendNothing) {
  ChannelState channel = subscribed_with_one_user();
  channel.link_down();
  EXPECT_EQ(channel.unwant(), action::none);  // the server already forgot the subscription
  EXPECT_TRUE(channel.idle());
  EXPECT_EQ(channel.link_up(), action::none);
}

TEST(ChannelState, LinkUpWhileAlreadySubscribingSendsNothing) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  EXPECT_EQ(channel.link_up(), action::none);
  ASSERT_EQ(channel.subscribed(), action::none);
  EXPECT_EQ(channel.link_up(), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, IdleOnlyWhenUnusedAndNothingInFlight) {
  ChannelState channel;
  EXPECT_TRUE(channel.idle());
  channel.want(true);
  EXPECT_FALSE(channel.idle());  // subscribing, one user
  channel.unwant();
  EXPECT_FALSE(channel.idle());  // subscribing, no user
  channel.subscribed();
  EXPECT_FALSE(channel.idle());  // unsubscribing
  channel.unsubscribed();
  EXPECT_TRUE(channel.idle());
}

TEST(ChannelState, ARefusedSubscribeLeavesTheChannelUnsubscribedAndFreeable) {
  ChannelState channel;
  ASSERT_EQ(channel.want(true), action::subscribe);
  channel.refused();
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(channel.unwant(), action::none);  // nothing to unsubscribe from
  EXPECT_TRUE(channel.idle());
}

}  // namespace

namespace {

TEST(ChannelState, DroppedByTheServerWhileNeededSubscribesAgain) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(channel.dropped(true), action::subscribe);
  EXPECT_FALSE(channel.active());
  EXPECT_EQ(channel.subscribed(), action::none);
  EXPECT_TRUE(channel.active());
}

TEST(ChannelState, DroppedWhileTheLinkIsDownWaitsForTheLink) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(channel.dropped(false), action::none);
  EXPECT_EQ(channel.link_up(), action::subscribe);
}

TEST(ChannelState, DroppedWithACommandInFlightLeavesItToThatCommand) {
  ChannelState channel = subscribed_with_one_user();
  EXPECT_EQ(channel.unwant(), action::unsubscribe);
  EXPECT_EQ(channel.dropped(true), action::none);
  EXPECT_EQ(channel.unsubscribed(), action::none);
  EXPECT_TRUE(channel.idle());
}

}  // namespace
