// The Sentinel resolver: whom to ask, when to trust an answer, and what a
// switch, a lagging sentinel or an unknown name lead to.
#include <gtest/gtest.h>

#include "topology/sentinel_resolver.hpp"

namespace warden::detail {
namespace {

using action = SentinelResolver::Step::action;

const NodeAddress s1{"127.0.0.1", 26379};
const NodeAddress s2{"127.0.0.1", 26380};
const NodeAddress s3{"127.0.0.1", 26381};
const NodeAddress m1{"10.0.0.1", 6379};
const NodeAddress m2{"10.0.0.2", 6379};

TEST(SentinelResolver, AsksASentinelThenConfirmsItsAnswerWithRoleBeforeUsingIt) {
  SentinelResolver resolver({s1, s2});
  auto ask = resolver.resolve();
  EXPECT_EQ(ask.what, action::ask_sentinel);
  EXPECT_EQ(ask.to, s1);
  EXPECT_TRUE(resolver.resolving());
  auto confirm = resolver.sentinel_answered(ask.round, m1, true, {});
  EXPECT_EQ(confirm.what, action::confirm_role);
  EXPECT_EQ(confirm.to, m1);
  EXPECT_FALSE(resolver.master()) << "not trusted before ROLE says master";
  auto use = resolver.role_answered(confirm.round, true, {});
  EXPECT_EQ(use.what, action::use_master);
  EXPECT_EQ(use.to, m1);
  EXPECT_EQ(resolver.master(), m1);
  EXPECT_FALSE(resolver.resolving());
}

TEST(SentinelResolver, ASentinelThatCannotBeReachedOrDoesNotKnowTheNameIsFollowedByTheNext) {
  SentinelResolver resolver({s1, s2, s3});
  auto ask = resolver.resolve();
  auto next = resolver.sentinel_answered(ask.round, std::nullopt, false, "connection refused");
  EXPECT_EQ(next.what, action::ask_sentinel);
  EXPECT_EQ(next.to, s2);
  next = resolver.sentinel_answered(next.round, std::nullopt, true, "does not know 'orders'");
  EXPECT_EQ(next.to, s3);
  auto confirm = resolver.sentinel_answered(next.round, m1, true, {});
  EXPECT_EQ(confirm.what, action::confirm_role);
  EXPECT_EQ(resolver.role_answered(confirm.round, true, {}).what, action::use_master);
  // The next round starts with the sentinel that answered.
  EXPECT_EQ(resolver.resolve().to, s3);
}

TEST(SentinelResolver, ALaggingSentinelsFormerMasterIsNotTrusted) {
  SentinelResolver resolver({s1, s2});
  auto ask = resolver.resolve();
  auto confirm = resolver.sentinel_answered(ask.round, m1, true, {});
  // m1 was demoted: it answers ROLE as a replica. The next sentinel is asked.
  auto next = resolver.role_answered(confirm.round, false, "ROLE says slave");
  EXPECT_EQ(next.what, action::ask_sentinel);
  EXPECT_EQ(next.to, s2);
  confirm = resolver.sentinel_answered(next.round, m2, true, {});
  EXPECT_EQ(confirm.to, m2);
  auto use = resolver.role_answered(confirm.round, true, {});
  EXPECT_EQ(use.what, action::use_master);
  EXPECT_EQ(use.to, m2);
}

TEST(SentinelResolver, ARoundWhereNobodyNamesAMasterEndsInRetryLaterSayingWhy) {
  SentinelResolver resolver({s1, s2});
  auto ask = resolver.resolve();
  auto next = resolver.sentinel_answered(ask.round, std::nullopt, true, "no master named 'x'");
  auto end = resolver.sentinel_answered(next.round, std::nullopt, true, "no master named 'x'");
  EXPECT_EQ(end.what, action::retry_later);
  EXPECT_NE(end.problem.find("127.0.0.1:26379: no master named 'x'"), std::string::npos) << end.problem;
  EXPECT_NE(end.problem.find("127.0.0.1:26380: no master named 'x'"), std::string::npos) << end.problem;
  EXPECT_TRUE(resolver.every_sentinel_answered()) << "an unknown name, not an outage";
  EXPECT_FALSE(resolver.resolving());

  ask = resolver.resolve();
  next = resolver.sentinel_answered(ask.round, std::nullopt, false, "connection refused");
  end = resolver.sentinel_answered(next.round, std::nullopt, true, "no master named 'x'");
  EXPECT_EQ(end.what, action::retry_later);
  EXPECT_FALSE(resolver.every_sentinel_answered()) << "one sentinel was out of reach";
}

TEST(SentinelResolver, ASwitchMessageOvertakesARoundInProgressAndStaleAnswersAreIgnored) {
  SentinelResolver resolver({s1, s2});
  auto ask = resolver.resolve();
  auto confirm = resolver.switched(m2);
  EXPECT_EQ(confirm.what, action::confirm_role);
  EXPECT_EQ(confirm.to, m2);
  EXPECT_NE(confirm.round, ask.round);
  // The old round's answer comes late: ignored.
  EXPECT_EQ(resolver.sentinel_answered(ask.round, m1, true, {}).what, action::none);
  auto use = resolver.role_answered(confirm.round, true, {});
  EXPECT_EQ(use.to, m2);
  // A switch to the master in use changes nothing.
  EXPECT_EQ(resolver.switched(m2).what, action::none);
  // One to another is confirmed first.
  EXPECT_EQ(resolver.switched(m1).what, action::confirm_role);
}

TEST(SentinelResolver, ResolveDuringARoundDoesNotStartAnother) {
  SentinelResolver resolver({s1});
  resolver.resolve();
  EXPECT_EQ(resolver.resolve().what, action::none);
}

TEST(SentinelResolver, LearntSentinelsAreAddedOnceAndAsked) {
  SentinelResolver resolver({s1});
  resolver.learn({s2, s1, s2});
  ASSERT_EQ(resolver.sentinels().size(), 2u);
  auto ask = resolver.resolve();
  auto next = resolver.sentinel_answered(ask.round, std::nullopt, false, "down");
  EXPECT_EQ(next.what, action::ask_sentinel);
  EXPECT_EQ(next.to, s2);
}

}  // namespace
}  // namespace warden::detail
