// One acquire call of a MultiLock or RedLock: rounds until held, out of time,
// failed or cancelled, with jittered pauses between them; a caller's lease
// that differs from the round's is applied once the round succeeded.
#include "composite/composite_core.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <random>

#include "composite/fan_out.hpp"
#include "composite/round.hpp"
#include "io/backoff.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {

using std::chrono::milliseconds;

namespace {

// Each attempt of a MultiLock lets its members wait a randomly drawn share of
// this, growing per attempt: the caller whose share ends first lets go, so
// crossed orders resolve within one attempt instead of deadlocking.
constexpr milliseconds attempt_wait_min{20};
constexpr milliseconds attempt_wait_max{400};
// The pause between a failed round and the next one, also jittered.
constexpr milliseconds retry_pause_min{10};
constexpr milliseconds retry_pause_max{200};
// Waits longer than this are "for ever" (and keep the deadline from overflowing).
constexpr milliseconds forever{std::chrono::hours(24 * 365 * 100)};

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

template <class T>
void fail(const std::shared_ptr<std::promise<T>>& promise, const Error& error) {
  promise->set_exception(std::make_exception_ptr(error));
}

}  // namespace

class CompositeAcquire : public std::enable_shared_from_this<CompositeAcquire> {
 public:
  using done_fn = std::function<void(std::optional<Error>, bool acquired)>;

  CompositeAcquire(std::shared_ptr<CompositeCore> core, thread_id owner, std::optional<milliseconds> wait,
                   std::optional<milliseconds> lease, done_fn done, cancel_token cancel)
      : core_(std::move(core)),
        owner_(owner),
        lease_(lease),
        done_(std::move(done)),
        cancel_(std::move(cancel)),
        member_waits_(attempt_wait_min, attempt_wait_max, random_seed()),
        pauses_(retry_pause_min, retry_pause_max, random_seed()) {
    if (wait && *wait < forever) deadline_ = clock::now() + *wait;
  }

  void start() { attempt(); }

 private:
  milliseconds remaining() const {
    if (!deadline_) return forever;
    auto left = std::chrono::ceil<milliseconds>(*deadline_ - clock::now());
    return std::max(left, milliseconds{0});
  }

  bool may_retry() const { return !deadline_ || clock::now() < *deadline_; }

  // Checked before each round and after each failed one: the members' own
  // waits end on the token at once, and a pause between rounds is short.
  bool finished_by_cancel() {
    if (!cancel_.cancelled()) return false;
    finish(Error(errc::cancelled, core_->message("the wait was cancelled")), false);
    return true;
  }

  void attempt() {
    if (finished_by_cancel()) return;
    milliseconds member_wait{0};
    if (core_->members_wait()) member_wait = std::min(member_waits_.delay(attempts_), remaining());
    ++attempts_;
    auto attempt_lease = core_->attempt_lease(lease_, member_wait);
    auto self = shared_from_this();
    auto round = std::make_shared<Round>(core_, owner_);
    round->start(member_wait, attempt_lease, lease_, cancel_, [self, round, attempt_lease](Round::Result result) {
      self->voted(std::move(result), round, attempt_lease);
    });
  }

  void voted(Round::Result result, const std::shared_ptr<Round>& round, std::optional<milliseconds> attempt_lease) {
    auto self = shared_from_this();
    if (result.outcome == verdict::acquired) {
      if (lease_ && attempt_lease != lease_) return apply_lease(result.taken, result.owed, round);
      round->kept(core_->keep(owner_, result.taken, result.owed, lease_));
      return finish(std::nullopt, true);
    }
    round->fail(result.taken, result.owed,
                [self, votes = std::move(result.votes), outcome = result.outcome, elapsed = result.elapsed] {
                  self->after_failed_round(votes, outcome, elapsed);
                });
  }

  void after_failed_round(const std::vector<MemberVote>& votes, verdict outcome, milliseconds elapsed) {
    if (finished_by_cancel()) return;
    if (outcome != verdict::unreachable && may_retry()) return pause();
    finish(core_->round_failure(votes, outcome, elapsed), false);
  }

  void pause() {
    auto delay = std::min(pauses_.delay(attempts_ - 1), remaining());
    auto self = shared_from_this();
    schedule_on(
        core_->member(0)->client(), delay, [self] { self->attempt(); },
        [self] {
          self->finish(Error(errc::shut_down, self->core_->message("the client of the first member shut down")), false);
        });
  }

