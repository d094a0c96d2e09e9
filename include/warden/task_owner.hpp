// warden — distributed locks on Redis.
// task_owner: the owner of holds taken by a task (a coroutine, a strand, a
// session) rather than by a thread.
#pragma once

#include <warden/thread_id.hpp>

namespace warden {

/// \brief The owner of the holds a task takes: a small value wrapping an owner id.
///
/// A hold belongs to the owner it was taken for, not to the thread that
/// happens to run the code. A coroutine that resumes on another thread keeps
/// its holds (and re-enters them) as long as it passes the same task_owner;
/// another task, even one running on the same thread, has another owner and
/// cannot release them (errc::not_owner).
///
/// A default-constructed task_owner is fresh: its id comes from
/// new_owner_id(), so it differs from every thread's current_thread_id() and
/// from every other owner of the process. Make one per coroutine (a local at
/// its top) or per strand or session, and copy it to whatever acts for that
/// task. It converts to thread_id, so every call taking a `thread_id owner`
/// (lock_async, unlock_async, is_held, hold_count, valid_until, ...) takes it.
///
/// Holds are keyed by "<client id>:<owner id>" in Redis, as for threads: an
/// owner is only meaningful within one process.
class task_owner {
 public:
  /// A fresh owner (see the class).
  task_owner() noexcept : id_(new_owner_id()) {}
  /// The owner whose id is `id`: to act for an owner known by its id (a
  /// thread's current_thread_id(), or an id kept from another task_owner).
  /// \param id the owner id.
  explicit task_owner(thread_id id) noexcept : id_(id) {}

  /// \return the owner id written in the lock's owner field.
  thread_id id() const noexcept { return id_; }
  /// \return the owner id, so a task_owner goes wherever a thread_id owner does.
  operator thread_id() const noexcept { return id_; }  // NOLINT(google-explicit-constructor)

  /// \return true when both are the same owner.
  friend bool operator==(const task_owner& a, const task_owner& b) noexcept { return a.id_ == b.id_; }
  /// \return true when they are different owners.
  friend bool operator!=(const task_owner& a, const task_owner& b) noexcept { return a.id_ != b.id_; }

 private:
  thread_id id_;
};

}  // namespace warden
