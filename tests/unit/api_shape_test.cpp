// The public API's shape: one options type whose setters take any duration,
// final handles whose state and makers stay private, and standard lockables.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <type_traits>

#include <warden/warden.hpp>

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using warden::lock_options;

TEST(ApiShapeLockOptions, AreEmptyByDefault) {
  lock_options options;
  EXPECT_EQ(options.wait(), std::nullopt);
  EXPECT_EQ(options.lease(), std::nullopt);
  EXPECT_FALSE(options.cancel().cancelled());
}

TEST(ApiShapeLockOptions, TakeAnyDurationRoundedUpToWholeMilliseconds) {
  auto options = lock_options().with_wait(1500us).with_lease(std::chrono::duration<double>(2.5));
  EXPECT_EQ(options.wait(), milliseconds(2));
  EXPECT_EQ(options.lease(), milliseconds(2500));
  EXPECT_EQ(lock_options().with_lease(std::chrono::minutes(2)).lease(), milliseconds(120'000));
}

TEST(ApiShapeLockOptions, SaturateAndTurnNanIntoAValueEveryAcquireRefuses) {
  EXPECT_EQ(lock_options().with_lease(std::chrono::hours::max()).lease(), milliseconds::max());
  auto nan = std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(lock_options().with_wait(nan).wait(), milliseconds::min());
}

TEST(ApiShapeLockOptions, CarryTheCancellationOfTheirSource) {
  warden::cancel_source source;
  auto options = lock_options().with_cancel(source.token());
  EXPECT_FALSE(options.cancel().cancelled());
  source.cancel();
  EXPECT_TRUE(options.cancel().cancelled());
}

TEST(ApiShapeLockOptions, SettersChainAndTheLastOneWins) {
  auto options = lock_options().with_wait(1s).with_lease(5s).with_wait(2s);
  EXPECT_EQ(options.wait(), milliseconds(2000));
  EXPECT_EQ(options.lease(), milliseconds(5000));
}

// Compile-time facts, checked here so that a change to them fails a test.
TEST(ApiShape, HandlesAreFinal) {
  static_assert(std::is_final_v<warden::Lock>);
  static_assert(std::is_final_v<warden::FencedLock>);
  static_assert(std::is_final_v<warden::MultiLock>);
  static_assert(std::is_final_v<warden::RedLock>);
  static_assert(std::is_final_v<warden::ReadWriteLock>);
  static_assert(std::is_same_v<warden::FairLock, warden::Lock>);
  static_assert(std::is_same_v<warden::SpinLock, warden::Lock>);
  SUCCEED();
}

TEST(ApiShape, OnlyTheLibraryMakesHandlesFuturesAndSubscriptions) {
  static_assert(!std::is_default_constructible_v<warden::Lock>);
  static_assert(!std::is_constructible_v<warden::AcquireFuture<void>, std::future<void>, std::function<void()>>);
  static_assert(!std::is_constructible_v<warden::LostSubscription, std::function<void()>>);
  static_assert(std::is_default_constructible_v<warden::AcquireFuture<bool>>);
  static_assert(std::is_default_constructible_v<warden::LostSubscription>);
  SUCCEED();
}

TEST(ApiShape, AFencedLockConvertsToALock) {
  static_assert(std::is_convertible_v<warden::FencedLock, warden::Lock>);
  static_assert(!std::is_convertible_v<warden::Lock, warden::FencedLock>);
  SUCCEED();
}

// The standard guards instantiate with every kind (a Lockable / TimedLockable
// / SharedTimedLockable needs the exact call expressions they make).
template <class Mutex>
void guard_every_way(Mutex* mutex) {
  if (mutex == nullptr) return;  // instantiated, never run: no server here
  { std::lock_guard<Mutex> guard(*mutex); }
  { std::unique_lock<Mutex> guard(*mutex, 10ms); }
  { std::unique_lock<Mutex> guard(*mutex, std::chrono::steady_clock::now() + 10ms); }
  { std::unique_lock<Mutex> guard(*mutex, std::try_to_lock); }
}

TEST(ApiShape, StandardGuardsWorkWithEveryKind) {
  guard_every_way<warden::Lock>(nullptr);
  guard_every_way<warden::FencedLock>(nullptr);
  guard_every_way<warden::MultiLock>(nullptr);
  guard_every_way<warden::RedLock>(nullptr);
  guard_every_way<warden::ReadWriteLock>(nullptr);
  warden::ReadWriteLock* rw = nullptr;
  if (rw != nullptr) std::shared_lock<warden::ReadWriteLock> reading(*rw, 10ms);
  SUCCEED();
}

}  // namespace
