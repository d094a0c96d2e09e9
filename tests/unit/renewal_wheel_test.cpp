// The renewal wheel without a clock: filing, moving, taking by time, the
// early top-up, and what it does with due times it cannot tell apart.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "lock/renewal_wheel.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;

struct Item : RenewalWheel::Link {
  explicit Item(int n) : number(n) {}
  int number;
};

// 10 ms buckets, due times up to 1 s ahead.
class RenewalWheelTest : public ::testing::Test {
 protected:
  std::vector<int> take(clock::time_point now, std::size_t limit = 1000) {
    std::vector<int> taken;
    wheel.take(now, limit, [&](RenewalWheel::Link& link) { taken.push_back(static_cast<Item&>(link).number); });
    return taken;
  }
  clock::time_point t0 = clock::now();
  RenewalWheel wheel{10ms, 1s, t0};
};

TEST_F(RenewalWheelTest, TakesByBucketInDueOrder) {
  Item a(1), b(2), c(3);
  wheel.add(c, t0 + 300ms);
  wheel.add(a, t0 + 100ms);
  wheel.add(b, t0 + 105ms);
  EXPECT_EQ(wheel.size(), 3u);
  EXPECT_EQ(*wheel.next_due(), t0 + 100ms);
  EXPECT_TRUE(take(t0 + 99ms).empty());
  // A bucket is taken once it has begun: b is due 5 ms later, in the same one.
  EXPECT_EQ(take(t0 + 100ms), (std::vector<int>{1, 2}));
  EXPECT_FALSE(a.linked());
  EXPECT_EQ(*wheel.next_due(), t0 + 300ms);
  EXPECT_EQ(take(t0 + 1h), (std::vector<int>{3}));
  EXPECT_FALSE(wheel.next_due().has_value());
  EXPECT_EQ(wheel.size(), 0u);
}

TEST_F(RenewalWheelTest, MovingAndRemoving) {
  Item a(1), b(2);
  wheel.add(a, t0 + 500ms);
  wheel.add(b, t0 + 600ms);
  wheel.add(a, t0 + 700ms);  // re-filed later
  wheel.remove(b);
  wheel.remove(b);  // not filed: nothing happens
  EXPECT_EQ(wheel.size(), 1u);
  EXPECT_TRUE(take(t0 + 650ms).empty());
  EXPECT_EQ(take(t0 + 700ms), (std::vector<int>{1}));
}

TEST_F(RenewalWheelTest, ADueTimeAlreadyPassedIsTakenNext) {
  Item a(1), b(2), c(3);
  wheel.add(a, t0 + 50ms);
  EXPECT_EQ(take(t0 + 60ms), (std::vector<int>{1}));
  // Its bucket has been taken, and one before the wheel began.
  wheel.add(b, t0 + 55ms);
  wheel.add(c, t0 - 1h);
  EXPECT_LE(*wheel.next_due(), t0 + 60ms);
  EXPECT_EQ(take(t0 + 61ms), (std::vector<int>{2, 3}));
}

TEST_F(RenewalWheelTest, ADueTimeBeyondTheRingIsServedEarlyNeverLate) {
  Item a(1);
  wheel.add(a, t0 + 1h);
  ASSERT_TRUE(wheel.next_due().has_value());
  EXPECT_LE(*wheel.next_due(), t0 + 1010ms);
  EXPECT_EQ(take(t0 + 1010ms), (std::vector<int>{1}));
}

TEST_F(RenewalWheelTest, AStallLongerThanTheRingTakesEverythingAndCatchesUp) {
  Item a(1), b(2), c(3);
  wheel.add(a, t0 + 20ms);
  wheel.add(b, t0 + 900ms);
  EXPECT_EQ(take(t0 + 5s), (std::vector<int>{1, 2}));
  // The wheel now counts from the present: a due time 500 ms on is not
  // mistaken for one of the buckets it jumped over.
  wheel.add(c, t0 + 5s + 500ms);
  EXPECT_TRUE(take(t0 + 5s + 400ms).empty());
  EXPECT_EQ(take(t0 + 5s + 500ms), (std::vector<int>{3}));
}

