// LinkState: the reconnect state machine of one connection.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <system_error>

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
  EXPECT_TRUE(link.begin_connect());
  EXPECT_EQ(link.current(), state::connecting);
  EXPECT_FALSE(link.ready());
  link.connected();
  EXPECT_EQ(link.current(), state::ready);
  EXPECT_TRUE(link.ready());
  EXPECT_TRUE(link.ever_connected());
  EXPECT_FALSE(link.last_error());
}

TEST(LinkState, BeginConnectOnlyFromIdleOrBackingOff) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  EXPECT_FALSE(link.begin_connect());  // already connecting
  EXPECT_EQ(link.current(), state::connecting);
  link.connected();
  EXPECT_FALSE(link.begin_connect());  // ready
  EXPECT_EQ(link.current(), state::ready);
  link.failed(reset);
  EXPECT_EQ(link.current(), state::backing_off);
  EXPECT_TRUE(link.begin_connect());
  EXPECT_EQ(link.current(), state::connecting);
}

TEST(LinkState, ConnectedIgnoredUnlessConnecting) {
  LinkState link = make_link();
  link.connected();
  EXPECT_EQ(link.current(), state::idle);
  EXPECT_FALSE(link.ever_connected());

  ASSERT_TRUE(link.begin_connect());
  link.failed(refused);
  link.connected();  // a stale completion while backing off
  EXPECT_EQ(link.current(), state::backing_off);
  EXPECT_FALSE(link.ever_connected());
  EXPECT_EQ(link.last_error(), refused);
}

TEST(LinkState, FailureWhileConnectingBacksOffWithGrowingDelays) {
  LinkState link = make_link();
  for (int n = 0; n < 8; ++n) {
    ASSERT_TRUE(link.begin_connect());
    milliseconds delay = link.failed(refused);
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
  ASSERT_TRUE(link.begin_connect());
  EXPECT_GT(link.failed(refused), 0ms);
}

TEST(LinkState, GrowingDelaysEventuallyExceedTheFirst) {
  // Each ceiling doubles, and the range of attempt n+2 lies wholly above that of attempt n.
  LinkState link = make_link(7);
  ASSERT_TRUE(link.begin_connect());
  milliseconds first = link.failed(refused);
  ASSERT_TRUE(link.begin_connect());
  link.failed(refused);
  ASSERT_TRUE(link.begin_connect());
  milliseconds third = link.failed(refused);
  EXPECT_GT(third, first);
}

TEST(LinkState, DelaysCapAtBackoffMax) {
  LinkState link = make_link();
  for (int n = 0; n < 40; ++n) {
    ASSERT_TRUE(link.begin_connect());
    EXPECT_LE(link.failed(refused), backoff_max);
  }
  ASSERT_TRUE(link.begin_connect());
  EXPECT_GE(link.failed(refused), backoff_max / 2);
}

TEST(LinkState, DropFromReadyReconnectsAtOnceThenGrows) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  link.connected();

  EXPECT_EQ(link.failed(reset), 0ms);
  EXPECT_EQ(link.current(), state::backing_off);
  EXPECT_EQ(link.last_error(), reset);
  EXPECT_TRUE(link.ever_connected());

  for (int n = 0; n < 5; ++n) {
    ASSERT_TRUE(link.begin_connect());
    milliseconds delay = link.failed(refused);
    EXPECT_GE(delay, ceiling(n) / 2) << "failure " << n;
    EXPECT_LE(delay, ceiling(n)) << "failure " << n;
  }
  EXPECT_TRUE(link.ever_connected());
  EXPECT_EQ(link.last_error(), refused);
}

TEST(LinkState, ConnectedResetsTheBackoff) {
  LinkState link = make_link();
  for (int n = 0; n < 6; ++n) {
    ASSERT_TRUE(link.begin_connect());
    link.failed(refused);
  }
  ASSERT_EQ(link.failures(), 6);
  ASSERT_TRUE(link.begin_connect());
  link.connected();
  EXPECT_EQ(link.failures(), 0);
  EXPECT_FALSE(link.last_error());

  EXPECT_EQ(link.failed(reset), 0ms);  // dropped: at once
  ASSERT_TRUE(link.begin_connect());
  milliseconds delay = link.failed(refused);  // then from the bottom again
  EXPECT_GE(delay, ceiling(0) / 2);
  EXPECT_LE(delay, ceiling(0));
}

