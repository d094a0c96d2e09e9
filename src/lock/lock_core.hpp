// The shared state and the operations of one named lock of one client. All
// operations run on the I/O thread and report through callbacks there.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <warden/cancel.hpp>
#include <warden/lock_lost.hpp>
#include <warden/observer.hpp>

#include "io/reply.hpp"
#include "io/shared_text.hpp"
#include "lock/lost_listeners.hpp"
#include "lock/spin_delays.hpp"

namespace warden::detail {

class LockHost;
struct Script;

// What the queries of a lock read in one step (lua/lock_inspect.lua).
struct Inspection {
  long long pttl = -2;  // -2: no lock, -1: no expiry, else ms left
  long long count = 0;  // hold count of the asked-for owner field
  std::string mode;     // a read-write lock's "read"/"write", else empty
};

// What an acquire script's reply says (LockCore::read_acquire).
struct AcquireAnswer {
  bool acquired = false;
  std::chrono::milliseconds ttl{0};   // not acquired: the holder's PTTL (negative: no expiry)
  std::optional<std::int64_t> token;  // FencedLock: the token of the hold taken
  std::string problem;                // not empty: not a reply this kind's script gives
};

// What a settle script's reply says (LockCore::read_settle).
struct SettleAnswer {
  bool applied = false;               // the lost attempt had taken effect
  std::optional<std::int64_t> token;  // FencedLock, kept: the hold's token
};

// How one acquire goes, beyond its wait and lease.
struct AcquireOptions {
  // Cancelling it ends the wait with errc::cancelled.
  cancel_token cancel;
  // A wait that ends without the lock stays in the fair queue instead of
  // leaving it: a MultiLock keeps its members' places between its attempts
  // and gives them up (LockCore::give_up) when its whole call ends.
  bool keep_queue_place = false;
  // Told the fencing token of the hold taken (FencedLock), just before done.
  std::function<void(std::int64_t token)> on_token;
  // When the caller made the call (unset: when the acquire starts). A call
  // whose task waited on the I/O thread's queue (a burst of calls made at
  // once) has that wait counted against its first try's command_timeout, so
  // a try that could no longer be answered in time fails unsent, not late.
  std::optional<std::chrono::steady_clock::time_point> called;
};

// A script invocation: what a lock kind sends for one of its operations.
struct ScriptCall {
  const Script* script = nullptr;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

// The re-entrant Lock (or, built with reentrant = false, the non-re-entrant
// one). Other kinds (fair, fenced, spin, read, write) derive and override the
// hooks in the "kind" section; the operations above them are shared.
class LockCore : public std::enable_shared_from_this<LockCore> {
 public:
  using milliseconds = std::chrono::milliseconds;
  using acquire_done = std::function<void(std::error_code, bool acquired, const std::string& message)>;
  using release_done = std::function<void(std::error_code, const std::string& message)>;

  // `reentrant` false: a second acquire by the owner holding the lock fails
  // at once with errc::would_deadlock instead of nesting.
  LockCore(std::shared_ptr<LockHost> client, std::string name, bool reentrant = true);
  virtual ~LockCore();
  // Called once by ClientCore::lock_core, which registered this core under
  // `kind` (a string it keeps): the core leaves the registry when destroyed.
  void registered_as(std::string_view kind) { kind_ = kind; }

  // The name is kept once, inside the channel's name (a lock keeps nothing
  // else per name but the registry's view of it).
  std::string_view name() const { return channel_.view().substr(name_at_, name_size_); }
  // The name as a string of its own, for the public handles' name(): made at
  // the first call (any thread) and kept, so that locks whose name nobody
  // asks for do not carry a second copy.
  const std::string& name_string() const;
  // The name and the channel as a script's KEYS entries.
  std::string name_key() const { return std::string(name()); }
  std::string channel_key() const { return std::string(channel()); }
  LockHost& client() const { return *client_; }
  const std::shared_ptr<LockHost>& client_ptr() const { return client_; }

