#include "lock/acquire_fsm.hpp"

#include <algorithm>

namespace warden::detail {

AcquireFsm::AcquireFsm(clock::time_point start, std::optional<std::chrono::milliseconds> wait, int max_unknown,
                       std::chrono::milliseconds unknown_ttl_wait, std::optional<SpinDelays> polling)
    : max_unknown_(max_unknown), unknown_ttl_wait_(unknown_ttl_wait), polling_(polling ? std::make_unique<SpinDelays>(std::move(*polling)) : nullptr) {
  // A wait too long to represent as a time point (milliseconds::max() and the
  // like) means "for ever", not an overflow into the past.
  if (wait && *wait < std::chrono::duration_cast<std::chrono::milliseconds>(clock::time_point::max() - start)) {
    deadline_ = start + *wait;
  }
}

bool AcquireFsm::join_before_try(clock::time_point now, bool confirmed) {
  // A poller never subscribes; a joined waiter is joined already; a last try
  // (at or past the deadline) is never waited after.
  if (!confirmed || polling_ || joined_) return false;
  if (deadline_ && now >= *deadline_) return false;
  joined_ = true;
  return true;
}

AcquireFsm::decision AcquireFsm::held(clock::time_point now, std::chrono::milliseconds ttl) {
  if (deadline_ && now >= *deadline_) return {step::timed_out};
  // PTTL 0 is a key in its last millisecond (a retry timed to the lease tends
  // to land exactly then): wait that millisecond, not as if there were no TTL.
  // Only a negative PTTL means the key has no expiry.
  auto sleep = ttl.count() >= 0 ? std::max(ttl, std::chrono::milliseconds{1}) : unknown_ttl_wait_;
  // A poller is told of no release: it comes back after its back-off delay,
  // or when the lease runs out if that is sooner.
  if (polling_) sleep = std::min(sleep, polling_->next());
  if (deadline_) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now);
    sleep = std::min(sleep, left);
  }
  if (polling_) return {step::pause, sleep};
  if (!joined_) {
    joined_ = true;
    return {step::subscribe, sleep};
  }
  return {step::sleep, sleep};
}

AcquireFsm::decision AcquireFsm::unknown() {
  if (unknown_ >= max_unknown_) return {step::failed};
  ++unknown_;
  return {step::read_back};
}

AcquireFsm::decision AcquireFsm::read_back(clock::time_point now, bool applied) const {
  if (applied) return {step::acquired};
  if (deadline_ && now >= *deadline_) return {step::timed_out};
  return {step::try_acquire};
}

AcquireFsm::decision AcquireFsm::replica_short(clock::time_point now, bool ran, std::chrono::milliseconds delay) {
  if (ran) ++unacknowledged_;
  if (deadline_) {
    if (now >= *deadline_) return {step::failed};
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - now);
    return {step::back_off, std::min(delay, left)};
  }
  if (unacknowledged_ > max_unknown_) return {step::failed};
  return {step::back_off, delay};
}

}  // namespace warden::detail
