// Cancelling a wait: the caller gets errc::cancelled promptly and nothing is
// left behind (hold, fair-queue place, subscription).
#include <gtest/gtest.h>

#include <future>

#include <warden/task_owner.hpp>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

std::error_code code_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error.code();
  }
  return {};
}

TEST(Cancel, AWaitingLockEndsWithCancelledAndLeavesNothing) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Client waiter_client{fast_config(server)};
  Lock held = holder_client.get_lock("cancelled");
  held.lock();

  Lock lock = waiter_client.get_lock("cancelled");
  cancel_source source;
  auto waiting = std::async(std::launch::async,
                            [&] { return code_of([&] { lock.lock(lock_options().with_cancel(source.token())); }); });
  bool waiting_seen = eventually([&] { return subscribers(probe, "redisson_lock__channel:{cancelled}") == 1; });
  auto cancelled_at = std::chrono::steady_clock::now();
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  EXPECT_LT(elapsed_ms(cancelled_at), 500);
  EXPECT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{cancelled}") == 0; }));
  held.unlock();
  EXPECT_FALSE(probe.exists("cancelled"));  // the cancelled waiter took nothing
}

TEST(Cancel, AFairWaiterLeavesTheQueue) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Client waiter_client{fast_config(server)};
  FairLock held = holder_client.get_fair_lock("fair-cancelled");
  held.lock();

  FairLock lock = waiter_client.get_fair_lock("fair-cancelled");
  cancel_source source;
  auto waiting = std::async(std::launch::async,
                            [&] { return code_of([&] { lock.lock(lock_options().with_cancel(source.token())); }); });
  bool waiting_seen = eventually([&] {
    return probe.command({"LLEN", "redisson_lock_queue:{fair-cancelled}"}).integer == 1;
  });
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  EXPECT_TRUE(eventually([&] { return !probe.exists("redisson_lock_queue:{fair-cancelled}"); }));
  EXPECT_FALSE(probe.exists("redisson_lock_timeout:{fair-cancelled}"));
  held.unlock();
  EXPECT_FALSE(probe.exists("fair-cancelled"));
}

TEST(Cancel, AnAlreadyCancelledTokenFailsAtOnceAndSendsNothing) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("never-tried");
  cancel_source source;
  source.cancel();
  long long before = probe.command_calls("evalsha") + probe.command_calls("eval");
  EXPECT_EQ(code_of([&] { lock.lock(lock_options().with_cancel(source.token())); }), errc::cancelled);
  EXPECT_EQ(probe.command_calls("evalsha") + probe.command_calls("eval"), before);
  EXPECT_FALSE(probe.exists("never-tried"));
  EXPECT_FALSE(cancel_token{}.cancelled());
}

TEST(Cancel, AsyncWaitIsCancelled) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Client other{fast_config(server)};
  Lock held = other.get_lock("async-cancelled");
  held.lock();
  Lock lock = client.get_lock("async-cancelled");
  cancel_source source;
  auto future = lock.lock_async(current_thread_id(), lock_options().with_cancel(source.token()));
  bool waiting_seen = eventually([&] { return subscribers(probe, "redisson_lock__channel:{async-cancelled}") == 1; });
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(code_of([&] { future.get(); }), errc::cancelled);
  held.unlock();
  EXPECT_FALSE(probe.exists("async-cancelled"));
}

// Cancelled while its attempt is on the wire (held up by CLIENT PAUSE
// WRITE): the caller hears at once; the attempt, which takes effect when the
// pause ends, is taken back.
TEST(Cancel, AnAttemptInFlightIsTakenBack) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.command_timeout = 5s;
  Client client{config};
  Lock lock = client.get_lock("in-flight");
  lock.lock();  // connected, script loaded
  lock.unlock();

  probe.command({"CLIENT", "PAUSE", "10000", "WRITE"});
  cancel_source source;
  auto waiting = std::async(std::launch::async,
                            [&] { return code_of([&] { lock.lock(lock_options().with_cancel(source.token())); }); });
  bool waiting_seen = eventually([&] {
    return probe.command({"INFO", "clients"}).str.find("blocked_clients:1") != std::string::npos;
  });
  auto cancelled_at = std::chrono::steady_clock::now();
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  EXPECT_LT(elapsed_ms(cancelled_at), 500);
  probe.command({"CLIENT", "UNPAUSE"});
  EXPECT_TRUE(eventually([&] { return !probe.exists("in-flight"); }));
  // And the owner can lock again at once.
  EXPECT_TRUE(lock.try_lock_for(2s));
  lock.unlock();
}

