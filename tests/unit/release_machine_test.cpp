// ReleaseMachine: what each answer to a release means for the hold book,
// the lost-hold listeners and the caller.
#include <gtest/gtest.h>

#include <optional>
#include <variant>

#include <warden/error.hpp>

#include "lock/release_machine.hpp"

namespace {

using warden::errc;
using M = warden::detail::ReleaseMachine;

template <class Action>
std::optional<Action> find(const M::actions& out) {
  for (const auto& action : out) {
    if (auto* found = std::get_if<Action>(&action)) return *found;
  }
  return std::nullopt;
}

M::answered answer(M::reply kind, bool believed = true, bool knew_of = true) {
  M::answered a;
  a.kind = kind;
  a.believed = believed;
  a.knew_of = knew_of;
  return a;
}

TEST(ReleaseMachine, TheLastHoldReleasedFreesTheLock) {
  auto out = M{}.on(answer(M::reply::released));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::get<M::released>(out[0]).freed);
  auto done = std::get<M::answer>(out[1]);
  EXPECT_EQ(done.why, M::reason::released);
  EXPECT_FALSE(done.error);
  EXPECT_TRUE(done.freed);
  EXPECT_FALSE(done.short_of_replicas);
  EXPECT_FALSE(done.tell_listeners);
}

TEST(ReleaseMachine, OneOfSeveralHoldsReleasedKeepsTheLock) {
  auto out = M{}.on(answer(M::reply::decreased));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(std::get<M::released>(out[0]).freed);
  auto done = std::get<M::answer>(out[1]);
  EXPECT_FALSE(done.error);
  EXPECT_FALSE(done.freed);
}

TEST(ReleaseMachine, ReleasedShortOfReplicasIsReleasedAndWarned) {
  auto a = answer(M::reply::released);
  a.short_of_replicas = true;
  auto out = M{}.on(a);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(std::get<M::released>(out[0]).freed);
  EXPECT_TRUE(std::holds_alternative<M::warn_short_of_replicas>(out[1]));
  auto done = std::get<M::answer>(out[2]);
  EXPECT_FALSE(done.error);
  EXPECT_TRUE(done.short_of_replicas);
}

TEST(ReleaseMachine, NotHeldByAnOwnerThatNeverHeldItIsNotOwner) {
  auto out = M{}.on(answer(M::reply::not_held, false, false));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::forget>(out[0]));
  auto done = std::get<M::answer>(out[1]);
  EXPECT_EQ(done.why, M::reason::not_owner);
  EXPECT_EQ(done.error, errc::not_owner);
  EXPECT_FALSE(done.tell_listeners);
}

TEST(ReleaseMachine, NotHeldByAnOwnerThatHeldItIsAnExpiredLease) {
  auto out = M{}.on(answer(M::reply::not_held, true, true));
  ASSERT_TRUE(find<M::forget>(out));
  auto done = find<M::answer>(out);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::lease_expired);
  EXPECT_EQ(done->error, errc::lease_expired);
  EXPECT_TRUE(done->tell_listeners);
  EXPECT_TRUE(done->listeners_first);
}

TEST(ReleaseMachine, AnExpiryAlreadyReportedIsNotToldTwice) {
  // The book knew of the hold but had reported it lost (the watchdog found it gone).
  auto done = find<M::answer>(M{}.on(answer(M::reply::not_held, false, true)));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->error, errc::lease_expired);
  EXPECT_FALSE(done->tell_listeners);
}

TEST(ReleaseMachine, ALostReleaseForgetsTheHoldAndTellsTheListeners) {
  auto a = answer(M::reply::failed);
  a.error = make_error_code(errc::connection_lost);
  auto out = M{}.on(a);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::forget>(out[0]));
  auto done = std::get<M::answer>(out[1]);
  EXPECT_EQ(done.why, M::reason::failed);
  EXPECT_EQ(done.error, errc::connection_lost);
  EXPECT_TRUE(done.tell_listeners);
  EXPECT_TRUE(done.listeners_first);
}

TEST(ReleaseMachine, AnUnexpectedReplyFailsTheRelease) {
  auto a = answer(M::reply::bad_reply, false);
  a.error = make_error_code(errc::wrong_type);
  auto done = find<M::answer>(M{}.on(a));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->why, M::reason::bad_reply);
  EXPECT_EQ(done->error, errc::wrong_type);
  EXPECT_FALSE(done->tell_listeners);  // reported lost already
}

TEST(ReleaseMachine, AReleaseNeverSentForgetsTheHoldAndTimesOut) {
  auto out = M{}.on(M::lane_timed_out{true});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::forget>(out[0]));
  auto done = std::get<M::answer>(out[1]);
  EXPECT_EQ(done.why, M::reason::lane_timed_out);
  EXPECT_EQ(done.error, errc::timed_out);
  EXPECT_TRUE(done.tell_listeners);
  EXPECT_FALSE(done.listeners_first);  // answered at once; the listeners are posted
  EXPECT_FALSE(find<M::answer>(M{}.on(M::lane_timed_out{false}))->tell_listeners);
}

}  // namespace
