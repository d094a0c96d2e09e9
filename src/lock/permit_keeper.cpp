#include "lock/permit_keeper.hpp"

#include <fmt/format.h>

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "lock/semaphore_keys.hpp"
#include "lock/validity.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {

PermitKeeper::PermitKeeper(std::shared_ptr<LockHost> client, std::string timeouts, std::string semaphore)
    : LockCore(std::move(client), std::move(timeouts)),
      semaphore_(std::move(semaphore)),
      channel_(keys::semaphore_channel(semaphore_)) {}

void PermitKeeper::keep(const std::string& id, clock::time_point sent) {
  thread_id number = 0;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto [it, fresh] = numbers_.try_emplace(id, next_);
    if (fresh) ids_.emplace(next_++, id);
    number = it->second;
  }
  // The try set the expiry to (server) now + lease, no earlier than `sent`.
  client().holds().acquired(std::static_pointer_cast<LockCore>(shared_from_this()), number, std::nullopt, sent);
}

void PermitKeeper::stop(const std::string& id) {
  if (auto number = number_of(id)) client().holds().releasing(*this, *number);
}

void PermitKeeper::forget(const std::string& id) {
  std::optional<thread_id> number;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = numbers_.find(id);
    if (it == numbers_.end()) return;
    number = it->second;
    ids_.erase(it->second);
    numbers_.erase(it);
  }
  client().holds().forget(*this, *number);
}

bool PermitKeeper::keeps(const std::string& id) const {
  auto number = number_of(id);
  return number && client().holds().count(*this, *number) > 0;
}

clock::time_point PermitKeeper::valid_until(const std::string& id) const {
  auto number = number_of(id);
  return number ? client().holds().valid_until(*this, *number) : no_hold_until;
}

std::optional<std::string> PermitKeeper::id_of(thread_id owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = ids_.find(owner);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<thread_id> PermitKeeper::number_of(const std::string& id) const {
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = numbers_.find(id);
  if (it == numbers_.end()) return std::nullopt;
  return it->second;
}

void PermitKeeper::write_owner_field(thread_id owner, std::string& out) const {
  // A permit the book still renews is always mapped (forget() drops both
  // together); "-" is no permit id, so a stray one answers "gone".
  auto id = id_of(owner);
  out = id ? *id : std::string("-");
}

const Script& PermitKeeper::renew_script() const { return scripts::pes_renew; }

ScriptCall PermitKeeper::release_call(thread_id owner, milliseconds /*keep_lease*/, const std::string& /*request_id*/,
                                      milliseconds /*latch_ttl*/) const {
  auto id = id_of(owner);
  return {&scripts::pes_release,
          {semaphore_, channel_, std::string(name())},
          {"", "", publish_command(), "", id ? *id : std::string("-"), "lock_reply"}};
}

void PermitKeeper::hold_lost(thread_id owner, std::error_code cause, std::string_view why) {
  auto id = id_of(owner);
  if (!id) return;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    numbers_.erase(*id);
    ids_.erase(owner);
  }
  // The book remembers lost holds (a lock's owner may ask); a permit's
  // number is never used again, so its entry would only pile up.
  client().holds().forget(*this, owner);
  auto text = fmt::format("warden: permit-expirable semaphore '{}' on {}: permit {} lost: {}", semaphore_,
                          client().topology().describe(semaphore_), *id, why);
  notify(LockLost{*id, owner, cause, std::move(text)});
}

void PermitKeeper::notify(const LockLost& event) const {
  // As LockCore::notify_lost: listeners run on the I/O thread, never inside
  // a caller that is leading the loop for its own answer.
  auto self = std::static_pointer_cast<const PermitKeeper>(shared_from_this());
  if (client().loop().led_here() && client().post([self, event] { self->notify(event); })) return;
  client().log(log_level::warning, event.message);
  listeners_.notify(event, [self](log_level level, const std::string& text) { self->client().log(level, text); });
}

}  // namespace warden::detail
