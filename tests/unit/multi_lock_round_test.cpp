// A MultiLock's rounds against a fake host (no loop thread, no server): a
// round takes every member or none; when one member is held elsewhere it
// gives back the members it took, and never releases one it did not take.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "composite/composite_core.hpp"
#include "composite/multi_core.hpp"
#include "fake_host.hpp"
#include "lock/lock_core.hpp"

namespace warden::detail {
namespace {

using namespace std::chrono_literals;
using testing::FakeHost;

constexpr thread_id owner = 11;

struct Outcome {
  bool done = false;
  bool acquired = false;
  std::optional<Error> error;
};

// Plays the server for locks "a", "b" and "c": an acquire of a name in
// `held_elsewhere` finds it held (5 s to live), any other is granted; a
// release finds the hold. Records which names were acquired and released.
struct Server {
  std::set<std::string> held_elsewhere;
  std::multiset<std::string> granted;
  std::multiset<std::string> released;

  std::string name_of(const FakeHost::Sent& sent) const { return sent.route_key; }

  void answer_all(FakeHost& host) {
    while (!host.sent().empty()) {
      auto& sent = host.sent().front();
      auto script = sent.script();
      auto name = name_of(sent);
      if (script == "lock_acquire") {
        if (held_elsewhere.count(name) != 0) {
          host.answer(Reply::make_integer(5'000));
        } else {
          granted.insert(name);
          host.answer(Reply{});  // nil: acquired
        }
      } else if (script == "lock_release") {
        released.insert(name);
        host.answer(Reply::make_integer(1));  // released
      } else {
        ADD_FAILURE() << "unexpected command: " << sent.command.name() << " " << script;
        host.answer(Reply::make_error("ERR unexpected"));
      }
    }
  }
};

struct Round {
  std::shared_ptr<FakeHost> host = std::make_shared<FakeHost>();
  std::vector<std::shared_ptr<LockCore>> members{std::make_shared<LockCore>(host, "a"),
                                                 std::make_shared<LockCore>(host, "b"),
                                                 std::make_shared<LockCore>(host, "c")};
  std::shared_ptr<CompositeCore> multi = make_multi_core(members);
  Server server;
  Outcome outcome;

  // try_lock_for(wait) with a 10 s lease, played out until it answers.
  void try_acquire(std::chrono::milliseconds wait) {
    multi->try_acquire(owner, wait, 10s, [this](std::optional<Error> error, bool acquired) {
      outcome.done = true;
      outcome.acquired = acquired;
      outcome.error = std::move(error);
    });
    for (int turns = 0; turns < 100 && !outcome.done; ++turns) {
      host->run_for(20ms, [this] { server.answer_all(*host); });
    }
    // Gives the answers that come after the verdict (releases) their turn.
    host->run_for(20ms, [this] { server.answer_all(*host); });
  }

  int held(std::size_t i) const { return host->holds().count(*members[i], owner); }

  ~Round() { host->shut_down(); }
};

TEST(MultiLockRound, TakesEveryMemberWhenNoneIsHeld) {
  Round round;
  round.try_acquire(0ms);

  ASSERT_TRUE(round.outcome.done);
  EXPECT_FALSE(round.outcome.error);
  EXPECT_TRUE(round.outcome.acquired);
  EXPECT_EQ(round.server.granted, (std::multiset<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(round.server.released.empty());
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(round.held(i), 1) << "member " << i;
}

TEST(MultiLockRound, GivesBackWhatItTookWhenOneMemberIsHeldElsewhere) {
  Round round;
  round.server.held_elsewhere = {"b"};
  round.try_acquire(0ms);

  ASSERT_TRUE(round.outcome.done);
  EXPECT_FALSE(round.outcome.error) << round.outcome.error->what();
  EXPECT_FALSE(round.outcome.acquired);
  // What it took it gave back, each as often as it took it; the member
  // held elsewhere it never took, so never released.
  EXPECT_EQ(round.server.released, round.server.granted);
  EXPECT_EQ(round.server.released.count("b"), 0u);
  EXPECT_EQ(round.server.granted.count("b"), 0u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(round.held(i), 0) << "member " << i;
}

}  // namespace
}  // namespace warden::detail
