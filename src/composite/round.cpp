#include "composite/round.hpp"

#include <fmt/format.h>

#include "composite/composite_core.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {

namespace {

std::chrono::milliseconds since(clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
}

std::vector<vote> kinds(const Gather<MemberVote>::slots& slots) {
  std::vector<vote> result;
  result.reserve(slots.size());
  for (auto& slot : slots) result.push_back(slot ? slot->kind : vote::pending);
  return result;
}

}  // namespace

void Round::start(milliseconds member_wait, std::optional<milliseconds> attempt_lease,
                  std::optional<milliseconds> lease, cancel_token cancel, std::function<void(Result)> decided) {
  auto started = clock::now();
  auto validity_lease = core_->effective_lease(lease);
  auto core = core_;
  auto gather = std::make_shared<Gather<MemberVote>>(
      core_->size(),
      [core, validity_lease, started](const Gather<MemberVote>::slots& slots) {
        return core->judge(kinds(slots), validity_lease, since(started)) != verdict::undecided;
      },
      [core, validity_lease, started, decided = std::move(decided)](Gather<MemberVote>::slots slots) {
        Result result;
        result.elapsed = since(started);
        result.votes.reserve(slots.size());
        for (auto& slot : slots) {
          result.votes.push_back(slot ? *slot : MemberVote{vote::pending, {}, "no answer yet"});
        }
        result.outcome = core->judge(kinds(result.votes), validity_lease, result.elapsed);
        result.taken.resize(result.votes.size());
        result.owed.resize(result.votes.size());
        for (std::size_t i = 0; i < result.votes.size(); ++i) {
          result.taken[i] = result.votes[i].kind == vote::yes;
          result.owed[i] = result.votes[i].kind == vote::pending;
        }
        decided(std::move(result));
      });
  for (std::size_t i = 0; i < core_->size(); ++i) {
    ask(gather, i, member_wait, attempt_lease, core_->member_budget(i, member_wait, lease), cancel);
  }
}

void Round::ask(const std::shared_ptr<Gather<MemberVote>>& gather, std::size_t i, milliseconds member_wait,
                std::optional<milliseconds> attempt_lease, milliseconds budget, const cancel_token& cancel) {
  auto member = core_->member(i);
  auto owner = owner_;
  auto round = shared_from_this();
  run_operation_on(
      member,
      [gather, round, i, member, owner, member_wait, attempt_lease, budget, cancel] {
        auto& loop = member->client().loop();
        // Both only ever touched on this member's I/O thread.
        auto timer = std::make_shared<TimerQueue::id>(0);
        auto answered = std::make_shared<bool>(false);
        AcquireOptions options;
        options.cancel = cancel;
        // A fair member that waited without the lock keeps its queue place
        // for the next attempt; the composite gives it up when its call ends.
        options.keep_queue_place = round->core_->members_wait();
        member->acquire(
            owner, member_wait, attempt_lease,
            [gather, round, i, member, timer, answered, &loop](std::error_code error, bool acquired,
                                                               const std::string& message) {
              *answered = true;
              loop.cancel(*timer);
              MemberVote v;
              if (acquired) {
                v.kind = vote::yes;
              } else if (error) {
                v = MemberVote{vote::failed, error, member_cause(*member, error, message)};
              } else {
                v = MemberVote{vote::busy, {}, "taken by another owner"};
              }
              if (!gather->report(i, std::move(v))) round->late(i, acquired);
            },
            std::move(options));
        if (*answered) return;  // answered at once (e.g. its client is shutting down)
        *timer = loop.after(budget, [gather, round, i, member, budget] {
          // A node that is down shows as what its connection last failed with.
          auto down = member->link_problem();
          std::error_code why = down ? down : make_error_code(errc::timed_out);
          MemberVote v{vote::failed, why,
                       fmt::format("{} (no answer within its {} ms budget)", why.message(), budget.count())};
          if (!gather->report(i, std::move(v))) round->late(i, false);
        });
      },
      [gather, i] {
        gather->report(i, MemberVote{vote::failed, make_error_code(errc::shut_down), "client shut down"});
      });
}

void Round::late(std::size_t i, bool acquired) {
  std::optional<std::uint64_t> level;
  bool counted = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    switch (state_) {
      case state::open:
        late_.emplace_back(i, acquired);
        return;
      case state::kept:
        level = level_;
        break;
      case state::failing:
        counted = owed_[i];
        owed_[i] = false;
        break;
      case state::failed:
        break;
    }
  }
  if (level) return core_->late_answer(owner_, *level, i, acquired);
  if (acquired) return release(i, counted);
  if (counted) count_down();
}

void Round::kept(std::uint64_t level) {
  std::vector<std::pair<std::size_t, bool>> late;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    state_ = state::kept;
    level_ = level;
    late.swap(late_);
  }
  for (auto [i, acquired] : late) core_->late_answer(owner_, level, i, acquired);
}

void Round::fail(const std::vector<bool>& taken, std::vector<bool> owed, std::function<void()> next) {
  std::vector<std::pair<std::size_t, bool>> late;
  std::vector<std::size_t> awaited;
  for (std::size_t i = 0; i < owed.size(); ++i) {
    if (owed[i]) awaited.push_back(i);
  }
  {
    std::lock_guard<std::mutex> guard(mutex_);
    state_ = state::failing;
    next_ = std::move(next);
    owed_ = std::move(owed);
    outstanding_ = 1;  // this call's own share, counted down below
    for (bool t : taken) outstanding_ += t ? 1 : 0;
    for (bool o : owed_) outstanding_ += o ? 1 : 0;
    late.swap(late_);
  }
  for (std::size_t i = 0; i < taken.size(); ++i) {
    if (taken[i]) release(i, true);
  }
  for (auto [i, acquired] : late) this->late(i, acquired);
  // A node that is not connected has not received its acquire: nothing to
  // wait for (should it run after a reconnect, its hold is released then).
  auto self = shared_from_this();
  for (auto i : awaited) {
    auto member = core_->member(i);
    run_on(
        member,
        [self, member, i] {
          if (member->link_problem()) self->stop_waiting(i);
        },
        [self, i] { self->stop_waiting(i); });
  }
  count_down();
}

void Round::release(std::size_t i, bool counted) {
  auto member = core_->member(i);
  auto owner = owner_;
  auto self = counted ? shared_from_this() : nullptr;
  run_on(
      member,
      [member, owner, self] {
        member->release(owner, [member, self](std::error_code error, const std::string& message) {
          if (error) {
            member->client().log(log_level::warning,
                                 message + " (releasing after a failed round; it expires with its lease)");
          }
          if (self) self->count_down();
        });
      },
      [self] {
        if (self) self->count_down();
      });
}

void Round::stop_waiting(std::size_t i) {
  bool counted = false;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    counted = state_ == state::failing && owed_[i];
    if (counted) owed_[i] = false;
  }
  if (counted) count_down();
}

void Round::count_down() {
  std::function<void()> next;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (--outstanding_ > 0) return;
    state_ = state::failed;
    next = std::move(next_);
  }
  if (next) next();
}

}  // namespace warden::detail
