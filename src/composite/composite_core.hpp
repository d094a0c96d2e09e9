// What MultiLock and RedLock share: members that may live on different
// Clients, the per-owner book of re-entrant holds, lost-member listeners and
// the acquire, release and query fan-outs. The two kinds differ only in the
// hooks of the "policy" section (composite/multi_core, composite/red_core).
// The definitions are split by concern: composite_core.cpp (members, the
// book, listeners, queries), composite_acquire.cpp (the loop across rounds),
// round.* (one round), composite_release.cpp (unlock).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <warden/cancel.hpp>
#include <warden/config.hpp>
#include <warden/error.hpp>
#include <warden/lock_lost.hpp>

#include "composite/member_outcome.hpp"
#include "composite/quorum.hpp"
#include "lock/lock_core.hpp"
#include "lock/lost_listeners.hpp"

namespace warden::detail {

class CompositeCore : public std::enable_shared_from_this<CompositeCore> {
 public:
  using milliseconds = std::chrono::milliseconds;

  // `kind` names the composite in messages ("multi-lock", "red lock").
  // Members must not be null (the policies' factories check).
  CompositeCore(std::vector<std::shared_ptr<LockCore>> members, std::string kind);
  virtual ~CompositeCore();
  CompositeCore(const CompositeCore&) = delete;
  CompositeCore& operator=(const CompositeCore&) = delete;

  std::size_t size() const { return members_.size(); }
  const std::shared_ptr<LockCore>& member(std::size_t i) const { return members_[i]; }
  // "'NAME' on HOST:PORT"
  const std::string& describe(std::size_t i) const { return descriptions_[i]; }
  // "warden: KIND {'a' on s1, 'b' on s2}: WHAT"
  std::string message(std::string_view what) const;

  // ---- the public API, from any thread; none of these block ----