// The owner's own queries after a cancellation that came while its attempt
// was on the wire (held up by CLIENT PAUSE WRITE) run in its lane, after the
// take-back: they never see the hold being taken back, though the attempt
// (and the queries, on the same connection) run when the pause ends.
TEST(Cancel, TheOwnersQueriesAfterAnAttemptInFlightSeeItTakenBack) {
  RedisServer server;
  RedisProbe probe(server);
  Config config = fast_config(server);
  config.command_timeout = 5s;
  Client client{config};
  Lock lock = client.get_lock("in-flight-query");
  task_owner me;
  lock.lock_async(me).get();  // connected, scripts loaded
  lock.unlock_async(me).get();
  EXPECT_EQ(lock.hold_count(me), 0);

  probe.command({"CLIENT", "PAUSE", "10000", "WRITE"});
  cancel_source source;
  auto waiting = lock.lock_async(me, lock_options().with_cancel(source.token()));
  bool waiting_seen = eventually([&] {
    return probe.command({"INFO", "clients"}).str.find("blocked_clients:1") != std::string::npos;
  });
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  std::error_code outcome = code_of([&] { waiting.get(); });
  // Asked once the caller heard of the cancellation, before the attempt ran.
  auto count = lock.hold_count_async(me);
  auto held = lock.is_held_async(me);
  probe.command({"CLIENT", "UNPAUSE"});
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(outcome, errc::cancelled);
  ASSERT_EQ(count.wait_for(10s), std::future_status::ready);
  ASSERT_EQ(held.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(count.get(), 0);
  EXPECT_FALSE(held.get());
  EXPECT_FALSE(probe.exists("in-flight-query"));  // taken back before the queries ran
  EXPECT_TRUE(lock.try_lock_async(me).get());
  lock.unlock_async(me).get();
}

// A MultiLock waiting for a member someone else holds: cancelled, it takes
// nothing, not even the free member it held between rounds.
TEST(Cancel, AWaitingMultiLockLeavesNoMemberTaken) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Client other{fast_config(server)};
  Lock blocker = other.get_lock("multi-b");
  blocker.lock();
  MultiLock both{client.get_lock("multi-a"), client.get_lock("multi-b")};
  cancel_source source;
  auto waiting = std::async(std::launch::async,
                            [&] { return code_of([&] { both.lock(lock_options().with_cancel(source.token())); }); });
  // Rounds run: a member waits on the held one's channel.
  bool waiting_seen = eventually([&] { return subscribers(probe, "redisson_lock__channel:{multi-b}") >= 1; });
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  EXPECT_TRUE(eventually([&] { return !probe.exists("multi-a"); }));
  blocker.unlock();
  EXPECT_FALSE(probe.exists("multi-b"));
}

// Cancellation is on every waiting call: a bounded try_lock, the callback
// forms, and a composite's callback form.
TEST(Cancel, ABoundedTryLockIsCancelledBeforeItsWaitEnds) {
  RedisServer server;
  RedisProbe probe(server);
  Client holder_client{fast_config(server)};
  Client waiter_client{fast_config(server)};
  Lock held = holder_client.get_lock("bounded-cancelled");
  held.lock();
  Lock lock = waiter_client.get_lock("bounded-cancelled");
  cancel_source source;
  auto waiting = std::async(std::launch::async, [&] {
    return code_of([&] { lock.try_lock(lock_options().with_wait(30s).with_cancel(source.token())); });
  });
  bool waiting_seen = eventually([&] { return subscribers(probe, "redisson_lock__channel:{bounded-cancelled}") == 1; });
  auto cancelled_at = std::chrono::steady_clock::now();
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(waiting.get(), errc::cancelled);
  EXPECT_LT(elapsed_ms(cancelled_at), 500);
  held.unlock();
  EXPECT_FALSE(probe.exists("bounded-cancelled"));
}