TEST(LinkState, LastErrorTracksTheLatestFailure) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  link.failed(refused);
  EXPECT_EQ(link.last_error(), refused);
  ASSERT_TRUE(link.begin_connect());
  std::error_code auth = warden::errc::authentication_failed;
  link.failed(auth);
  EXPECT_EQ(link.last_error(), warden::errc::authentication_failed);
}

TEST(LinkState, EverConnectedSurvivesLaterFailures) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  EXPECT_FALSE(link.ever_connected());
  link.connected();
  link.failed(reset);
  ASSERT_TRUE(link.begin_connect());
  link.failed(refused);
  EXPECT_TRUE(link.ever_connected());
}

TEST(LinkState, SameSeedSameDelays) {
  LinkState a = make_link(99);
  LinkState b = make_link(99);
  for (int n = 0; n < 10; ++n) {
    ASSERT_TRUE(a.begin_connect());
    ASSERT_TRUE(b.begin_connect());
    EXPECT_EQ(a.failed(refused), b.failed(refused));
  }
}

TEST(LinkState, CloseIsFinalFromIdle) {
  LinkState link = make_link();
  link.close();
  EXPECT_TRUE(link.closed());
  EXPECT_EQ(link.current(), state::closed);
  EXPECT_FALSE(link.begin_connect());
  EXPECT_TRUE(link.closed());
}

TEST(LinkState, CloseIsFinalFromReady) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  link.connected();
  link.close();
  EXPECT_TRUE(link.closed());
  EXPECT_FALSE(link.ready());
  EXPECT_FALSE(link.begin_connect());
}

TEST(LinkState, CloseIsFinalFromConnectingAndBackingOff) {
  LinkState connecting = make_link();
  ASSERT_TRUE(connecting.begin_connect());
  connecting.close();
  connecting.connected();  // a connect that completes after close does not revive it
  EXPECT_TRUE(connecting.closed());
  EXPECT_FALSE(connecting.ready());
  EXPECT_FALSE(connecting.begin_connect());

  LinkState backing_off = make_link();
  ASSERT_TRUE(backing_off.begin_connect());
  backing_off.failed(refused);
  backing_off.close();
  EXPECT_FALSE(backing_off.begin_connect());
  EXPECT_TRUE(backing_off.closed());
}

TEST(LinkState, FailureAfterCloseStaysClosed) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  link.connected();
  link.close();
  EXPECT_EQ(link.failed(reset), 0ms);
  EXPECT_TRUE(link.closed());
  EXPECT_FALSE(link.begin_connect());
}

TEST(LinkState, TwoAttemptsInARowClosedUnansweredRefusePlaintext) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  link.failed(reset, true);
  EXPECT_FALSE(link.refuses_plaintext()) << "once may be a server going away";
  ASSERT_TRUE(link.begin_connect());
  link.failed(reset, true);
  EXPECT_TRUE(link.refuses_plaintext());
  ASSERT_TRUE(link.begin_connect());
  link.failed(reset, true);
  EXPECT_TRUE(link.refuses_plaintext());
}

TEST(LinkState, AnyOtherOutcomeEndsTheStreakOfUnansweredCloses) {
  LinkState link = make_link();
  ASSERT_TRUE(link.begin_connect());
  link.failed(reset, true);
  ASSERT_TRUE(link.begin_connect());
  link.failed(refused);  // the server went away: refused now
  ASSERT_TRUE(link.begin_connect());
  link.failed(reset, true);
  EXPECT_FALSE(link.refuses_plaintext());
  ASSERT_TRUE(link.begin_connect());
  link.connected();
  link.failed(reset);
  ASSERT_TRUE(link.begin_connect());
  link.failed(reset, true);
  EXPECT_FALSE(link.refuses_plaintext()) << "a connection that was answered ended the streak";
}

}  // namespace
