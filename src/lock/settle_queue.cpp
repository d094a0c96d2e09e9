#include "lock/settle_queue.hpp"

#include <utility>

namespace warden::detail {

void SettleQueue::submit(std::function<void()> send) {
  waiting_.push_back(std::move(send));
  perform(pacer_.on(SettlePacer::wanted{}));
}

void SettleQueue::answered() { perform(pacer_.on(SettlePacer::answered{})); }

void SettleQueue::perform(const SettlePacer::actions& todo) {
  due_ += todo.size();
  // A send may be answered at once (a client shutting down), whose answer
  // asks for the next send: that is counted and made by this loop, not by a
  // nested one, so a long queue never deepens the stack.
  if (sending_) return;
  sending_ = true;
  while (due_ > 0 && !waiting_.empty()) {
    --due_;
    auto send = std::move(waiting_.front());
    waiting_.pop_front();
    send();
  }
  due_ = 0;
  sending_ = false;
}

}  // namespace warden::detail
