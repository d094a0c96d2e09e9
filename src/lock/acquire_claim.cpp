#include "lock/acquire_claim.hpp"

namespace warden::detail {

void AcquireClaim::completed(bool held) {
  std::function<void()> release;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (abandoned_ && held) {
      release = std::move(release_);
    } else {
      held_ = held;
    }
  }
  if (release) release();
}

void AcquireClaim::abandon() {
  std::function<void()> release;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    abandoned_ = true;
    if (held_) release = std::move(release_);
    held_ = false;
  }
  if (release) release();
}

void abandon(const std::shared_ptr<AcquireClaim>& claim) noexcept {
  try {
    claim->abandon();
  } catch (...) {
    // The release could not even be started (no memory): the hold stays with
    // the watchdog, as it would have without this guard.
  }
}

}  // namespace warden::detail