  // Waits up to `wait` (nullopt: for ever) for the lock on behalf of `owner`.
  // `lease` nullopt: watchdog mode.
  void acquire(thread_id owner, std::optional<milliseconds> wait, std::optional<milliseconds> lease, acquire_done done,
               AcquireOptions options = {});
  // Leaves the fair queue if `owner` waits in it (after acquires with
  // keep_queue_place); nothing for kinds without a queue. Fire and forget:
  // a place left behind is dropped once its deadline passes.
  void give_up(thread_id owner);
  void release(thread_id owner, release_done done);
  void force_release(std::function<void(std::error_code, bool, const std::string&)> done);
  // The lock's state as `owner` sees it, after checking that the key is a lock
  // of this kind (else errc::wrong_type). Nothing is written. Read in the
  // owner's lane: after the owner's acquire attempts and take-backs under way.
  using inspect_done = std::function<void(std::error_code, Inspection, const std::string&)>;
  void inspect(thread_id owner, inspect_done done);

  // Sets the lease of `owner`'s hold to a fixed `lease` (PEXPIRE) if it still
  // holds the lock; done(error, still_held). Composite locks use it to give
  // their members the caller's lease once all are taken.
  void set_lease(thread_id owner, milliseconds lease, std::function<void(std::error_code, bool)> done);

  // Listeners of the users and of composite locks watching their members
  // (see LostListeners for when removal takes effect).
  std::uint64_t add_lost_listener(std::function<void(const LockLost&)> listener);
  void remove_lost_listener(std::uint64_t token);
  // Logs the loss, then tells every listener. Never throws.
  void notify_lost(const LockLost& event) const;
  // The watchdog found `owner`'s hold gone, or could not renew it for a
  // whole lease (`why`): a lock tells its listeners (notify_lost). A kind
  // whose holds are not a lock's (a watchdog-kept permit) tells its own.
  virtual void hold_lost(thread_id owner, std::error_code cause, std::string_view why);

  // ---- kind: what differs between lock kinds ----

  // The acquire script. Its reply: nil = acquired, integer = PTTL to wait, an
  // error reply starting with "WARDEN_WOULD_DEADLOCK" = can never succeed
  // (read by read_acquire).
  virtual ScriptCall acquire_call(thread_id owner, milliseconds lease) const;
  // The acquire script's (non-error) reply.
  virtual AcquireAnswer read_acquire(const Reply& reply) const;
  // The acquire script for an attempt after which the caller will not wait
  // (try_lock(), or the last attempt of a bounded wait). Same reply as
  // acquire_call. A fair lock uses it to try without joining its queue.
  virtual ScriptCall try_acquire_call(thread_id owner, milliseconds lease) const { return acquire_call(owner, lease); }
  // The channel `owner` waits on for wake-ups.
  virtual std::string wait_channel(thread_id owner) const;
  // Sent when a waiter gives up (time-out, error) after at least one
  // acquire_call (not only try_acquire_call); none by default.
  virtual std::optional<ScriptCall> give_up_call(thread_id owner) const;
  // Release one hold; reply nil (not owner), 0 (still held) or 1 (released).
  virtual ScriptCall release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                                  milliseconds latch_ttl) const;
  virtual ScriptCall force_release_call() const;
  // Settle an acquire attempt whose reply was lost and that would have made
  // the count `expected`. The caller appends the attempt's cancel mark to the
  // keys and two arguments: "1" keep / "0" take back, and the mark's TTL (ms)
  // (the argument order is lua/README.md's).
  // Reply: 1 the attempt had taken effect, 0 it had not (and now cannot).
  virtual ScriptCall resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const;
  // The settle script's (non-error) reply; nullopt when it is not one the
  // script gives. `keep`: it was asked to keep the hold.
  virtual std::optional<SettleAnswer> read_settle(const Reply& reply, bool keep) const;
  // A waiter that polls instead of subscribing (SpinLock): its back-off.
  // nullptr: waiters subscribe to wait_channel().
  virtual const PollBackoff* polling() const { return nullptr; }
  // The hash field holding `owner`'s count (read-back, hold_count, is_held).
  std::string owner_field(thread_id owner) const {
    std::string field;
    write_owner_field(owner, field);
    return field;
  }
  // The same, into `out` (replacing what it held): the watchdog reuses one
  // buffer for a whole batch.
  virtual void write_owner_field(thread_id owner, std::string& out) const;
  // What write_owner_field() depends on besides the owner: a tag shared by
  // every lock whose field is the same for the same owner (the client's
  // owner id, with a suffix for a write lock), or null when each lock has
  // its own (a permit's id). The watchdog writes the field once for a run
  // of holds with one owner and one tag.
  virtual const void* owner_field_family() const;
  // Batched renewal: one script for many holds; KEYS gets renew_key(), ARGV
  // gets the lease first and then the owner field per hold, or "" for the
  // same field as the hold before it. Reply: array of 1/0.
  virtual const Script& renew_script() const;
  std::string_view renew_key() const { return name(); }
  // renew_key()'s first and last characters, found without reading them
  // (name() reads the text's header): for a prefetch.
  const char* renew_key_front() const {
    const char* text = channel_.data();
    return text == nullptr ? nullptr : text + name_at_;
  }
  const char* renew_key_back() const {
    const char* front = renew_key_front();
    return front == nullptr || name_size_ == 0 ? front : front + name_size_ - 1;
  }
  virtual ScriptCall set_lease_call(thread_id owner, milliseconds lease) const;
  // What the observer's events call this kind.
  virtual lock_kind kind() const { return lock_kind::lock; }
  // The data layout inspect() checks the key against: "lock" or "rwlock".
  virtual const char* layout() const { return "lock"; }
  // is_locked() from an inspection. A read (write) lock is locked only while
  // the hash is in read (write) mode.
  virtual bool locked(const Inspection& state) const { return state.pttl != -2; }

