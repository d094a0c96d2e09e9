// The watchdog's side of a PermitExpirableSemaphore: the permits of one
// semaphore that one client keeps alive, acquired without a lease. The
// HoldBook files holds per lock core and owner; a permit is known by its
// semaphore and its id. This adapter is a lock core for the book and the
// watchdog, registered once per client and semaphore (kind "permit_keeper",
// under the semaphore's permits key {NAME}:timeout, which its renewals name),
// and each permit it keeps is one "owner" of it, a number standing for the
// permit id. So permits are renewed by the same wheel, in the same batches
// per node and script, every lease/3, as lock holds are; lua/pes_renew.lua
// pushes each expiry to now + lease by the server's clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "io/timer_queue.hpp"
#include "lock/lock_core.hpp"
#include "lock/lost_listeners.hpp"

namespace warden::detail {

class PermitKeeper final : public LockCore {
 public:
  // `timeouts`: the semaphore's permits key, {NAME}:timeout; `semaphore`: NAME.
  PermitKeeper(std::shared_ptr<LockHost> client, std::string timeouts, std::string semaphore);

  const std::string& semaphore() const { return semaphore_; }

  // ---- loop thread ----

  // The permit `id`, taken by a try sent at `sent` with the watchdog's lease,
  // is renewed from now on.
  void keep(const std::string& id, clock::time_point sent);
  // A call that ends or sets the permit's lease (release, update_lease_time)
  // is about to be sent: renewal stops now, so that no renewal follows it on
  // the wire and stretches what it set. Nothing when `id` is not kept here.
  void stop(const std::string& id);
  // That call was answered (whatever it said): the permit leaves the book.
  void forget(const std::string& id);
  // Whether the watchdog keeps `id` (any thread).
  bool keeps(const std::string& id) const;
  // Until when the kept permit `id` is surely held (the book's valid_until),
  // no_hold_until when it is not kept here (any thread).
  clock::time_point valid_until(const std::string& id) const;

  // The permit-lost listeners of the semaphore in this client. Their events
  // carry the permit id in lock_name (PermitExpirableSemaphore makes a
  // PermitLost of it). Any thread.
  std::uint64_t add_permit_listener(LostListeners::listener listener) { return listeners_.add(std::move(listener)); }
  void remove_permit_listener(std::uint64_t token) { listeners_.remove(token); }

  // ---- LockCore: what the book and the watchdog ask of it ----

  // The permit's id: pes_renew's ARGV entry for it.
  void write_owner_field(thread_id owner, std::string& out) const override;
  const void* owner_field_family() const override { return nullptr; }  // each permit its own id
  const Script& renew_script() const override;
  // Client::close releases every hold in the book: a kept permit's release
  // answers as a lock's does (pes_release with 'lock_reply').
  ScriptCall release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                          milliseconds latch_ttl) const override;
  // Tells the permit-lost listeners, naming the permit.
  void hold_lost(thread_id owner, std::error_code cause, std::string_view why) override;

 private:
  std::optional<std::string> id_of(thread_id owner) const;
  std::optional<thread_id> number_of(const std::string& id) const;
  void notify(const LockLost& event) const;

  std::string semaphore_;
  std::string channel_;  // redisson_sc:{NAME}
  mutable std::mutex mutex_;
  std::unordered_map<std::string, thread_id> numbers_;  // permit id -> its number in the book
  std::unordered_map<thread_id, std::string> ids_;      // and back
  thread_id next_ = 1;
  LostListeners listeners_;
};

}  // namespace warden::detail
