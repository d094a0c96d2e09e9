// Who receives the hold an asynchronous acquire takes: the caller, once it
// collects the result, or nobody (the future was dropped), in which case the
// hold is released as soon as both facts are known.
#pragma once

#include <functional>
#include <memory>
#include <mutex>

namespace warden::detail {

class AcquireClaim {
 public:
  // `release` gives the hold back; it is called on whichever thread learns
  // last of the two (the acquire's completion or the abandonment), at most once.
  explicit AcquireClaim(std::function<void()> release) : release_(std::move(release)) {}

  // The acquire completed; `held`: it took a hold. Call before publishing the
  // result. Runs the release when the result was already abandoned.
  void completed(bool held);
  // Nobody will collect the result.
  void abandon();

 private:
  std::mutex mutex_;
  bool abandoned_ = false;
  bool held_ = false;
  std::function<void()> release_;
};

}  // namespace warden::detail
