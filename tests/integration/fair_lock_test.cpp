// FairLock: Redisson's queue layout, first come first served across
// processes, wake-ups for the queue head only, and waiters that die or give up.
#include "fair_lock_fixture.hpp"

namespace warden::test {
namespace {

TEST_F(FairLockTest, HoldQueueAndHandOverLeaveRedissonsLayout) {
  const std::string name = "fair:orders";
  Client holder{config()};
  Client waiters{config()};
  FairLock lock = holder.get_fair_lock(name);
  FairLock theirs = waiters.get_fair_lock(name);
  const std::string me = owner_of(holder, current_thread_id());
  const std::string first = owner_of(waiters, 101), second = owner_of(waiters, 102);
  MessageRecorder recorder(server, {"redisson_lock__channel:{" + name + "}", wake_channel(name, me),
                                    wake_channel(name, first), wake_channel(name, second)});

  lock.lock();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "1"}}));
  EXPECT_GT(probe.pttl(name), 29'000);
  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
  lock.lock();  // re-entry
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "2"}}));
  EXPECT_EQ(lock.hold_count(), 2);
  lock.unlock();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "1"}}));

  // Two waiters queue up behind the holder, in the order they asked.
  long long before = server_ms(probe);
  auto got_first = theirs.lock_async(101);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 1; }));
  auto got_second = theirs.lock_async(102);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 2; }));
  EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{first, second}));
  // Deadline = latest attempt + position * wait timeout, by the server's clock.
  auto deadlines = deadlines_of(probe, name);
  long long after = server_ms(probe);
  ASSERT_EQ(deadlines.size(), 2u);
  EXPECT_GE(deadlines[first], before + wait_ms);
  EXPECT_LE(deadlines[first], after + wait_ms);
  EXPECT_GE(deadlines[second], before + 2 * wait_ms);
  EXPECT_LE(deadlines[second], after + 2 * wait_ms);
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "1"}}));

  // The release wakes the head, on its own channel, and it takes the lock.
  lock.unlock();
  ASSERT_EQ(got_first.wait_for(2s), std::future_status::ready);
  got_first.get();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{first, "1"}}));
  EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{second}));
  // The one left moved up a place: its deadline moved forward by one wait timeout.
  auto moved = deadlines_of(probe, name);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_GE(moved[second], deadlines[second] - wait_ms);
  EXPECT_LE(moved[second], deadlines[second] - wait_ms + 1'000);
  EXPECT_NE(got_second.wait_for(0ms), std::future_status::ready);

  theirs.unlock_async(101).get();
  ASSERT_EQ(got_second.wait_for(2s), std::future_status::ready);
  got_second.get();
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{second, "1"}}));
  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
  theirs.unlock_async(102).get();  // nobody queued: nobody to tell
  EXPECT_FALSE(probe.exists(name));

  auto messages = recorder.wait_for(2, 2s);
  EXPECT_EQ(recorder.wait_for(3, 200ms).size(), 2u) << "only releases with a queue head publish";
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].channel, wake_channel(name, first));
  EXPECT_EQ(messages[0].payload, "0");
  EXPECT_EQ(messages[1].channel, wake_channel(name, second));
  EXPECT_EQ(messages[1].payload, "0");
}

