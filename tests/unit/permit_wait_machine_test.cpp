// PermitWaitMachine: one wait for permits, driven through each path to its
// end with no server: try, join, the re-try once subscribed, sleep, the
// woken re-try, the bound, lost replies, cancellation and shutdown.
#include <gtest/gtest.h>

#include <chrono>
#include <variant>

#include <warden/error.hpp>

#include "lock/permit_wait_machine.hpp"

namespace {

using warden::errc;
using warden::detail::clock;
using M = warden::detail::PermitWaitMachine;
using namespace std::chrono_literals;

const clock::time_point t0 = clock::time_point{} + 1000s;

template <class A>
bool has(const M::actions& out) {
  for (const auto& a : out) {
    if (std::holds_alternative<A>(a)) return true;
  }
  return false;
}

template <class A>
const A& get(const M::actions& out) {
  for (const auto& a : out) {
    if (auto* found = std::get_if<A>(&a)) return *found;
  }
  throw std::logic_error("action missing");
}

M::answered answer(M::answer kind, clock::time_point now = t0) { return M::answered{now, kind, {}, {}}; }

TEST(PermitWaitMachine, AFreePermitIsTakenByTheFirstTry) {
  M m(t0 + 5s);
  auto out = m.on(M::started{t0, false, false});
  ASSERT_TRUE(has<M::send_try>(out));
  EXPECT_FALSE(get<M::send_try>(out).last);
  out = m.on(answer(M::answer::taken));
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::acquired);
  EXPECT_FALSE(has<M::leave>(out));  // never joined
  EXPECT_TRUE(m.finished());
}

TEST(PermitWaitMachine, ASingleTryEndsWithoutJoining) {
  M m(t0);
  auto out = m.on(M::started{t0, false, true});
  EXPECT_FALSE(has<M::join>(out));  // no wait: nothing to join for
  EXPECT_TRUE(get<M::send_try>(out).last);
  out = m.on(answer(M::answer::refused));
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::not_acquired);
}

TEST(PermitWaitMachine, ARefusedWaiterJoinsAndTriesAgainOnceSubscribedBeforeSleeping) {
  M m(t0 + 5s);
  m.on(M::started{t0, false, false});
  auto out = m.on(answer(M::answer::refused));
  ASSERT_TRUE(has<M::join>(out));
  EXPECT_FALSE(has<M::send_try>(out));
  out = m.on(M::ready{t0 + 1ms});
  ASSERT_TRUE(has<M::send_try>(out));  // a release before the subscription is not missed
  out = m.on(answer(M::answer::refused, t0 + 2ms));
  ASSERT_TRUE(has<M::park>(out));
  EXPECT_EQ(get<M::arm_timer>(out).at, t0 + 5s);
  out = m.on(M::woken{t0 + 3ms, M::cause::message});
  EXPECT_TRUE(has<M::disarm>(out));
  ASSERT_TRUE(has<M::send_try>(out));
  out = m.on(answer(M::answer::taken, t0 + 4ms));
  EXPECT_EQ(get<M::leave>(out).pass_wake, false);
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::acquired);
}

TEST(PermitWaitMachine, AConfirmedChannelIsJoinedBeforeTheFirstTryAndARefusalSleepsAtOnce) {
  M m(clock::time_point::max());
  auto out = m.on(M::started{t0, false, true});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::join>(out[0]));
  EXPECT_TRUE(std::holds_alternative<M::send_try>(out[1]));
  EXPECT_TRUE(m.on(M::ready{t0}).empty());  // told while the try is in flight
  out = m.on(answer(M::answer::refused));
  EXPECT_TRUE(has<M::park>(out));
  EXPECT_FALSE(has<M::arm_timer>(out));  // unbounded, no expiry named: no timer at all
}

