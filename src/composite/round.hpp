// One acquire round of a MultiLock or RedLock: every member is asked at once,
// the votes are gathered until the policy's judge settles them, and the
// answers that arrive after that are dealt with. A round settled as acquired
// hands them to its level: the other nodes are worth holding too, and an
// unlock waits for them. A failed round releases what it took and any late
// hold among the answers it was owed, and continues only then, so that a
// failed call leaves no key behind on a node that answered.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include <warden/cancel.hpp>
#include <warden/thread_id.hpp>

#include "composite/fan_out.hpp"
#include "composite/member_outcome.hpp"
#include "composite/quorum.hpp"

namespace warden::detail {

class CompositeCore;

class Round : public std::enable_shared_from_this<Round> {
 public:
  using milliseconds = std::chrono::milliseconds;

  // The votes of a round once the judge settled them.
  struct Result {
    std::vector<MemberVote> votes;  // a member not heard from yet: pending, "no answer yet"
    verdict outcome = verdict::undecided;
    milliseconds elapsed{0};  // since the round started
    std::vector<bool> taken;  // members that voted yes
    std::vector<bool> owed;   // members whose answer is still to come
  };

  Round(std::shared_ptr<CompositeCore> core, thread_id owner) : core_(std::move(core)), owner_(owner) {}

  // Asks every member to acquire for the owner: each waits `member_wait` and
  // takes `attempt_lease`; `lease` is the caller's (member budgets, validity).
  // `decided` runs once, on the thread of the answer that settled the round.
  void start(milliseconds member_wait, std::optional<milliseconds> attempt_lease, std::optional<milliseconds> lease,
             cancel_token cancel, std::function<void(Result)> decided);

  // The round was kept as level `level` of the owner's hold: answers that
  // come later are added to it.
  void kept(std::uint64_t level);

  // The round failed: releases `taken` and every hold among the `owed`
  // answers, then runs `next`.
  void fail(const std::vector<bool>& taken, std::vector<bool> owed, std::function<void()> next);

 private:
  enum class state { open, kept, failing, failed };

  // Member i's vote: its acquire's outcome, or a failure when it does not
  // answer within its budget. What arrives after the round was settled, or
  // after its budget ran out, goes to late().
  void ask(const std::shared_ptr<Gather<MemberVote>>& gather, std::size_t i, milliseconds member_wait,
           std::optional<milliseconds> attempt_lease, milliseconds budget, const cancel_token& cancel);
  // From member i's I/O thread: its acquire answered, or its budget ran out
  // (acquired = false), after the round was settled.
  void late(std::size_t i, bool acquired);
  void release(std::size_t i, bool counted);
  void stop_waiting(std::size_t i);
  void count_down();

  std::shared_ptr<CompositeCore> core_;
  thread_id owner_;
  std::mutex mutex_;
  state state_ = state::open;
  std::optional<std::uint64_t> level_;
  std::vector<std::pair<std::size_t, bool>> late_;  // answers while open
  std::vector<bool> owed_;                          // failing: answers still awaited
  std::size_t outstanding_ = 0;                     // failing: releases and answers awaited
  std::function<void()> next_;
};

}  // namespace warden::detail