TEST_F(FairLockTest, TryLockWithoutWaitingNeitherQueuesNorOvertakes) {
  const std::string name = "fair:try";
  Client holder{config()};
  Client other{config()};
  FairLock lock = holder.get_fair_lock(name);
  FairLock theirs = other.get_fair_lock(name);
  const std::string them = owner_of(other, current_thread_id());

  lock.lock();
  EXPECT_FALSE(theirs.try_lock());
  EXPECT_FALSE(theirs.try_lock_for(0ms));
  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
  EXPECT_EQ(log.runs(scripts::fair_give_up, them), 0) << "a single attempt has no queue entry to give up";
  lock.unlock();

  // A free lock whose queue has a live head (another client's waiter): only
  // that head may take it.
  const std::string ghost = "00000000-0000-4000-8000-000000000000:1";
  probe.command({"RPUSH", queue_key(name), ghost});
  probe.command({"ZADD", timeout_key(name), std::to_string(server_ms(probe) + 60'000), ghost});
  EXPECT_FALSE(theirs.try_lock());
  EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{ghost}));
  EXPECT_FALSE(probe.exists(name));
  // Its deadline passes: it is dropped, and the lock is anyone's again.
  probe.command({"ZADD", timeout_key(name), std::to_string(server_ms(probe) - 1), ghost});
  EXPECT_TRUE(theirs.try_lock());
  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{them, "1"}}));
  theirs.unlock();
}

TEST_F(FairLockTest, TimedOutTryLockLeavesTheQueueWithoutPushingBackOthers) {
  const std::string name = "fair:give-up";
  Client holder{config()};
  Client a{config()};
  Client b{config()};
  const std::string quitter = owner_of(a, 201), stayer = owner_of(b, 202);
  holder.get_fair_lock(name).lock(lock_options().with_lease(60s));

  auto start = std::chrono::steady_clock::now();
  auto quits = a.get_fair_lock(name).try_lock_async(201, lock_options().with_wait(700ms));
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 1; }));
  auto stays = b.get_fair_lock(name).lock_async(202);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 2; }));
  EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{quitter, stayer}));
  long long second_place = deadlines_of(probe, name)[stayer];

  EXPECT_FALSE(quits.get());
  EXPECT_GE(elapsed_ms(start), 700);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name) == std::vector<std::string>{stayer}; }));
  auto deadlines = deadlines_of(probe, name);
  EXPECT_EQ(deadlines.count(quitter), 0u) << "the timed-out waiter left its deadline behind";
  ASSERT_EQ(deadlines.count(stayer), 1u);
  // Now first in line, its deadline is at most one wait timeout away: the
  // waiter that left took its share of the queue's time with it.
  EXPECT_LE(deadlines[stayer], server_ms(probe) + wait_ms);
  EXPECT_GE(deadlines[stayer], second_place - wait_ms);
  EXPECT_LE(deadlines[stayer], second_place - wait_ms + 500);

  holder.get_fair_lock(name).unlock();
  ASSERT_EQ(stays.wait_for(2s), std::future_status::ready);
  stays.get();
  b.get_fair_lock(name).unlock_async(202).get();
  for (auto& key : {name, queue_key(name), timeout_key(name)}) EXPECT_FALSE(probe.exists(key)) << key;
}