TEST(PermitWaitMachine, AWakeUpDuringATryMakesItTryAgainInsteadOfSleeping) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, true});
  m.on(M::ready{t0});
  EXPECT_TRUE(m.on(M::woken{t0, M::cause::reconnect}).empty());
  auto out = m.on(answer(M::answer::refused));
  EXPECT_TRUE(has<M::send_try>(out));
  EXPECT_FALSE(has<M::park>(out));
}

TEST(PermitWaitMachine, ARefusalNamingAnExpirySleepsUntilThenAtMost) {
  M m(t0 + 10s);
  m.on(M::started{t0, false, true});
  m.on(M::ready{t0});
  auto refused = answer(M::answer::refused);
  refused.retry_at = t0 + 2s;
  auto out = m.on(refused);
  EXPECT_EQ(get<M::arm_timer>(out).at, t0 + 2s);
  out = m.on(M::timer_fired{t0 + 2s});
  EXPECT_TRUE(has<M::send_try>(out));
  EXPECT_FALSE(get<M::send_try>(out).last);
}

TEST(PermitWaitMachine, TheBoundEndsTheWaitAfterALastTry) {
  M m(t0 + 1s);
  m.on(M::started{t0, false, true});
  m.on(M::ready{t0});
  m.on(answer(M::answer::refused));
  auto out = m.on(M::timer_fired{t0 + 1s});
  EXPECT_TRUE(get<M::send_try>(out).last);
  out = m.on(answer(M::answer::refused, t0 + 1s));
  EXPECT_TRUE(has<M::leave>(out));
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::not_acquired);
}

TEST(PermitWaitMachine, ALostReplyIsSettledAndKeptWhenItHadTakenThePermits) {
  M m(t0 + 5s);
  m.on(M::started{t0, false, false});
  auto out = m.on(answer(M::answer::lost));
  EXPECT_TRUE(get<M::settle>(out).keep);
  out = m.on(M::settled{t0, M::settle_answer::taken, {}});
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::acquired);
}

TEST(PermitWaitMachine, ALostReplyThatHadNotTakenEffectIsTriedAgain) {
  M m(t0 + 5s);
  m.on(M::started{t0, false, false});
  m.on(answer(M::answer::lost));
  auto out = m.on(M::settled{t0 + 1ms, M::settle_answer::not_taken, {}});
  EXPECT_TRUE(has<M::send_try>(out));
}

TEST(PermitWaitMachine, AKeepingSettleLeftUnansweredFailsTheWaitAndGivesBackInTheBackground) {
  M m(t0 + 100ms);
  m.on(M::started{t0, false, false});
  EXPECT_TRUE(get<M::settle>(m.on(answer(M::answer::lost, t0 + 500ms))).keep);
  auto out = m.on(M::settled{t0 + 600ms, M::settle_answer::failed, make_error_code(errc::timed_out)});
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::failed);
  EXPECT_EQ(get<M::finish>(out).error, errc::timed_out);
  // The caller is answered first; the give-back follows it.
  ASSERT_TRUE(has<M::settle>(out));
  EXPECT_FALSE(get<M::settle>(out).keep);
  EXPECT_TRUE(std::holds_alternative<M::settle>(out[out.size() - 1]));
  EXPECT_TRUE(m.finished());
  // Its answer changes nothing.
  EXPECT_TRUE(m.on(M::settled{t0 + 700ms, M::settle_answer::taken, {}}).empty());
}

TEST(PermitWaitMachine, AGiveBackSettleLeftUnansweredIsNotRepeated) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, false});
  m.on(M::cancelled{});
  EXPECT_FALSE(get<M::settle>(m.on(answer(M::answer::lost))).keep);
  auto out = m.on(M::settled{t0, M::settle_answer::failed, make_error_code(errc::timed_out)});
  EXPECT_EQ(get<M::finish>(out).result, M::outcome::failed);
  EXPECT_FALSE(has<M::settle>(out));
}

