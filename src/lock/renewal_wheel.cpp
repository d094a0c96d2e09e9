#include "lock/renewal_wheel.hpp"

#include <algorithm>

namespace warden::detail {

RenewalWheel::RenewalWheel(clock::duration width, clock::duration span, clock::time_point origin)
    : width_(std::max(width, clock::duration{1})),
      origin_(origin),
      buckets_(static_cast<std::size_t>(std::max<clock::duration::rep>(span / width_, 1) + 1)),
      taken_(-1) {
  for (auto& head : buckets_) head.prev = head.next = &head;
  ready_.prev = ready_.next = &ready_;
}

void RenewalWheel::push_back(Link& head, Link& link) {
  link.prev = head.prev;
  link.next = &head;
  head.prev->next = &link;
  head.prev = &link;
}

void RenewalWheel::unlink(Link& link) {
  link.prev->next = link.next;
  link.next->prev = link.prev;
  link.prev = link.next = nullptr;
}

void RenewalWheel::add(Link& link, clock::time_point due) {
  if (link.linked()) {
    unlink(link);
    --size_;
  }
  link.due = due;
  // The bucket of `due`, or the line of what is already due, or the last
  // bucket the ring can tell apart from a taken one (a due time beyond it
  // is served early, never late).
  slot_t slot = due < origin_ ? taken_ : slot_of(due);
  if (slot <= taken_) {
    push_back(ready_, link);
  } else {
    push_back(bucket(std::min(slot, taken_ + static_cast<slot_t>(buckets_.size()))), link);
  }
  ++size_;
}

void RenewalWheel::catch_up(clock::time_point now) {
  if (size_ == 0 && now >= origin_) taken_ = std::max(taken_, slot_of(now) - 1);
}

void RenewalWheel::remove(Link& link) {
  if (!link.linked()) return;
  unlink(link);
  --size_;
}

std::optional<clock::time_point> RenewalWheel::next_due() const {
  if (size_ == 0) return std::nullopt;
  if (!empty(ready_)) return start_of(taken_);
  const auto count = static_cast<slot_t>(buckets_.size());
  for (slot_t slot = taken_ + 1; slot <= taken_ + count; ++slot) {
    if (!empty(buckets_[static_cast<std::size_t>(slot % count)])) return start_of(slot);
  }
  return std::nullopt;  // unreachable while size_ counts right
}

void RenewalWheel::clear() {
  auto drop = [](Link& head) {
    while (!empty(head)) unlink(*head.next);
  };
  drop(ready_);
  for (auto& head : buckets_) drop(head);
  size_ = 0;
}

}  // namespace warden::detail