  // All members are held with the attempt's longer lease: give them the
  // caller's, from now on, so that they expire together.
  void apply_lease(const std::vector<bool>& taken, const std::vector<bool>& owed, const std::shared_ptr<Round>& round) {
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < taken.size(); ++i) {
      if (taken[i]) which.push_back(i);
    }
    auto self = shared_from_this();
    auto gather = std::make_shared<Gather<MemberAnswer>>(
        which.size(), nullptr, [self, taken, owed, round](Gather<MemberAnswer>::slots slots) {
          auto answers = present<MemberAnswer>(slots);
          auto error = std::find_if(answers.begin(), answers.end(), [](auto& a) { return bool(a.error); });
          auto gone = std::find_if(answers.begin(), answers.end(), [](auto& a) { return !a.error && !a.value; });
          if (error == answers.end() && gone == answers.end()) {
            round->kept(self->core_->keep(self->owner_, taken, owed, self->lease_));
            return self->finish(std::nullopt, true);
          }
          std::optional<Error> failure;
          if (error != answers.end()) {
            failure = Error(error->error,
                            self->core_->message(fmt::format("setting the lease of {} failed: {}",
                                                             self->core_->describe(error->member), error->cause)));
          }
          round->fail(taken, owed, [self, failure] {
            // A member lost between its acquire and its new lease: try again.
            if (self->finished_by_cancel()) return;
            if (!failure && self->may_retry()) return self->pause();
            self->finish(failure, false);
          });
        });
    auto owner = owner_;
    auto lease = *lease_;
    for (std::size_t k = 0; k < which.size(); ++k) {
      auto i = which[k];
      auto member = core_->member(i);
      run_on(
          member,
          [gather, k, i, member, owner, lease] {
            member->set_lease(owner, lease, [gather, k, i, member](std::error_code error, bool held) {
              gather->report(k, MemberAnswer{i, error, held, error ? member_cause(*member, error, "") : ""});
            });
          },
          [gather, k, i] {
            gather->report(k, MemberAnswer{i, make_error_code(errc::shut_down), false, "client shut down"});
          });
    }
  }

  void finish(std::optional<Error> error, bool acquired) {
    if (finished_) return;
    finished_ = true;
    if (!acquired && core_->members_wait()) give_up_places();
    auto done = std::move(done_);
    done(std::move(error), acquired);
  }

  // The members kept their fair-queue places across the attempts (see
  // Round::ask); the call is over without the lock, so they leave the queues.
  // Every round has ended by now (a failed round waits for its members).
  void give_up_places() {
    for (std::size_t i = 0; i < core_->size(); ++i) {
      auto member = core_->member(i);
      run_on(
          member, [member, owner = owner_] { member->give_up(owner); }, [] {});
    }
  }

  std::shared_ptr<CompositeCore> core_;
  thread_id owner_;
  std::optional<milliseconds> lease_;
  done_fn done_;
  cancel_token cancel_;
  std::optional<clock::time_point> deadline_;
  Backoff member_waits_;
  Backoff pauses_;
  int attempts_ = 0;
  bool finished_ = false;
};

void CompositeCore::try_acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                                acquire_done done, cancel_token cancel) {
  if (auto problem = bad_input(owner, wait, lease)) {
    return deliver_early([done = std::move(done), error = *problem] { done(error, false); });
  }
  std::make_shared<CompositeAcquire>(shared_from_this(), owner, wait, lease, std::move(done), std::move(cancel))
      ->start();
}

std::future<bool> CompositeCore::try_acquire(thread_id owner, std::optional<milliseconds> wait,
                                             std::optional<milliseconds> lease) {
  auto promise = std::make_shared<std::promise<bool>>();
  auto future = promise->get_future();
  try_acquire(owner, wait, lease, [promise](std::optional<Error> error, bool acquired) {
    if (error) return fail(promise, *error);
    promise->set_value(acquired);
  });
  return future;
}

std::future<void> CompositeCore::acquire(thread_id owner, std::optional<milliseconds> lease, cancel_token cancel) {
  auto promise = std::make_shared<std::promise<void>>();
  auto future = promise->get_future();
  try_acquire(
      owner, std::nullopt, lease,
      [promise](std::optional<Error> error, bool /*acquired*/) {
        // A wait without end finishes held or with an error.
        if (error) return fail(promise, *error);
        promise->set_value();
      },
      std::move(cancel));
  return future;
}

}  // namespace warden::detail
