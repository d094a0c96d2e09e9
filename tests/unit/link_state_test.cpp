// LinkState: the reconnect state machine of one connection.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <variant>

#include <warden/error.hpp>

#include "io/link_state.hpp"

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::detail::Backoff;
using warden::detail::LinkState;
using state = LinkState::state;

constexpr milliseconds backoff_min = 100ms;
constexpr milliseconds backoff_max = 1600ms;

LinkState make_link(std::uint64_t seed = 1) { return LinkState(Backoff(backoff_min, backoff_max, seed)); }

const std::error_code refused = std::make_error_code(std::errc::connection_refused);
const std::error_code reset = std::make_error_code(std::errc::connection_reset);

// Whether the machine answered `open`, its only answer to connect_due.
bool opens(const LinkState::actions& actions) {
  EXPECT_LE(actions.size(), 1u);
  return !actions.empty() && std::holds_alternative<LinkState::open>(actions[0]);
}

// The delay of the retry_after a failure answers first.
milliseconds retry_delay(const LinkState::actions& actions) {
  EXPECT_FALSE(actions.empty());
  if (actions.empty()) return milliseconds{-1};
  const auto* retry = std::get_if<LinkState::retry_after>(&actions[0]);
  EXPECT_NE(retry, nullptr);
  return retry ? retry->delay : milliseconds{-1};
}

bool fails_queued(const LinkState::actions& actions) {
  for (const auto& action : actions) {
    if (std::holds_alternative<LinkState::fail_queued>(action)) return true;
  }
  return false;
}

// The back-off ceiling of the n-th consecutive failed attempt (0-based).
milliseconds ceiling(int n) {
  milliseconds c = backoff_min;
  for (int i = 0; i < n && c < backoff_max; ++i) c *= 2;
  return std::min(c, backoff_max);
}

TEST(LinkState, StartsIdle) {
  LinkState link = make_link();
  EXPECT_EQ(link.current(), state::idle);
  EXPECT_FALSE(link.ready());
  EXPECT_FALSE(link.closed());
  EXPECT_FALSE(link.last_error());
  EXPECT_FALSE(link.ever_connected());
  EXPECT_EQ(link.failures(), 0);
}

TEST(LinkState, IdleToConnectingToReady) {
  LinkState link = make_link();
  EXPECT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_EQ(link.current(), state::connecting);
  EXPECT_FALSE(link.ready());
  link.on(LinkState::set_up{});
  EXPECT_EQ(link.current(), state::ready);
  EXPECT_TRUE(link.ready());
  EXPECT_TRUE(link.ever_connected());
  EXPECT_FALSE(link.last_error());
}

TEST(LinkState, BeginConnectOnlyFromIdleOrBackingOff) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_FALSE(opens(link.on(LinkState::connect_due{})));  // already connecting
  EXPECT_EQ(link.current(), state::connecting);
  link.on(LinkState::set_up{});
  EXPECT_FALSE(opens(link.on(LinkState::connect_due{})));  // ready
  EXPECT_EQ(link.current(), state::ready);
  retry_delay(link.on(LinkState::link_failed{reset}));
  EXPECT_EQ(link.current(), state::backing_off);
  EXPECT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_EQ(link.current(), state::connecting);
}

TEST(LinkState, ConnectedIgnoredUnlessConnecting) {
  LinkState link = make_link();
  link.on(LinkState::set_up{});
  EXPECT_EQ(link.current(), state::idle);
  EXPECT_FALSE(link.ever_connected());

  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{refused}));
  link.on(LinkState::set_up{});  // a stale completion while backing off
  EXPECT_EQ(link.current(), state::backing_off);
  EXPECT_FALSE(link.ever_connected());
  EXPECT_EQ(link.last_error(), refused);
}

TEST(LinkState, FailureWhileConnectingBacksOffWithGrowingDelays) {
  LinkState link = make_link();
  for (int n = 0; n < 8; ++n) {
    ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
    milliseconds delay = retry_delay(link.on(LinkState::link_failed{refused}));
    EXPECT_EQ(link.current(), state::backing_off);
    EXPECT_GE(delay, ceiling(n) / 2) << "failure " << n;
    EXPECT_LE(delay, ceiling(n)) << "failure " << n;
    EXPECT_EQ(link.failures(), n + 1);
  }
  EXPECT_FALSE(link.ever_connected());
  EXPECT_EQ(link.last_error(), refused);
}