// A try_lock_for() that returns false has left the queue by then, as
// Redisson's tryLock has: its id is in neither the queue nor the deadlines
// when the call returns, read at once, without waiting for it to go. The
// blocking form, the future and the callback, each many times over: a place
// left a moment after the answer (a give-up sent but not yet run) is caught
// in some of them.
TEST_F(FairLockTest, AFalseTryLockHasLeftTheQueueWhenItReturns) {
  const std::string name = "fair:left-on-return";
  Client holder{config()};
  Client other{config()};
  holder.get_fair_lock(name).lock(lock_options().with_lease(60s));
  FairLock theirs = other.get_fair_lock(name);
  auto gone = [&](const std::string& owner) {
    auto queue = queue_of(probe, name);
    bool queued = std::find(queue.begin(), queue.end(), owner) != queue.end();
    bool deadline = deadlines_of(probe, name).count(owner) > 0;
    return !queued && !deadline;
  };
  constexpr int rounds = 100;

  // The future: it queues while it waits, and is gone when its answer is.
  const std::string async_owner = owner_of(other, 301);
  auto first = theirs.try_lock_async(301, lock_options().with_wait(1s));
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name) == std::vector<std::string>{async_owner}; }));
  EXPECT_FALSE(first.get());
  EXPECT_TRUE(gone(async_owner)) << "still queued when the future said false";
  int left_behind = 0;
  for (int i = 0; i < rounds; ++i) {
    EXPECT_FALSE(theirs.try_lock_async(301, lock_options().with_wait(5ms)).get());
    if (!gone(async_owner)) ++left_behind;
  }
  EXPECT_EQ(left_behind, 0) << "times still queued when the future said false";
  // Each wait queued: each left with a give-up.
  EXPECT_EQ(log.runs(scripts::fair_give_up, async_owner), rounds + 1);

  // Blocking.
  const std::string me = owner_of(other, current_thread_id());
  left_behind = 0;
  for (int i = 0; i < rounds; ++i) {
    EXPECT_FALSE(theirs.try_lock_for(5ms));
    if (!gone(me)) ++left_behind;
  }
  EXPECT_EQ(left_behind, 0) << "times still queued when try_lock_for() returned false";
  EXPECT_EQ(log.runs(scripts::fair_give_up, me), rounds);

  // The callback: told false once the place is gone.
  const std::string callback_owner = owner_of(other, 302);
  left_behind = 0;
  for (int i = 0; i < rounds; ++i) {
    std::promise<bool> told;
    theirs.try_lock_async(302, lock_options().with_wait(5ms), [&](std::error_code error, bool acquired) {
      EXPECT_FALSE(error) << error.message();
      told.set_value(acquired);
    });
    EXPECT_FALSE(told.get_future().get());
    if (!gone(callback_owner)) ++left_behind;
  }
  EXPECT_EQ(left_behind, 0) << "times still queued when the callback said false";
  EXPECT_EQ(log.runs(scripts::fair_give_up, callback_owner), rounds);

  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
  holder.get_fair_lock(name).unlock();
}

TEST_F(FairLockTest, ForceUnlockWakesTheQueueHead) {
  const std::string name = "fair:forced";
  Client holder{config()};
  Client waiter{config()};
  Client admin{config()};
  const std::string head = owner_of(waiter, 301);
  holder.get_fair_lock(name).lock(lock_options().with_lease(60s));
  auto got = waiter.get_fair_lock(name).lock_async(301);
  // Queued, subscribed, tried again and asleep (for up to 10 s).
  ASSERT_TRUE(eventually([&] { return log.runs(scripts::fair_acquire, head) == 2; }));
  MessageRecorder recorder(server, {wake_channel(name, head), "redisson_lock__channel:{" + name + "}"});

  auto forced_at = std::chrono::steady_clock::now();
  EXPECT_TRUE(admin.get_fair_lock(name).force_unlock());
  ASSERT_EQ(got.wait_for(2s), std::future_status::ready);
  got.get();
  EXPECT_LT(elapsed_ms(forced_at), 1'000);
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{head, "1"}}));
  auto messages = recorder.wait_for(1, 2s);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].channel, wake_channel(name, head));
  EXPECT_EQ(messages[0].payload, "0");
  EXPECT_TRUE(admin.get_fair_lock(name).force_unlock());
  EXPECT_FALSE(admin.get_fair_lock(name).force_unlock());
}

