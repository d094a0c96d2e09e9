// How many settles of lost attempts a Client has at the server at once. A
// pure machine (see docs/pure-machines.md); SettleQueue (lock/settle_queue.*)
// drives it.
//
// Why: a settle is background work (its caller has its answer, or waits for
// nothing else), and after a server stall a whole window of attempts may be
// lost at once. Sent as they come, their settles would take the server's
// capacity from live work; with at most `limit` in flight they take at most
// that many of the connection's slots (ConnectionOptions::max_in_flight), whatever
// queues behind them, while each still goes in its turn.
#pragma once

#include <cstddef>
#include <variant>

#include "io/action_list.hpp"

namespace warden::detail {

class SettlePacer {
 public:
  // At most `limit` settles in flight (at least one).
  explicit SettlePacer(std::size_t limit) : limit_(limit == 0 ? 1 : limit) {}

  // ---- events ----
  struct wanted {};    // a settle is ready to be sent; it waits behind any before it
  struct answered {};  // a settle sent earlier has its answer (any answer)
  using event = std::variant<wanted, answered>;

  // ---- actions ----
  struct send_oldest {};  // send the settle that has waited longest
  using action = std::variant<send_oldest>;
  using actions = action_list<action, 1>;

  actions on(const event& e);

  std::size_t in_flight() const { return in_flight_; }
  std::size_t waiting() const { return waiting_; }
  std::size_t limit() const { return limit_; }

 private:
  actions handle(const wanted& e);
  actions handle(const answered& e);

  std::size_t limit_;
  std::size_t in_flight_ = 0;
  std::size_t waiting_ = 0;
};

}  // namespace warden::detail
