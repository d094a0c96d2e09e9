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

}  // namespace warden::detail
