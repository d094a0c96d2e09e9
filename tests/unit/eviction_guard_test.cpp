// Config::eviction_guard for one server, as a pure machine: what each read
// of the server's memory settings leads to, in each mode.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "topology/eviction_guard.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;
using G = EvictionGuard;

G::read settings(unsigned long long maxmemory, std::string policy) { return G::read{{maxmemory, std::move(policy)}}; }

template <class Action>
int count(const G::actions& actions) {
  int n = 0;
  for (const auto& a : actions) n += std::holds_alternative<Action>(a) ? 1 : 0;
  return n;
}

template <class Action>
bool last_is(const G::actions& actions) {
  return !actions.empty() && std::holds_alternative<Action>(actions[actions.size() - 1]);
}

TEST(EvictionGuard, EachEvictingPolicyWithALimitIsWarnedOfOnce) {
  for (const char* policy : {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
                             "allkeys-lfu", "allkeys-random"}) {
    G guard{eviction_guard_mode::warn, 500ms};
    auto first = guard.on(settings(1 << 20, policy));
    ASSERT_EQ(count<G::warn>(first), 1) << policy;
    for (const auto& a : first) {
      if (auto* warn = std::get_if<G::warn>(&a)) {
        EXPECT_FALSE(warn->refusing) << policy;
      }
    }
    EXPECT_EQ(count<G::refuse>(first), 0) << policy;
    EXPECT_FALSE(guard.refusing()) << policy;
    EXPECT_TRUE(guard.evictable()) << policy;
    ASSERT_TRUE(last_is<G::read_again>(first)) << policy;
    EXPECT_EQ(std::get<G::read_again>(first[first.size() - 1]).after, 500ms);
    // Read again, the same: nothing more is said.
    auto again = guard.on(settings(1 << 20, policy));
    EXPECT_EQ(count<G::warn>(again), 0) << policy;
    EXPECT_EQ(again.size(), 1u) << policy;
  }
}

TEST(EvictionGuard, NoEvictionAndNoLimitAreSafe) {
  for (auto read : {settings(1 << 20, "noeviction"), settings(0, "allkeys-lru"), settings(0, "volatile-ttl"),
                    settings(0, "noeviction")}) {
    for (auto mode : {eviction_guard_mode::warn, eviction_guard_mode::refuse}) {
      G guard{mode, 1s};
      auto out = guard.on(read);
      EXPECT_EQ(out.size(), 1u) << read.settings.policy;
      EXPECT_TRUE(last_is<G::read_again>(out));
      EXPECT_FALSE(guard.refusing());
      EXPECT_FALSE(guard.evictable());
    }
  }
}

TEST(EvictionGuard, UnknownPolicyWithALimitIsNotTrusted) {
  G guard{eviction_guard_mode::warn, 1s};
  EXPECT_EQ(count<G::warn>(guard.on(settings(100, "some-future-policy"))), 1);
}

TEST(EvictionGuard, RefuseModeRefusesBeforeItSaysSo) {
  G guard{eviction_guard_mode::refuse, 1s};
  auto out = guard.on(settings(1 << 20, "allkeys-lru"));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<G::refuse>(out[0]));
  ASSERT_TRUE(std::holds_alternative<G::warn>(out[1]));
  EXPECT_TRUE(std::get<G::warn>(out[1]).refusing);
  EXPECT_TRUE(std::holds_alternative<G::read_again>(out[2]));
  EXPECT_TRUE(guard.refusing());
}

TEST(EvictionGuard, APolicyChangedAtRunTimeIsFollowedBothWays) {
  G guard{eviction_guard_mode::refuse, 1s};
  EXPECT_EQ(guard.on(settings(1 << 20, "noeviction")).size(), 1u);
  EXPECT_FALSE(guard.refusing());

  auto risky = guard.on(settings(1 << 20, "volatile-lru"));
  EXPECT_EQ(count<G::refuse>(risky), 1);
  EXPECT_EQ(count<G::warn>(risky), 1);
  EXPECT_TRUE(guard.refusing());

  auto safe = guard.on(settings(1 << 20, "noeviction"));
  EXPECT_EQ(count<G::allow>(safe), 1);
  EXPECT_EQ(count<G::report_safe>(safe), 1);
  EXPECT_FALSE(guard.refusing());

  // Risky again: said again (a new finding), refused again.
  auto again = guard.on(settings(0, "allkeys-random"));
  EXPECT_EQ(count<G::warn>(again), 0);  // maxmemory 0: safe
  again = guard.on(settings(64, "allkeys-random"));
  EXPECT_EQ(count<G::warn>(again), 1);
  EXPECT_TRUE(guard.refusing());
}

TEST(EvictionGuard, WarnModeNeverRefusesButSaysWhenSafeAgain) {
  G guard{eviction_guard_mode::warn, 1s};
  guard.on(settings(1 << 20, "allkeys-lru"));
  auto safe = guard.on(settings(1 << 20, "noeviction"));
  EXPECT_EQ(count<G::allow>(safe), 0);
  EXPECT_EQ(count<G::report_safe>(safe), 1);
  EXPECT_FALSE(guard.refusing());
}

TEST(EvictionGuard, UnreadableIsSaidOnceAndNotReadAgainUntilAReconnect) {
  G guard{eviction_guard_mode::refuse, 1s};
  auto out = guard.on(G::read_denied{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<G::report_unreadable>(out[0]));
  EXPECT_FALSE(guard.refusing());
  EXPECT_TRUE(guard.on(G::read_denied{}).empty());
}

TEST(EvictionGuard, ADeniedReadKeepsWhatAnEarlierOneFound) {
  G guard{eviction_guard_mode::refuse, 1s};
  guard.on(settings(1 << 20, "allkeys-lru"));
  auto out = guard.on(G::read_denied{});
  EXPECT_EQ(count<G::allow>(out), 0);
  EXPECT_TRUE(guard.refusing());
}

TEST(EvictionGuard, AFailedReadIsTriedAgainAndChangesNothing) {
  G guard{eviction_guard_mode::refuse, 250ms};
  guard.on(settings(1 << 20, "volatile-ttl"));
  auto out = guard.on(G::read_failed{});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<G::read_again>(out[0]));
  EXPECT_EQ(std::get<G::read_again>(out[0]).after, 250ms);
  EXPECT_TRUE(guard.refusing());
}

}  // namespace
}  // namespace warden::detail
