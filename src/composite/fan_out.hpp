// Composite locks drive member locks that may belong to different Clients,
// so their answers arrive on different I/O threads. Gather collects them
// under a mutex; run_on and schedule_on put work on a member's I/O thread
// without ever blocking one.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "lock/lock_core.hpp"
#include "lock/lock_host.hpp"

namespace warden::detail {

// One outcome per member, reported from any thread. The first report for a
// member counts; `done` runs exactly once, outside the mutex, on the thread
// whose report settled it: when every member has reported, or earlier when
// `settled` says the reports so far decide the result.
template <class Outcome>
class Gather {
 public:
  using slots = std::vector<std::optional<Outcome>>;

  Gather(std::size_t members, std::function<bool(const slots&)> settled, std::function<void(slots)> done)
      : slots_(members), settled_(std::move(settled)), done_(std::move(done)) {
    if (members == 0) finish_empty();
  }

  // False when the member had reported already or the result was settled
  // without it: the caller deals with the late outcome (e.g. releases a hold
  // the round no longer wants).
  bool report(std::size_t member, Outcome outcome) {
    std::function<void(slots)> done;
    slots result;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      if (finished_ || slots_[member]) return false;
      slots_[member] = std::move(outcome);
      ++reported_;
      if (reported_ < slots_.size() && !(settled_ && settled_(slots_))) return true;
      finished_ = true;
      done = std::move(done_);
      result = slots_;
    }
    done(std::move(result));
    return true;
  }

 private:
  void finish_empty() {
    finished_ = true;
    auto done = std::move(done_);
    done({});
  }

  std::mutex mutex_;
  slots slots_;
  std::size_t reported_ = 0;
  bool finished_ = false;
  std::function<bool(const slots&)> settled_;
  std::function<void(slots)> done_;
};

// The outcomes that were reported, in member order (the ones missing left out).
template <class Outcome>
std::vector<Outcome> present(const typename Gather<Outcome>::slots& slots) {
  std::vector<Outcome> result;
  for (auto& slot : slots) {
    if (slot) result.push_back(*slot);
  }
  return result;
}

// Runs `task` on `member`'s I/O thread. When its client is shut down the task
// is dropped and `shut_down` runs on the calling thread instead.
inline void run_on(const std::shared_ptr<LockCore>& member, std::function<void()> task,
                   const std::function<void()>& shut_down) {
  if (!member->client().post(std::move(task))) shut_down();
}

// The same for a member's part in a new operation (an acquire round): also
// refused, with `shut_down` run instead, once the member's client is closing
// (Client::close), as a call on a plain lock of that client is.
inline void run_operation_on(const std::shared_ptr<LockCore>& member, std::function<void()> task,
                             const std::function<void()>& shut_down) {
  if (!member->client().post_operation(std::move(task))) shut_down();
}

// Runs `fn` on `client`'s I/O thread after `delay`; if the client shuts down
// first (or already has), runs `shut_down` instead. Exactly one of them runs.
void schedule_on(LockHost& client, std::chrono::milliseconds delay, std::function<void()> fn,
                 std::function<void()> shut_down);

// Releases a hold nobody wants any more (taken too late, or by a round that
// failed). Must run on the member's I/O thread; a failure is only logged:
// the hold then expires with its lease.
void release_unwanted(const std::shared_ptr<LockCore>& member, thread_id owner);

}  // namespace warden::detail