// A wheel left empty for longer than its ring is not taken from; brought up
// to the present, it files a new hold in its own bucket, not at a horizon
// long past (where every hold filed meanwhile would bunch up).
TEST_F(RenewalWheelTest, AnEmptyWheelCatchesUpBeforeFiling) {
  Item a(1), b(2);
  const auto later = t0 + 1h;
  wheel.catch_up(later);
  wheel.add(a, later + 500ms);
  wheel.add(b, later + 800ms);
  ASSERT_TRUE(wheel.next_due().has_value());
  EXPECT_GT(*wheel.next_due(), later + 490ms);
  EXPECT_TRUE(take(later + 490ms).empty());
  EXPECT_EQ(take(later + 500ms), (std::vector<int>{1}));
  EXPECT_EQ(take(later + 800ms), (std::vector<int>{2}));
  // Not while holds are filed: the cursor is the wheel's own then.
  Item c(3);
  wheel.add(c, later + 2s);
  wheel.catch_up(later + 1h);
  EXPECT_EQ(take(later + 2s), (std::vector<int>{3}));
}

TEST_F(RenewalWheelTest, TakesNoMoreThanTheLimitAndResumesWhereItStopped) {
  Item items[] = {Item(1), Item(2), Item(3), Item(4)};
  wheel.add(items[0], t0 + 10ms);
  wheel.add(items[1], t0 + 10ms);
  wheel.add(items[2], t0 + 20ms);
  wheel.add(items[3], t0 + 30ms);
  EXPECT_EQ(take(t0 + 30ms, 3), (std::vector<int>{1, 2, 3}));
  EXPECT_LE(*wheel.next_due(), t0 + 30ms);
  EXPECT_EQ(take(t0 + 30ms, 3), (std::vector<int>{4}));
}

TEST_F(RenewalWheelTest, TakeEarlyPicksWhatIsWantedBeforeTheBound) {
  Item items[] = {Item(1), Item(2), Item(3), Item(4)};
  wheel.add(items[0], t0 + 100ms);
  wheel.add(items[1], t0 + 200ms);
  wheel.add(items[2], t0 + 300ms);
  wheel.add(items[3], t0 + 400ms);
  std::vector<int> taken;
  auto odd = [&](RenewalWheel::Link& link) {
    int n = static_cast<Item&>(link).number;
    if (n % 2 == 0) return false;
    taken.push_back(n);
    return true;
  };
  EXPECT_EQ(wheel.take_early(t0 + 350ms, 10, 10, odd), 2u);
  EXPECT_EQ(taken, (std::vector<int>{1, 3}));
  EXPECT_EQ(wheel.size(), 2u);
  // At most `limit` taken, at most `look` looked at.
  taken.clear();
  auto any = [&](RenewalWheel::Link& link) {
    taken.push_back(static_cast<Item&>(link).number);
    return true;
  };
  EXPECT_EQ(wheel.take_early(t0 + 1s, 1, 10, any), 1u);
  EXPECT_EQ(wheel.take_early(t0 + 1s, 10, 0, any), 0u);
  EXPECT_EQ(taken, (std::vector<int>{2}));
}

// A removed link leaves its slot empty: the others keep their filing order,
// a re-filed one goes to the back of its new bucket, and a bucket emptied by
// removals (its storage let go) takes new links again.
TEST_F(RenewalWheelTest, RemovalsKeepTheFilingOrderOfTheRest) {
  Item items[] = {Item(1), Item(2), Item(3), Item(4), Item(5)};
  for (auto& item : items) wheel.add(item, t0 + 100ms);
  wheel.remove(items[1]);
  wheel.add(items[3], t0 + 105ms);  // same bucket, filed again: now last
  EXPECT_EQ(wheel.size(), 4u);
  EXPECT_EQ(take(t0 + 100ms), (std::vector<int>{1, 3, 5, 4}));
  Item f(6), g(7);
  wheel.add(f, t0 + 200ms);
  wheel.remove(f);
  EXPECT_FALSE(wheel.next_due().has_value());
  wheel.add(g, t0 + 200ms);
  wheel.add(f, t0 + 200ms);
  EXPECT_EQ(take(t0 + 200ms), (std::vector<int>{7, 6}));
}