TEST(PermitWaitMachine, ACancelDuringATryGivesBackWhatTheTryTook) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, true});
  EXPECT_TRUE(m.on(M::cancelled{}).empty());  // the answer decides
  auto out = m.on(answer(M::answer::taken));
  EXPECT_TRUE(has<M::give_back>(out));
  EXPECT_FALSE(m.finished());
  out = m.on(M::given_back{});
  EXPECT_EQ(get<M::finish>(out).error, errc::cancelled);
  EXPECT_TRUE(has<M::leave>(out));
}

TEST(PermitWaitMachine, ACancelDuringALostTrySettlesItAsAGiveBack) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, false});
  m.on(M::cancelled{});
  auto out = m.on(answer(M::answer::lost));
  EXPECT_FALSE(get<M::settle>(out).keep);
  out = m.on(M::settled{t0, M::settle_answer::taken, {}});
  EXPECT_EQ(get<M::finish>(out).error, errc::cancelled);
}

TEST(PermitWaitMachine, ACancelDuringASettleThatKeepsGivesThePermitsBackAfterIt) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, false});
  EXPECT_TRUE(get<M::settle>(m.on(answer(M::answer::lost))).keep);
  EXPECT_TRUE(m.on(M::cancelled{}).empty());
  auto out = m.on(M::settled{t0, M::settle_answer::taken, {}});
  EXPECT_TRUE(has<M::give_back>(out));
  out = m.on(M::given_back{});
  EXPECT_EQ(get<M::finish>(out).error, errc::cancelled);
}

TEST(PermitWaitMachine, ACancelWhileAsleepEndsAtOnce) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, true});
  m.on(M::ready{t0});
  m.on(answer(M::answer::refused));
  auto out = m.on(M::cancelled{});
  EXPECT_TRUE(has<M::leave>(out));
  EXPECT_EQ(get<M::finish>(out).error, errc::cancelled);
  EXPECT_TRUE(m.on(M::woken{t0, M::cause::message}).empty());  // finished: nothing more
}

TEST(PermitWaitMachine, ACancelBeforeTheStartSendsNothing) {
  M m(clock::time_point::max());
  auto out = m.on(M::started{t0, true, true});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(get<M::finish>(out).error, errc::cancelled);
}

TEST(PermitWaitMachine, ATakeThatTooFewReplicasAcknowledgedIsGivenBackAndFails) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, false});
  auto short_answer = answer(M::answer::taken_short);
  short_answer.error = make_error_code(errc::replica_sync_failed);
  auto out = m.on(short_answer);
  EXPECT_TRUE(has<M::give_back>(out));
  out = m.on(M::given_back{});
  EXPECT_EQ(get<M::finish>(out).error, errc::replica_sync_failed);
}

TEST(PermitWaitMachine, AFailedTryPassesOnAWakeUpItHadNotUsed) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, true});
  m.on(M::ready{t0});
  m.on(answer(M::answer::refused));
  m.on(M::woken{t0, M::cause::message});
  auto failed = answer(M::answer::failed);
  failed.error = make_error_code(errc::connection_lost);
  auto out = m.on(failed);
  EXPECT_TRUE(get<M::leave>(out).pass_wake);
  EXPECT_EQ(get<M::finish>(out).error, errc::connection_lost);
}

TEST(PermitWaitMachine, ShutdownEndsTheWaitWhateverItWasDoing) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, true});
  auto out = m.on(M::shut_down{});
  EXPECT_EQ(get<M::finish>(out).error, errc::shut_down);
  EXPECT_TRUE(m.on(M::shut_down{}).empty());
}

TEST(PermitWaitMachine, AWaiterWhoseChannelMovedJoinsTheNewNodeAndTriesOnceReady) {
  M m(clock::time_point::max());
  m.on(M::started{t0, false, true});
  m.on(M::ready{t0});
  m.on(answer(M::answer::refused));
  auto out = m.on(M::node_moved{});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<M::leave>(out[0]));
  EXPECT_TRUE(std::holds_alternative<M::join>(out[1]));
  out = m.on(M::ready{t0});
  EXPECT_TRUE(has<M::send_try>(out));
}

}  // namespace