TEST_F(FairLockTest, ReleaseWakesOnlyTheQueueHead) {
  const std::string name = "fair:herd";
  constexpr int count = 5;
  Client holder{config()};
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::string> owners;
  std::vector<std::string> channels{"redisson_lock__channel:{" + name + "}"};
  for (int i = 0; i < count; ++i) {
    clients.push_back(std::make_unique<Client>(config()));
    owners.push_back(owner_of(*clients.back(), 400 + i));
    channels.push_back(wake_channel(name, owners.back()));
  }
  MessageRecorder recorder(server, channels);
  holder.get_fair_lock(name).lock(
      lock_options().with_lease(60s));  // waiters would sleep 10 s between their own attempts

  std::vector<AcquireFuture<void>> got;
  for (int i = 0; i < count; ++i) {
    got.push_back(clients[i]->get_fair_lock(name).lock_async(400 + i));
    ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == static_cast<std::size_t>(i) + 1; }));
  }
  EXPECT_EQ(queue_of(probe, name), owners);
  // Each waiter: one attempt that queued it, one once subscribed; then asleep.
  for (auto& owner : owners) {
    ASSERT_TRUE(eventually([&] { return log.runs(scripts::fair_acquire, owner) == 2; })) << owner;
  }

  holder.get_fair_lock(name).unlock();
  for (int i = 0; i < count; ++i) {
    ASSERT_EQ(got[i].wait_for(2s), std::future_status::ready) << "waiter " << i;
    got[i].get();
    EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{owners[i], "1"}}));
    EXPECT_EQ(queue_of(probe, name), std::vector<std::string>(owners.begin() + i + 1, owners.end()));
    clients[i]->get_fair_lock(name).unlock_async(400 + i).get();
  }

  // Five releases, five wake-ups: each to the head of the moment, on its own
  // channel. Every waiter ran its acquire exactly once more, when woken.
  auto messages = recorder.wait_for(count, 2s);
  EXPECT_EQ(recorder.wait_for(count + 1, 200ms).size(), static_cast<std::size_t>(count));
  ASSERT_EQ(messages.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(messages[i].channel, wake_channel(name, owners[i]));
    EXPECT_EQ(log.runs(scripts::fair_acquire, owners[i]), 3) << "waiter " << i << " was woken out of turn";
  }
}

// The state letter of a process in /proc ('T' once stopped).
char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() ? '?' : line[close + 2];
}

TEST_F(FairLockTest, ProcessesAreServedInTheOrderTheyQueued) {
  const std::string name = "fair:fifo";
  constexpr int processes = 4;
  // A short wait timeout: every worker re-tries every 400 ms while it waits.
  const std::string worker_wait = "1200";
  Client holder{config()};
  holder.get_fair_lock(name).lock(lock_options().with_lease(60s));
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int i = 0; i < processes; ++i) {
    children.push_back(std::make_unique<ChildProcess>(
        WARDEN_TEST_WORKER,
        std::vector<std::string>{"fair", server.url(), name, "order", std::to_string(i), worker_wait}));
    // The next one starts only once this one is in the queue.
    ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == static_cast<std::size_t>(i) + 1; }, 10s));
  }
  const auto owners = queue_of(probe, name);

  // The head is frozen while the lock falls free (the holder's lease runs
  // out: no release, no wake-up). Each of the others finds it free at its
  // next attempt and must leave it to the head.
  children[0]->kill(SIGSTOP);
  ASSERT_TRUE(eventually([&] { return process_state(children[0]->pid()) == 'T'; }));
  std::vector<long long> attempts;
  for (auto& owner : owners) attempts.push_back(log.runs(scripts::fair_acquire, owner));
  probe.command({"PEXPIRE", name, "1"});
  for (int i = 1; i < processes; ++i) {
    ASSERT_TRUE(eventually([&] { return log.runs(scripts::fair_acquire, owners[i]) > attempts[i]; }));
  }
  EXPECT_FALSE(probe.exists(name)) << "a waiter behind the head took the lock";
  EXPECT_EQ(queue_of(probe, name), owners);
  // Frozen for less than its wait timeout, the head is still first in line.
  children[0]->kill(SIGCONT);

  for (auto& child : children) {
    int code = -1;
    ASSERT_TRUE(child->wait_for(20s, &code)) << "worker hung";
    EXPECT_EQ(code, 0);
  }
  std::vector<std::string> order;
  for (auto& element : probe.command({"LRANGE", "order", "0", "-1"}).elements) order.push_back(element.str);
  EXPECT_EQ(order, (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_FALSE(probe.exists(name));
  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
}

TEST_F(FairLockTest, KilledWaiterStallsTheQueueAtMostTheWaitTimeout) {
  const std::string name = "fair:crash";
  constexpr long long short_wait = 1'000;
  Config short_config = config();
  short_config.fair_lock_wait_timeout = std::chrono::milliseconds{short_wait};
  Client holder{short_config};
  Client survivor{short_config};
  const std::string next = owner_of(survivor, 501);
  FairLock lock = holder.get_fair_lock(name);
  lock.lock();

  ChildProcess victim(WARDEN_TEST_WORKER, {"fair", server.url(), name, "order", "victim", std::to_string(short_wait)});
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 1; }, 10s));
  const std::string dead = queue_of(probe, name).front();
  auto got = survivor.get_fair_lock(name).lock_async(501);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 2; }));
  EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{dead, next}));

  victim.kill(SIGKILL);
  victim.wait();
  auto killed_at = std::chrono::steady_clock::now();
  lock.unlock();  // wakes the dead head, which never answers
  ASSERT_EQ(got.wait_for(5s), std::future_status::ready) << "the queue stalled behind a dead waiter";
  got.get();
  auto stalled = elapsed_ms(killed_at);
  EXPECT_LT(stalled, short_wait + 500) << "stalled " << stalled << " ms";
  EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{next, "1"}}));
  EXPECT_FALSE(probe.exists(queue_key(name)));
  EXPECT_FALSE(probe.exists(timeout_key(name)));
  EXPECT_FALSE(probe.exists("order")) << "the victim never got the lock";
  survivor.get_fair_lock(name).unlock_async(501).get();
}

