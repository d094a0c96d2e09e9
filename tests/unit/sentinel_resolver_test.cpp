// The Sentinel resolver: whom to ask, when to trust an answer, and what a
// switch, a lagging sentinel or an unknown name lead to.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "topology/sentinel_resolver.hpp"

namespace warden::detail {
namespace {

enum class action { none, ask_sentinel, confirm_role, use_master, retry_later };

// What the machine answered to one event, read into one value for the checks.
struct Step {
  action what = action::none;
  NodeAddress to;
  std::uint64_t round = 0;
  std::string problem;
};

Step step(const SentinelResolver::actions& actions) {
  EXPECT_LE(actions.size(), 1u);
  Step out;
  if (actions.empty()) return out;
  const auto& a = actions[0];
  if (auto* ask = std::get_if<SentinelResolver::ask_sentinel>(&a)) {
    out = {action::ask_sentinel, ask->to, ask->round, {}};
  } else if (auto* confirm = std::get_if<SentinelResolver::confirm_role>(&a)) {
    out = {action::confirm_role, confirm->to, confirm->round, {}};
  } else if (auto* use = std::get_if<SentinelResolver::use_master>(&a)) {
    out = {action::use_master, use->to, 0, {}};
  } else if (auto* retry = std::get_if<SentinelResolver::retry_later>(&a)) {
    out = {action::retry_later, {}, 0, retry->problem};
  }
  return out;
}

const NodeAddress s1{"127.0.0.1", 26379};
const NodeAddress s2{"127.0.0.1", 26380};
const NodeAddress s3{"127.0.0.1", 26381};
const NodeAddress m1{"10.0.0.1", 6379};
const NodeAddress m2{"10.0.0.2", 6379};

TEST(SentinelResolver, AsksASentinelThenConfirmsItsAnswerWithRoleBeforeUsingIt) {
  SentinelResolver resolver({s1, s2});
  auto ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  EXPECT_EQ(ask.what, action::ask_sentinel);
  EXPECT_EQ(ask.to, s1);
  EXPECT_TRUE(resolver.resolving());
  auto confirm = step(resolver.on(SentinelResolver::sentinel_answered{ask.round, m1, true, {}}));
  EXPECT_EQ(confirm.what, action::confirm_role);
  EXPECT_EQ(confirm.to, m1);
  EXPECT_FALSE(resolver.master()) << "not trusted before ROLE says master";
  auto use = step(resolver.on(SentinelResolver::role_answered{confirm.round, true, {}}));
  EXPECT_EQ(use.what, action::use_master);
  EXPECT_EQ(use.to, m1);
  EXPECT_EQ(resolver.master(), m1);
  EXPECT_FALSE(resolver.resolving());
}

TEST(SentinelResolver, ASentinelThatCannotBeReachedOrDoesNotKnowTheNameIsFollowedByTheNext) {
  SentinelResolver resolver({s1, s2, s3});
  auto ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  auto next =
      step(resolver.on(SentinelResolver::sentinel_answered{ask.round, std::nullopt, false, "connection refused"}));
  EXPECT_EQ(next.what, action::ask_sentinel);
  EXPECT_EQ(next.to, s2);
  next =
      step(resolver.on(SentinelResolver::sentinel_answered{next.round, std::nullopt, true, "does not know 'orders'"}));
  EXPECT_EQ(next.to, s3);
  auto confirm = step(resolver.on(SentinelResolver::sentinel_answered{next.round, m1, true, {}}));
  EXPECT_EQ(confirm.what, action::confirm_role);
  EXPECT_EQ(step(resolver.on(SentinelResolver::role_answered{confirm.round, true, {}})).what, action::use_master);
  // The next round starts with the sentinel that answered.
  EXPECT_EQ(step(resolver.on(SentinelResolver::resolve_wanted{})).to, s3);
}

TEST(SentinelResolver, ALaggingSentinelsFormerMasterIsNotTrusted) {
  SentinelResolver resolver({s1, s2});
  auto ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  auto confirm = step(resolver.on(SentinelResolver::sentinel_answered{ask.round, m1, true, {}}));
  // m1 was demoted: it answers ROLE as a replica. The next sentinel is asked.
  auto next = step(resolver.on(SentinelResolver::role_answered{confirm.round, false, "ROLE says slave"}));
  EXPECT_EQ(next.what, action::ask_sentinel);
  EXPECT_EQ(next.to, s2);
  confirm = step(resolver.on(SentinelResolver::sentinel_answered{next.round, m2, true, {}}));
  EXPECT_EQ(confirm.to, m2);
  auto use = step(resolver.on(SentinelResolver::role_answered{confirm.round, true, {}}));
  EXPECT_EQ(use.what, action::use_master);
  EXPECT_EQ(use.to, m2);
}

TEST(SentinelResolver, ARoundWhereNobodyNamesAMasterEndsInRetryLaterSayingWhy) {
  SentinelResolver resolver({s1, s2});
  auto ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  auto next =
      step(resolver.on(SentinelResolver::sentinel_answered{ask.round, std::nullopt, true, "no master named 'x'"}));
  auto end =
      step(resolver.on(SentinelResolver::sentinel_answered{next.round, std::nullopt, true, "no master named 'x'"}));
  EXPECT_EQ(end.what, action::retry_later);
  EXPECT_NE(end.problem.find("127.0.0.1:26379: no master named 'x'"), std::string::npos) << end.problem;
  EXPECT_NE(end.problem.find("127.0.0.1:26380: no master named 'x'"), std::string::npos) << end.problem;
  EXPECT_TRUE(resolver.every_sentinel_answered()) << "an unknown name, not an outage";
  EXPECT_FALSE(resolver.resolving());

  ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  next = step(resolver.on(SentinelResolver::sentinel_answered{ask.round, std::nullopt, false, "connection refused"}));
  end = step(resolver.on(SentinelResolver::sentinel_answered{next.round, std::nullopt, true, "no master named 'x'"}));
  EXPECT_EQ(end.what, action::retry_later);
  EXPECT_FALSE(resolver.every_sentinel_answered()) << "one sentinel was out of reach";
}

TEST(SentinelResolver, ASwitchMessageOvertakesARoundInProgressAndStaleAnswersAreIgnored) {
  SentinelResolver resolver({s1, s2});
  auto ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  auto confirm = step(resolver.on(SentinelResolver::switch_announced{m2}));
  EXPECT_EQ(confirm.what, action::confirm_role);
  EXPECT_EQ(confirm.to, m2);
  EXPECT_NE(confirm.round, ask.round);
  // The old round's answer comes late: ignored.
  EXPECT_EQ(step(resolver.on(SentinelResolver::sentinel_answered{ask.round, m1, true, {}})).what, action::none);
  auto use = step(resolver.on(SentinelResolver::role_answered{confirm.round, true, {}}));
  EXPECT_EQ(use.to, m2);
  // A switch to the master in use changes nothing.
  EXPECT_EQ(step(resolver.on(SentinelResolver::switch_announced{m2})).what, action::none);
  // One to another is confirmed first.
  EXPECT_EQ(step(resolver.on(SentinelResolver::switch_announced{m1})).what, action::confirm_role);
}

TEST(SentinelResolver, ResolveDuringARoundDoesNotStartAnother) {
  SentinelResolver resolver({s1});
  step(resolver.on(SentinelResolver::resolve_wanted{}));
  EXPECT_EQ(step(resolver.on(SentinelResolver::resolve_wanted{})).what, action::none);
}

TEST(SentinelResolver, LearntSentinelsAreAddedOnceAndAsked) {
  SentinelResolver resolver({s1});
  EXPECT_EQ(step(resolver.on(SentinelResolver::sentinels_learnt{{s2, s1, s2}})).what, action::none);
  ASSERT_EQ(resolver.sentinels().size(), 2u);
  auto ask = step(resolver.on(SentinelResolver::resolve_wanted{}));
  auto next = step(resolver.on(SentinelResolver::sentinel_answered{ask.round, std::nullopt, false, "down"}));
  EXPECT_EQ(next.what, action::ask_sentinel);
  EXPECT_EQ(next.to, s2);
}

}  // namespace
}  // namespace warden::detail