TEST(LinkState, FirstFailureDelayIsPositive) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_GT(retry_delay(link.on(LinkState::link_failed{refused})), 0ms);
}

TEST(LinkState, GrowingDelaysEventuallyExceedTheFirst) {
  // Each ceiling doubles, and the range of attempt n+2 lies wholly above that of attempt n.
  LinkState link = make_link(7);
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  milliseconds first = retry_delay(link.on(LinkState::link_failed{refused}));
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{refused}));
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  milliseconds third = retry_delay(link.on(LinkState::link_failed{refused}));
  EXPECT_GT(third, first);
}

TEST(LinkState, DelaysCapAtBackoffMax) {
  LinkState link = make_link();
  for (int n = 0; n < 40; ++n) {
    ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
    EXPECT_LE(retry_delay(link.on(LinkState::link_failed{refused})), backoff_max);
  }
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_GE(retry_delay(link.on(LinkState::link_failed{refused})), backoff_max / 2);
}

TEST(LinkState, DropFromReadyReconnectsAtOnceThenGrows) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  link.on(LinkState::set_up{});

  EXPECT_EQ(retry_delay(link.on(LinkState::link_failed{reset})), 0ms);
  EXPECT_EQ(link.current(), state::backing_off);
  EXPECT_EQ(link.last_error(), reset);
  EXPECT_TRUE(link.ever_connected());

  for (int n = 0; n < 5; ++n) {
    ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
    milliseconds delay = retry_delay(link.on(LinkState::link_failed{refused}));
    EXPECT_GE(delay, ceiling(n) / 2) << "failure " << n;
    EXPECT_LE(delay, ceiling(n)) << "failure " << n;
  }
  EXPECT_TRUE(link.ever_connected());
  EXPECT_EQ(link.last_error(), refused);
}

TEST(LinkState, ConnectedResetsTheBackoff) {
  LinkState link = make_link();
  for (int n = 0; n < 6; ++n) {
    ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
    retry_delay(link.on(LinkState::link_failed{refused}));
  }
  ASSERT_EQ(link.failures(), 6);
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  link.on(LinkState::set_up{});
  EXPECT_EQ(link.failures(), 0);
  EXPECT_FALSE(link.last_error());

  EXPECT_EQ(retry_delay(link.on(LinkState::link_failed{reset})), 0ms);  // dropped: at once
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  milliseconds delay = retry_delay(link.on(LinkState::link_failed{refused}));  // then from the bottom again
  EXPECT_GE(delay, ceiling(0) / 2);
  EXPECT_LE(delay, ceiling(0));
}

TEST(LinkState, LastErrorTracksTheLatestFailure) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{refused}));
  EXPECT_EQ(link.last_error(), refused);
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  std::error_code auth = warden::errc::authentication_failed;
  retry_delay(link.on(LinkState::link_failed{auth}));
  EXPECT_EQ(link.last_error(), warden::errc::authentication_failed);
}

TEST(LinkState, EverConnectedSurvivesLaterFailures) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_FALSE(link.ever_connected());
  link.on(LinkState::set_up{});
  retry_delay(link.on(LinkState::link_failed{reset}));
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{refused}));
  EXPECT_TRUE(link.ever_connected());
}

TEST(LinkState, SameSeedSameDelays) {
  LinkState a = make_link(99);
  LinkState b = make_link(99);
  for (int n = 0; n < 10; ++n) {
    ASSERT_TRUE(opens(a.on(LinkState::connect_due{})));
    ASSERT_TRUE(opens(b.on(LinkState::connect_due{})));
    EXPECT_EQ(retry_delay(a.on(LinkState::link_failed{refused})), retry_delay(b.on(LinkState::link_failed{refused})));
  }
}