// A take that stops at its limit inside a bucket resumes at the same place,
// past links removed and taken early meanwhile; everything is taken once.
TEST_F(RenewalWheelTest, ALimitedTakeResumesPastRemovedAndEarlyTakenLinks) {
  std::vector<std::unique_ptr<Item>> items;
  for (int n = 1; n <= 10; ++n) {
    items.push_back(std::make_unique<Item>(n));
    wheel.add(*items.back(), t0 + (n <= 6 ? 100ms : 300ms));
  }
  EXPECT_EQ(take(t0 + 100ms, 2), (std::vector<int>{1, 2}));
  wheel.remove(*items[2]);  // 3
  std::vector<int> early;
  wheel.take_early(t0 + 1s, 1, 10, [&](RenewalWheel::Link& link) {
    early.push_back(static_cast<Item&>(link).number);
    return true;
  });
  EXPECT_EQ(early, (std::vector<int>{4}));  // the bucket the take stopped in comes first
  EXPECT_EQ(take(t0 + 100ms, 2), (std::vector<int>{5, 6}));
  EXPECT_TRUE(take(t0 + 100ms).empty());
  EXPECT_EQ(take(t0 + 300ms), (std::vector<int>{7, 8, 9, 10}));
  EXPECT_EQ(wheel.size(), 0u);
  for (auto& item : items) EXPECT_FALSE(item->linked());
}

// Many links per bucket over several turns of the ring: each taken once, in
// its bucket's order, and clear() unfiles whatever is left.
TEST_F(RenewalWheelTest, ManyLinksOverSeveralTurnsOfTheRing) {
  constexpr int count = 5000;
  std::vector<std::unique_ptr<Item>> items;
  for (int n = 0; n < count; ++n) items.push_back(std::make_unique<Item>(n));
  auto now = t0;
  for (int turn = 0; turn < 3; ++turn) {
    for (int n = 0; n < count; ++n) wheel.add(*items[n], now + 10ms * (1 + n % 50));
    std::vector<int> taken;
    for (int step = 1; step <= 50; ++step) {
      for (int n : take(now + 10ms * step)) taken.push_back(n);
    }
    ASSERT_EQ(taken.size(), static_cast<std::size_t>(count));
    for (std::size_t i = 1; i < taken.size(); ++i) {
      // Bucket by bucket, each in filing order.
      auto bucket = [](int n) { return n % 50; };
      ASSERT_TRUE(bucket(taken[i - 1]) < bucket(taken[i]) ||
                  (bucket(taken[i - 1]) == bucket(taken[i]) && taken[i - 1] < taken[i]));
    }
    now += 500ms;
  }
  for (int n = 0; n < count; n += 2) wheel.add(*items[n], now + 50ms);
  wheel.clear();
  EXPECT_EQ(wheel.size(), 0u);
  for (auto& item : items) EXPECT_FALSE(item->linked());
}

// Renewed holds go back into buckets a period on, and the buckets drained
// meanwhile keep their room for the holds renewed a period later: while the
// holds stay, that room stays. Once they are released, it goes, whatever
// the timer does next (an empty wheel is never taken from again).
TEST_F(RenewalWheelTest, TheRoomDrainedBucketsKeepGoesWhenTheHoldsDo) {
  constexpr int count = 20000;
  std::vector<std::unique_ptr<Item>> items;
  for (int n = 0; n < count; ++n) items.push_back(std::make_unique<Item>(n));
  // 400 ms of due times, then renewed once: each taken hold is filed 500 ms on.
  for (int n = 0; n < count; ++n) wheel.add(*items[n], t0 + 10ms * (1 + n % 40));
  for (int step = 1; step <= 40; ++step) {
    wheel.take(t0 + 10ms * step, count, [](RenewalWheel::Link&) {});
  }
  for (int n = 0; n < count; ++n) wheel.add(*items[n], t0 + 510ms + 10ms * (n % 40));
  ASSERT_EQ(wheel.size(), static_cast<std::size_t>(count));
  EXPECT_GE(wheel.kept_room(), static_cast<std::size_t>(count));  // kept for the next turn
  // Half released: the room is still about what is filed.
  for (int n = 0; n < count; n += 2) wheel.remove(*items[n]);
  EXPECT_GT(wheel.kept_room(), 0u);
  // All released.
  for (int n = 1; n < count; n += 2) wheel.remove(*items[n]);
  EXPECT_EQ(wheel.size(), 0u);
  EXPECT_EQ(wheel.kept_room(), 0u);
}

}  // namespace
}  // namespace warden::detail