  // The command its scripts publish unlock messages with ("publish", or
  // "spublish" for a cluster's shard channels): ARGV[3] of every script that
  // publishes (lua/README.md). Loop thread.
  const char* publish_command() const;

  // Why the node serving this lock cannot take a command now (the
  // connection's last failure), or {} when it is connected. Loop thread.
  std::error_code link_problem() const;

  // "warden: lock 'NAME' on SERVER: WHAT"
  std::string message(std::string_view what) const;

  bool reentrant() const { return reentrant_; }

  // The channel its unlock messages are published on (keys::lock_channel),
  // shared with its waiters and the subscriber.
  std::string_view channel() const { return channel_.view(); }
  const SharedText& channel_text() const { return channel_; }

  // ---- lanes (loop thread) ----
  // Scripts that change one owner's hold count on this lock (acquire attempts,
  // settling a lost one, releases) run one at a time, in the order they
  // entered: settling a lost attempt compares the count with what the attempt
  // would have made it, which only holds if nothing else of that owner ran in
  // between — on the server, not just on the client (a resend after NOSCRIPT
  // or a refusal goes to the back of the connection's queue).
  //
  // `admitted` runs once the lane is this caller's (at once when free); it must
  // end with leave_lane(owner). If the lane is still busy at `give_up_at`,
  // `gave_up` runs instead and the caller never enters.
  void enter_lane(thread_id owner, std::optional<std::chrono::steady_clock::time_point> give_up_at,
                  std::function<void()> admitted, std::function<void()> gave_up);
  void leave_lane(thread_id owner);

 private:
  void send_release(thread_id owner, std::chrono::steady_clock::time_point deadline, release_done done);
  // `in_lane`: admitted to the owner's lane, which it leaves once answered.
  void send_inspect(thread_id owner, bool in_lane, inspect_done done);

  std::shared_ptr<LockHost> client_;
  SharedText channel_;     // redisson_lock__channel:{NAME}, the name inside
  std::uint32_t name_at_;  // where the name lies in channel_
  std::uint32_t name_size_;
  bool reentrant_;
  std::string_view kind_;                                         // empty: not registered
  mutable std::atomic<const std::string*> name_string_{nullptr};  // see name_string()
  LostListeners lost_listeners_;

  struct LaneWaiter {
    std::uint64_t id = 0;
    std::uint64_t timer = 0;
    std::function<void()> admitted;
    std::function<void()> gave_up;
  };
  struct Lane {  // there while the owner's command is under way
    thread_id owner = 0;
    std::list<LaneWaiter> waiting;  // empty: no allocation
  };
  // The owners with a command under way. Few at a time, usually none: a
  // vector, emptied of its storage when the last lane closes, so an idle
  // lock keeps nothing for them.
  std::vector<Lane> lanes_;
  Lane* find_lane(thread_id owner);
  std::uint64_t next_lane_waiter_ = 1;

 protected:
  // The unlock message the scripts publish ("0"); "" for a kind whose
  // waiters poll (nothing is published).
  virtual const char* unlock_message() const { return "0"; }
};

}  // namespace warden::detail