TEST(Cancel, CallbackFormsAreCancelled) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Client other{fast_config(server)};
  Lock held = other.get_lock("callback-cancelled");
  held.lock();
  Lock lock = client.get_lock("callback-cancelled");
  cancel_source source;
  std::promise<std::error_code> locked;
  std::promise<std::error_code> tried;
  lock.lock_async(new_owner_id(), lock_options().with_cancel(source.token()),
                  [&](std::error_code error) { locked.set_value(error); });
  lock.try_lock_async(
      new_owner_id(), lock_options().with_wait(30s).with_cancel(source.token()),
      [&](std::error_code error, bool acquired) { tried.set_value(acquired ? std::error_code{} : error); });
  bool waiting_seen =
      eventually([&] { return subscribers(probe, "redisson_lock__channel:{callback-cancelled}") == 1; });
  source.cancel();  // before any assertion: a failed one must not leave the waits running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(locked.get_future().get(), errc::cancelled);
  EXPECT_EQ(tried.get_future().get(), errc::cancelled);
  held.unlock();
  EXPECT_FALSE(probe.exists("callback-cancelled"));
}

TEST(Cancel, ACompositeCallbackFormIsCancelled) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Client other{fast_config(server)};
  Lock blocker = other.get_lock("callback-multi-b");
  blocker.lock();
  MultiLock both{client.get_lock("callback-multi-a"), client.get_lock("callback-multi-b")};
  cancel_source source;
  std::promise<std::error_code> locked;
  both.lock_async(new_owner_id(), lock_options().with_cancel(source.token()),
                  [&](std::error_code error) { locked.set_value(error); });
  bool waiting_seen = eventually([&] { return subscribers(probe, "redisson_lock__channel:{callback-multi-b}") >= 1; });
  source.cancel();  // before any assertion: a failed one must not leave the wait running
  ASSERT_TRUE(waiting_seen);
  EXPECT_EQ(locked.get_future().get(), errc::cancelled);
  EXPECT_TRUE(eventually([&] { return !probe.exists("callback-multi-a"); }));
  blocker.unlock();
  EXPECT_FALSE(probe.exists("callback-multi-b"));
}

// The lock forms wait for ever: a wait in their options is refused rather
// than taken for a bound, in every form and on every kind, and sends nothing.
TEST(Cancel, ALockFormRefusesAWait) {
  RedisServer server;
  RedisProbe probe(server);
  Client client{fast_config(server)};
  Lock lock = client.get_lock("wait-refused");
  FencedLock fenced = client.get_fenced_lock("wait-refused-fenced");
  MultiLock both{client.get_lock("wait-refused-a"), client.get_lock("wait-refused-b")};
  auto with_wait = lock_options().with_wait(1s);
  long long before = probe.command_calls("evalsha") + probe.command_calls("eval");
  EXPECT_EQ(code_of([&] { lock.lock(with_wait); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { lock.lock_async(1, with_wait).get(); }), errc::invalid_argument);
  std::promise<std::error_code> called;
  lock.lock_async(1, with_wait, [&](std::error_code error) { called.set_value(error); });
  EXPECT_EQ(called.get_future().get(), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { fenced.lock_and_get_token(with_wait); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { both.lock(with_wait); }), errc::invalid_argument);
  EXPECT_EQ(code_of([&] { both.lock_async(1, with_wait).get(); }), errc::invalid_argument);
  EXPECT_EQ(probe.command_calls("evalsha") + probe.command_calls("eval"), before);
  EXPECT_FALSE(probe.exists("wait-refused"));
}

}  // namespace
}  // namespace warden::test