TEST_F(FairLockTest, GoneHeadsAreDroppedAndTheNextHeadIsWoken) {
  const std::string name = "fair:gone";
  Client holder{config()};
  Client waiter{config()};
  Client other{config()};
  const std::string next = owner_of(waiter, 601);
  const std::string ghost = "00000000-0000-4000-8000-000000000000:9";
  FairLock lock = holder.get_fair_lock(name);

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "dropped by the release" : "dropped by another's attempt");
    lock.lock(lock_options().with_lease(60s));
    long long attempts = log.runs(scripts::fair_acquire, next);
    // A live-looking head from some other process, then our waiter behind it.
    probe.command({"RPUSH", queue_key(name), ghost});
    probe.command({"ZADD", timeout_key(name), std::to_string(server_ms(probe) + 60'000), ghost});
    auto got = waiter.get_fair_lock(name).lock_async(601);
    ASSERT_TRUE(eventually([&] { return log.runs(scripts::fair_acquire, next) == attempts + 2; }));
    EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{ghost, next}));
    MessageRecorder recorder(server, {wake_channel(name, next), wake_channel(name, ghost)});

    if (round == 1) {
      lock.unlock();  // wakes the ghost, which never comes
      ASSERT_EQ(recorder.wait_for(1, 2s).size(), 1u);
      EXPECT_EQ(recorder.messages()[0].channel, wake_channel(name, ghost));
    }
    // The ghost's deadline passes; the next script run drops it.
    probe.command({"ZADD", timeout_key(name), std::to_string(server_ms(probe) - 1), ghost});
    auto at = std::chrono::steady_clock::now();
    if (round == 0) {
      lock.unlock();
    } else {
      EXPECT_FALSE(other.get_fair_lock(name).try_lock());  // not the head: it may not take it
    }
    // Either way the new head is told at once (it would sleep 10 s otherwise).
    ASSERT_EQ(got.wait_for(2s), std::future_status::ready);
    got.get();
    EXPECT_LT(elapsed_ms(at), 1'000);
    auto messages = recorder.wait_for(round + 1, 2s);
    ASSERT_EQ(messages.size(), static_cast<std::size_t>(round + 1));
    EXPECT_EQ(messages.back().channel, wake_channel(name, next));
    EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{next, "1"}}));
    EXPECT_FALSE(probe.exists(queue_key(name)));
    waiter.get_fair_lock(name).unlock_async(601).get();
  }
}

