// SettlePacer: at most a few settles of lost attempts in flight, the rest
// sent in their turn as answers come.
#include <gtest/gtest.h>

#include <variant>

#include "lock/settle_pacer.hpp"

namespace {

using warden::detail::SettlePacer;

// Whether the machine said to send one now.
bool sends(const SettlePacer::actions& actions) {
  EXPECT_LE(actions.size(), 1u);
  return actions.size() == 1 && std::holds_alternative<SettlePacer::send_oldest>(actions[0]);
}

TEST(SettlePacer, SendsAtOnceBelowTheLimit) {
  SettlePacer pacer(2);
  EXPECT_TRUE(sends(pacer.on(SettlePacer::wanted{})));
  EXPECT_TRUE(sends(pacer.on(SettlePacer::wanted{})));
  EXPECT_EQ(pacer.in_flight(), 2u);
  EXPECT_EQ(pacer.waiting(), 0u);
}

TEST(SettlePacer, HoldsTheRestUntilAnAnswer) {
  SettlePacer pacer(2);
  pacer.on(SettlePacer::wanted{});
  pacer.on(SettlePacer::wanted{});
  EXPECT_FALSE(sends(pacer.on(SettlePacer::wanted{})));
  EXPECT_FALSE(sends(pacer.on(SettlePacer::wanted{})));
  EXPECT_EQ(pacer.waiting(), 2u);
  // Each answer lets exactly one more go.
  EXPECT_TRUE(sends(pacer.on(SettlePacer::answered{})));
  EXPECT_EQ(pacer.in_flight(), 2u);
  EXPECT_EQ(pacer.waiting(), 1u);
  EXPECT_TRUE(sends(pacer.on(SettlePacer::answered{})));
  EXPECT_FALSE(sends(pacer.on(SettlePacer::answered{})));
  EXPECT_FALSE(sends(pacer.on(SettlePacer::answered{})));
  EXPECT_EQ(pacer.in_flight(), 0u);
  EXPECT_EQ(pacer.waiting(), 0u);
}

TEST(SettlePacer, ANewcomerWaitsBehindThoseWaiting) {
  SettlePacer pacer(1);
  pacer.on(SettlePacer::wanted{});
  EXPECT_FALSE(sends(pacer.on(SettlePacer::wanted{})));
  // The answer sends the oldest waiting one, not the newcomer that follows.
  EXPECT_TRUE(sends(pacer.on(SettlePacer::answered{})));
  EXPECT_FALSE(sends(pacer.on(SettlePacer::wanted{})));
  EXPECT_EQ(pacer.waiting(), 1u);
}

TEST(SettlePacer, ALimitOfZeroStillSendsOneAtATime) {
  SettlePacer pacer(0);
  EXPECT_EQ(pacer.limit(), 1u);
  EXPECT_TRUE(sends(pacer.on(SettlePacer::wanted{})));
  EXPECT_FALSE(sends(pacer.on(SettlePacer::wanted{})));
}

TEST(SettlePacer, AnUnexpectedAnswerIsHarmless) {
  SettlePacer pacer(1);
  EXPECT_FALSE(sends(pacer.on(SettlePacer::answered{})));
  EXPECT_EQ(pacer.in_flight(), 0u);
  EXPECT_TRUE(sends(pacer.on(SettlePacer::wanted{})));
}

}  // namespace
