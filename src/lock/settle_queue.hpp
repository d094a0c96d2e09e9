// The settles of one Client's lost attempts, sent in order with at most
// SettlePacer's limit in flight (the I/O of lock/settle_pacer.*). Loop thread
// only.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>

#include "lock/settle_pacer.hpp"

namespace warden::detail {

class SettleQueue {
 public:
  explicit SettleQueue(std::size_t limit) : pacer_(limit) {}

  // `send` sends one settle, now or once its turn comes; whoever sent it
  // calls answered() exactly once when its answer (any answer) came.
  void submit(std::function<void()> send);
  void answered();

  const SettlePacer& pacer() const { return pacer_; }

 private:
  void perform(const SettlePacer::actions& todo);

  SettlePacer pacer_;
  std::deque<std::function<void()>> waiting_;
  std::size_t due_ = 0;   // sends the pacer asked for, not yet made
  bool sending_ = false;  // inside perform(): a send answered at once only counts
};

}  // namespace warden::detail