TEST_F(FairLockTest, ShortWaitTimeoutKeepsLiveWaitersInPlaceDuringLongWaits) {
  const std::string name = "fair:long-wait";
  Config holder_config = config();
  holder_config.lock_watchdog_timeout = 300ms;  // the hold's TTL stays short...
  Config short_config = config();
  short_config.fair_lock_wait_timeout = 300ms;
  Client holder{holder_config};
  Client a{short_config};
  Client b{short_config};
  const std::string first = owner_of(a, 701), second = owner_of(b, 702);
  FairLock lock = holder.get_fair_lock(name);
  lock.lock();

  auto got_first = a.get_fair_lock(name).lock_async(701);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 1; }));
  auto got_second = b.get_fair_lock(name).lock_async(702);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, name).size() == 2; }));
  // ... and the wait lasts five wait timeouts: time is the subject here. The
  // waiters keep refreshing their deadlines, so neither is dropped.
  auto start = std::chrono::steady_clock::now();
  while (elapsed_ms(start) < 1'500) {
    ASSERT_EQ(queue_of(probe, name), (std::vector<std::string>{first, second}))
        << "a live waiter lost its place after " << elapsed_ms(start) << " ms";
    auto deadlines = deadlines_of(probe, name);
    EXPECT_GT(deadlines[first], server_ms(probe));
    std::this_thread::sleep_for(20ms);
  }

  lock.unlock();
  ASSERT_EQ(got_first.wait_for(2s), std::future_status::ready);
  got_first.get();
  EXPECT_EQ(got_second.wait_for(0ms), std::future_status::timeout);
  EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{second}));
  a.get_fair_lock(name).unlock_async(701).get();
  ASSERT_EQ(got_second.wait_for(2s), std::future_status::ready);
  got_second.get();
  b.get_fair_lock(name).unlock_async(702).get();
  for (auto& key : {name, queue_key(name), timeout_key(name)}) EXPECT_FALSE(probe.exists(key)) << key;
}

// Anything that takes a warden::Lock takes a FairLock.
void hold_briefly(Lock& lock, int& entered) {
  std::lock_guard<Lock> guard(lock);
  ++entered;
}

TEST_F(FairLockTest, IsALockEverywhereALockIsAccepted) {
  const std::string name = "fair:lockable";
  Config short_watchdog = config();
  short_watchdog.lock_watchdog_timeout = 300ms;
  Client client{short_watchdog};
  FairLock fair = client.get_fair_lock(name);
  const std::string me = owner_of(client, current_thread_id());
  {
    std::lock_guard<FairLock> guard(fair);
    EXPECT_TRUE(fair.is_locked());
    EXPECT_TRUE(fair.is_held());
    EXPECT_EQ(fair.hold_count(), 1);
  }
  EXPECT_FALSE(fair.is_locked());

  Lock plain = fair;  // a copy of the handle, still the fair lock
  int entered = 0;
  hold_briefly(plain, entered);
  {
    std::scoped_lock guard(plain);
    std::unique_lock<Lock> again(plain, std::defer_lock);
    EXPECT_TRUE(again.try_lock_for(100ms));  // re-entrant
    EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{me, "2"}}));
    // Renewed by the watchdog, like any hold: held for several leases.
    auto start = std::chrono::steady_clock::now();
    while (elapsed_ms(start) < 700) {
      ASSERT_TRUE(probe.exists(name)) << "expired after " << elapsed_ms(start) << " ms";
      std::this_thread::sleep_for(50ms);
    }
    EXPECT_GT(plain.valid_until(), std::chrono::steady_clock::now());
  }
  EXPECT_EQ(entered, 1);
  EXPECT_FALSE(probe.exists(name));

  // The same handle the client hands out for the name: queues are shared.
  using warden::detail::access;
  EXPECT_EQ(access::core(client.get_fair_lock(name)), access::core(fair));
  EXPECT_NE(access::core(client.get_lock(name)), access::core(fair));
}