  // `wait` nullopt: for ever; `lease` nullopt: watchdog mode. Bad input fails
  // with errc::invalid_argument before anything is sent. The callback forms
  // call back once, on a member's I/O thread (the calling thread when that
  // client is shut down).
  using acquire_done = std::function<void(std::optional<Error>, bool value)>;
  using release_done = std::function<void(std::optional<Error>)>;
  // `cancel`: cancelling it ends the wait with errc::cancelled (members' waits
  // included; members taken in an unfinished round are released).
  void try_acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease,
                   acquire_done done, cancel_token cancel = {});
  std::future<bool> try_acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease);
  std::future<void> acquire(thread_id owner, std::optional<milliseconds> lease, cancel_token cancel = {});
  void release(thread_id owner, release_done done);
  std::future<void> release(thread_id owner);
  void is_locked(acquire_done done);
  std::future<bool> is_locked();
  // no_hold_until (lock/validity.hpp) when `owner` holds nothing or lost it.
  clock::time_point valid_until(thread_id owner) const;
  // The users' lost-lock listeners (see LostListeners).
  std::uint64_t add_lost_listener(std::function<void(const LockLost&)> listener);
  void remove_lost_listener(std::uint64_t token);

  // Throws errc::would_deadlock when called on any member's I/O thread.
  void check_blocking(std::string_view call) const;
  // Logs through the first member's Client.
  void log(log_level level, const std::string& message) const;

  // The lease that validity is computed from: the caller's, or the shortest
  // watchdog timeout among the members' Clients.
  milliseconds effective_lease(std::optional<milliseconds> lease) const;
  // The lease member `i` lives by: the caller's, or its Client's watchdog timeout.
  milliseconds member_lease(std::size_t i, std::optional<milliseconds> lease) const;
  milliseconds longest_command_timeout() const { return longest_command_timeout_; }

  // ---- policy: what differs between MultiLock and RedLock ----

  // Whether members wait (on their own pub/sub) for the attempt's share of
  // the wait time (MultiLock), or are tried once per round (RedLock).
  virtual bool members_wait() const = 0;
  // How long member `i` may take to answer one attempt before it counts as a
  // "timed out" failure. `member_wait`: what the member itself waits.
  virtual milliseconds member_budget(std::size_t i, milliseconds member_wait,
                                     std::optional<milliseconds> lease) const = 0;
  // The lease members are taken with during an attempt; the caller's lease is
  // applied with set_lease once the attempt succeeds when they differ.
  virtual std::optional<milliseconds> attempt_lease(std::optional<milliseconds> lease,
                                                    milliseconds member_wait) const = 0;
  virtual verdict judge(const std::vector<vote>& votes, milliseconds lease, milliseconds elapsed) const = 0;
  // The error a call ends with after a round that did not acquire (verdict
  // unreachable, expired or contended) once no retry is left; nullopt means
  // a plain "not acquired" (false).
  virtual std::optional<Error> round_failure(const std::vector<MemberVote>& votes, verdict outcome,
                                             milliseconds elapsed) const = 0;
  // The error an unlock ends with, given the answers of the members released.
  virtual std::optional<Error> release_failure(const std::vector<MemberAnswer>& answers, bool was_lost) const = 0;
  // is_locked() from the members' answers (an error is thrown).
  virtual bool locked(const std::vector<MemberAnswer>& answers) const = 0;

 protected:
  // The holds of one owner through this composite.
  struct Hold {
    struct Level {
      std::uint64_t id = 0;
      std::vector<bool> taken;  // which members this level took (and still holds:
                                // RedLock clears a member lost on the server)
      std::vector<bool> owed;   // members whose acquire had not answered when the
                                // round was settled (RedLock settles at a majority)
    };
    std::uint64_t generation = 0;          // tells this hold from a later one of the same owner
    std::vector<Level> levels;             // one per re-entrant acquire, latest last
    std::vector<std::uint64_t> listeners;  // lost-listener token per member
    std::optional<milliseconds> lease;     // of the first level; nullopt: watchdog mode
    bool lost = false;                     // the lost callback fired for this hold
    std::vector<bool> retaking;            // RedLock: a re-take of the member is under way
    // RedLock: what the nodes confirmed, fed lazily from their clients' books of holds
    // whenever the hold is judged (a query included, hence mutable).
    mutable QuorumValidity validity;
    std::uint64_t check = 0;  // RedLock: tells the current lapse check from stale ones
    bool member_held(std::size_t i) const;
  };

  // A member's hold by `owner` was found lost on its server. Policy.
  virtual void member_lost(thread_id owner, std::uint64_t generation, std::size_t member, const LockLost& event) = 0;
  // Whether a hold with these levels counts as held (not lost). Policy.
  virtual bool holds_enough(const Hold& hold) const = 0;
  // A round added a level to `hold` (`fresh`: it is the hold's first). By
  // default the hold is lost unless holds_enough. Called under mutex_.
  virtual void kept(thread_id owner, Hold& hold, bool fresh);
  // Before an unlock takes a level off a hold not known to be lost: the loss
  // event, should the hold turn out lost already (the unlock reports it and
  // the listeners hear of it). Called under mutex_.
  virtual std::optional<LockLost> lapsed(const Hold&, thread_id) const { return std::nullopt; }
  // valid_until of a hold. Policy. Called under mutex_.
  virtual clock::time_point hold_valid_until(const Hold& hold, thread_id owner) const = 0;

  // Logs the loss and tells the users' listeners (outside mutex_). Never throws.
  void fire_lost(const LockLost& event) const;
  // A hold found lost lets go of every member it still has, so that nothing
  // is renewed for it any more: takes them off its levels (under mutex_) and
  // returns how many holds to release on each member.
  static std::vector<int> drop_members(Hold& hold);
  // Releases them (outside mutex_); failures are logged.
  void release_dropped(thread_id owner, const std::vector<int>& counts) const;
  // "'a' on s1: cause; 'b' on s2: cause" for the given per-member causes.
  std::string per_member(const std::vector<std::string>& causes) const;

  mutable std::mutex mutex_;
  std::map<thread_id, Hold> holds_;

 private:
  friend class CompositeAcquire;
  friend class Round;

  std::optional<Error> bad_input(thread_id owner, std::optional<milliseconds> wait,
                                 std::optional<milliseconds> lease) const;

  // A round succeeded: record the level, watch the members on a new hold.
  // Returns the level's id.
  std::uint64_t keep(thread_id owner, const std::vector<bool>& taken, const std::vector<bool>& owed,
                     std::optional<milliseconds> lease);
  // Member `member` answered after the round of `level` was settled as
  // acquired (or stopped being waited for: its budget ran out). A hold is
  // added to the level while that still exists, else released; an unlock
  // waiting for the level's owed answers continues once none is owed.
  void late_answer(thread_id owner, std::uint64_t level, std::size_t member, bool acquired);
  // Releases the members of a level that left the book.
  void release_members(thread_id owner, const std::vector<bool>& taken, bool was_lost, const release_done& done);
  // Runs `task` on the first member's I/O thread (here, after its shutdown).
  void deliver_early(std::function<void()> task) const;

  // Levels an unlock took off the book while some of their answers were
  // still owed; released once the last owed answer arrives.
  struct Closing {
    thread_id owner = 0;
    Hold::Level level;
    std::function<void(std::vector<bool> taken)> release;
  };
  std::map<std::uint64_t, Closing> closing_;  // by level id, guarded by mutex_
  void add_listeners(thread_id owner, Hold& hold);
  void remove_listeners(const std::vector<std::uint64_t>& tokens) const;

  std::vector<std::shared_ptr<LockCore>> members_;
  std::vector<std::string> descriptions_;
  std::string kind_;
  std::string name_;  // "{'a' on s1, ...}"
  milliseconds longest_command_timeout_{0};
  LostListeners lost_listeners_;
  std::uint64_t next_generation_ = 1;  // guarded by mutex_
  std::uint64_t next_level_ = 1;       // guarded by mutex_
};

// unlock() and unlock_checked() of the public classes: releases the calling
// thread's latest hold and waits; never throws. A failure is logged and
// returned. On a member's I/O thread (where waiting would deadlock)
// `wait_on_loop_thread_fails` returns errc::would_deadlock without releasing;
// otherwise the release is started and its failure left to the logger.
std::error_code unlock_blocking(CompositeCore& core, bool wait_on_loop_thread_fails) noexcept;

// The cause phrase of a member error: the error's own text, plus the
// member's detail when it adds something (a server error's reply).
std::string member_cause(const LockCore& member, std::error_code error, const std::string& message);

}  // namespace warden::detail