TEST(LinkState, CloseIsFinalFromIdle) {
  LinkState link = make_link();
  link.on(LinkState::close_requested{});
  EXPECT_TRUE(link.closed());
  EXPECT_EQ(link.current(), state::closed);
  EXPECT_FALSE(opens(link.on(LinkState::connect_due{})));
  EXPECT_TRUE(link.closed());
}

TEST(LinkState, CloseIsFinalFromReady) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  link.on(LinkState::set_up{});
  link.on(LinkState::close_requested{});
  EXPECT_TRUE(link.closed());
  EXPECT_FALSE(link.ready());
  EXPECT_FALSE(opens(link.on(LinkState::connect_due{})));
}

TEST(LinkState, CloseIsFinalFromConnectingAndBackingOff) {
  LinkState connecting = make_link();
  ASSERT_TRUE(opens(connecting.on(LinkState::connect_due{})));
  connecting.on(LinkState::close_requested{});
  connecting.on(LinkState::set_up{});  // a connect that completes after close does not revive it
  EXPECT_TRUE(connecting.closed());
  EXPECT_FALSE(connecting.ready());
  EXPECT_FALSE(opens(connecting.on(LinkState::connect_due{})));

  LinkState backing_off = make_link();
  ASSERT_TRUE(opens(backing_off.on(LinkState::connect_due{})));
  retry_delay(backing_off.on(LinkState::link_failed{refused}));
  backing_off.on(LinkState::close_requested{});
  EXPECT_FALSE(opens(backing_off.on(LinkState::connect_due{})));
  EXPECT_TRUE(backing_off.closed());
}

TEST(LinkState, FailureAfterCloseStaysClosed) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  link.on(LinkState::set_up{});
  link.on(LinkState::close_requested{});
  EXPECT_TRUE(link.on(LinkState::link_failed{reset}).empty()) << "no retry after close";
  EXPECT_TRUE(link.closed());
  EXPECT_FALSE(opens(link.on(LinkState::connect_due{})));
}

TEST(LinkState, TwoAttemptsInARowClosedUnansweredRefusePlaintext) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  EXPECT_FALSE(fails_queued(link.on(LinkState::link_failed{reset, true})));
  EXPECT_FALSE(link.refuses_plaintext()) << "once may be a server going away";
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  auto second = link.on(LinkState::link_failed{reset, true});
  EXPECT_GT(retry_delay(second), 0ms);
  EXPECT_TRUE(fails_queued(second)) << "a port that expects TLS: waiting will not help what is queued";
  EXPECT_TRUE(link.refuses_plaintext());
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{reset, true}));
  EXPECT_TRUE(link.refuses_plaintext());
}

TEST(LinkState, AnyOtherOutcomeEndsTheStreakOfUnansweredCloses) {
  LinkState link = make_link();
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{reset, true}));
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{refused}));  // the server went away: refused now
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{reset, true}));
  EXPECT_FALSE(link.refuses_plaintext());
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  link.on(LinkState::set_up{});
  retry_delay(link.on(LinkState::link_failed{reset}));
  ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
  retry_delay(link.on(LinkState::link_failed{reset, true}));
  EXPECT_FALSE(link.refuses_plaintext()) << "a connection that was answered ended the streak";
}

TEST(LinkState, AFailureThatReconnectingWillNotCureFailsWhatIsQueued) {
  for (warden::errc permanent : {warden::errc::authentication_failed, warden::errc::tls_verify_failed,
                                 warden::errc::tls_handshake_failed, warden::errc::protocol_error}) {
    LinkState link = make_link();
    ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
    auto answer = link.on(LinkState::link_failed{warden::make_error_code(permanent)});
    EXPECT_GT(retry_delay(answer), 0ms) << "it still reconnects, in case it was fixed meanwhile";
    EXPECT_TRUE(fails_queued(answer)) << static_cast<int>(permanent);
  }
  for (std::error_code passing : {refused, reset, warden::make_error_code(warden::errc::connection_lost),
                                  warden::make_error_code(warden::errc::timed_out)}) {
    LinkState link = make_link();
    ASSERT_TRUE(opens(link.on(LinkState::connect_due{})));
    EXPECT_FALSE(fails_queued(link.on(LinkState::link_failed{passing}))) << passing.message();
  }
}

}  // namespace
