// The answer of a pure machine: the few actions one event calls for, in the
// order the driver performs them. Held in place (a fixed capacity the
// machine picks), so that feeding an event allocates nothing: machines run
// on the hot path of every command and acquire. See docs/pure-machines.md.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <initializer_list>
#include <utility>

namespace warden::detail {

template <class Action, std::size_t Capacity>
class action_list {
 public:
  action_list() = default;
  action_list(std::initializer_list<Action> actions) {
    for (const auto& action : actions) push_back(action);
  }

  void push_back(Action action) {
    // A machine that needs more than its capacity is a bug in the machine,
    // found by its unit tests.
    assert(size_ < Capacity);
    items_[size_++] = std::move(action);
  }
  // Appends the actions of another answer (a machine composing its own steps).
  template <std::size_t Other>
  void append(const action_list<Action, Other>& more) {
    for (const auto& action : more) push_back(action);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Action& operator[](std::size_t i) const { return items_[i]; }
  const Action* begin() const { return items_.data(); }
  const Action* end() const { return items_.data() + size_; }

 private:
  std::array<Action, Capacity> items_{};
  std::size_t size_ = 0;
};

}  // namespace warden::detail