// A queue shared with Redisson, whose waiters write their deadline once (the
// one ahead + W) and never refresh it. A dead head dropped ahead of a live
// Redisson waiter must leave that waiter's deadline as it is, or it would be
// dropped too and a warden waiter behind it would jump the queue.
TEST_F(FairLockTest, ADeadHeadIsDroppedWithoutDroppingTheLiveRedissonWaiterBehindIt) {
  const std::string name = "fair:mixed";
  Client holder{config()};
  Client ours{config()};
  const std::string dead = "0b5e2d8e-1111-4a6b-9c3d-5e7f8a9b0c1d:1";
  const std::string java = "6f1c7a52-5b7e-4c0a-9d55-3c2f0e6f4a11:1";
  const std::string mine = owner_of(ours, 801);
  FairLock lock = holder.get_fair_lock(name);

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "dead head dropped by a waiter's attempt" : "dead head dropped by the release");
    lock.lock(lock_options().with_lease(60s));
    auto mine_queued = [&] {
      auto queue = queue_of(probe, name);
      return !queue.empty() && queue.back() == mine;
    };
    // Redisson's queue: a head whose process died (its deadline passed), and
    // a live Redisson waiter behind it, whose deadline is the head's plus W.
    long long dead_deadline = 0, java_deadline = 0;
    auto redisson_deadlines = [&](long long head_deadline) {
      dead_deadline = head_deadline;
      java_deadline = head_deadline + wait_ms;
      probe.command(
          {"ZADD", timeout_key(name), std::to_string(dead_deadline), dead, std::to_string(java_deadline), java});
    };
    probe.command({"RPUSH", queue_key(name), dead, java});
    AcquireFuture<void> got;
    if (round == 0) {
      redisson_deadlines(server_ms(probe) - 1'000);
      got = ours.get_fair_lock(name).lock_async(801);  // its attempt drops the dead head
      ASSERT_TRUE(eventually(mine_queued));
    } else {
      redisson_deadlines(server_ms(probe) + 60'000);
      got = ours.get_fair_lock(name).lock_async(801);
      ASSERT_TRUE(eventually(mine_queued));
      EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{dead, java, mine}));
      redisson_deadlines(server_ms(probe) - 1'000);  // now the head dies; the release drops it
    }
    MessageRecorder recorder(server, {wake_channel(name, dead), wake_channel(name, java), wake_channel(name, mine)});
    if (round == 0) {
      EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{java, mine})) << "order kept";
    }
    auto deadlines = deadlines_of(probe, name);
    EXPECT_EQ(deadlines[java], java_deadline) << "the Redisson waiter's deadline was changed";
    EXPECT_GE(deadlines[mine], server_ms(probe) + wait_ms) << "ours is behind it";

    // The holder leaves; the head is Redisson's live waiter, so ours may not
    // take the free lock.
    lock.unlock();
    auto woken = recorder.wait_for(1, 2s);
    ASSERT_EQ(woken.size(), 1u);
    EXPECT_EQ(woken[0].channel, wake_channel(name, java)) << "the live Redisson waiter is the one woken";
    EXPECT_EQ(got.wait_for(300ms), std::future_status::timeout) << "a warden waiter jumped the queue";
    EXPECT_FALSE(probe.exists(name));
    EXPECT_EQ(queue_of(probe, name), (std::vector<std::string>{java, mine})) << "order kept";
    EXPECT_EQ(deadlines_of(probe, name)[java], java_deadline);

    // Redisson's waiter takes it as Redisson does (leaves the queue, everyone
    // behind moves up one place), then releases it, waking the next head.
    probe.command({"LPOP", queue_key(name)});
    probe.command({"ZREM", timeout_key(name), java});
    probe.command({"ZINCRBY", timeout_key(name), std::to_string(-wait_ms), mine});
    probe.command({"HSET", name, java, "1"});
    probe.command({"PEXPIRE", name, "30000"});
    EXPECT_EQ(got.wait_for(100ms), std::future_status::timeout);
    probe.command({"DEL", name});
    probe.command({"PUBLISH", wake_channel(name, mine), "0"});
    ASSERT_EQ(got.wait_for(2s), std::future_status::ready);
    got.get();
    EXPECT_EQ(probe.hgetall(name), (std::map<std::string, std::string>{{mine, "1"}}));
    ours.get_fair_lock(name).unlock_async(801).get();
    for (auto& key : {name, queue_key(name), timeout_key(name)}) EXPECT_FALSE(probe.exists(key)) << key;
  }
}

// A MultiLock over fair locks waits in their queues; between its attempts it
// keeps its places instead of leaving and queueing again at the end.
TEST_F(FairLockTest, AMultiLockKeepsItsQueuePlacesBetweenAttempts) {
  const std::string a = "fair:multi-a", b = "fair:multi-b";
  Client holder{config()};
  Client multi_client{config()};
  Client other{config()};
  const std::string multi_owner = owner_of(multi_client, 901), later = owner_of(other, 902);
  holder.get_fair_lock(a).lock(lock_options().with_lease(60s));
  MultiLock multi{multi_client.get_fair_lock(a), multi_client.get_fair_lock(b)};

  auto got = multi.try_lock_async(901, lock_options().with_wait(20s));
  ASSERT_TRUE(eventually([&] { return queue_of(probe, a).size() == 1; }));
  auto queued = other.get_fair_lock(a).lock_async(902);
  ASSERT_TRUE(eventually([&] { return queue_of(probe, a).size() == 2; }));
  // Attempts last 20 to 400 ms, with pauses of 10 to 200 ms between them:
  // 1.5 s spans several, and the queue must never change meanwhile.
  auto start = std::chrono::steady_clock::now();
  while (elapsed_ms(start) < 1'500) {
    ASSERT_EQ(queue_of(probe, a), (std::vector<std::string>{multi_owner, later}))
        << "the MultiLock lost its place after " << elapsed_ms(start) << " ms";
    std::this_thread::sleep_for(5ms);
  }

  holder.get_fair_lock(a).unlock();
  ASSERT_EQ(got.wait_for(3s), std::future_status::ready);
  EXPECT_TRUE(got.get());
  EXPECT_EQ(probe.hgetall(a), (std::map<std::string, std::string>{{multi_owner, "1"}}));
  EXPECT_EQ(probe.hgetall(b), (std::map<std::string, std::string>{{multi_owner, "1"}}));
  EXPECT_EQ(queued.wait_for(0ms), std::future_status::timeout);
  multi.unlock_async(901).get();
  ASSERT_EQ(queued.wait_for(2s), std::future_status::ready);
  queued.get();

  // A call that ends without the lock gives its places up.
  auto gave_up = multi.try_lock_async(903, lock_options().with_wait(500ms));
  ASSERT_TRUE(eventually([&] { return queue_of(probe, a).size() == 1; }));
  EXPECT_FALSE(gave_up.get());
  EXPECT_TRUE(eventually([&] { return !probe.exists(queue_key(a)) && !probe.exists(timeout_key(a)); }))
      << "the MultiLock left its place behind: " << ::testing::PrintToString(queue_of(probe, a));
  EXPECT_FALSE(probe.exists(b));
  other.get_fair_lock(a).unlock_async(902).get();
  EXPECT_TRUE(probe.keys("fair:*").empty());
  EXPECT_TRUE(probe.keys("redisson_lock_*").empty());
}

TEST_F(FairLockTest, BadInputIsRejected) {
  Client client{config()};
  try {
    client.get_fair_lock("");
    FAIL() << "an empty name must be rejected";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument);
  }
  Config zero = config();
  zero.fair_lock_wait_timeout = 0ms;
  try {
    Client misconfigured{zero};  // the Client checks its Config
    FAIL() << "a zero wait timeout must be rejected";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("fair_lock_wait_timeout"), std::string::npos) << error.what();
  }
  EXPECT_TRUE(probe.keys("*").empty());
}

}  // namespace
}  // namespace warden::test
