// What a command routed by its key's slot does with a MOVED or ASK reply: go
// where it is sent, a bounded number of times. A pure machine (see
// docs/pure-machines.md): the router reads each reply into an event, feeds
// it with on() and performs the actions it answers.
#pragma once

#include <cstdint>
#include <variant>

#include "io/action_list.hpp"
#include "io/reply.hpp"
#include "topology/slot_map.hpp"

namespace warden::detail {

class Redirects {
 public:
  // At most `limit` redirections for one command; the next one gives up.
  explicit Redirects(int limit) : left_(limit) {}

  // ---- events ----
  // A reply that is no redirection: it is the command's.
  struct answered {};
  // A MOVED (ask false) or ASK reply: `slot` is served at `to`.
  struct redirected {
    bool ask = false;
    std::uint16_t slot = 0;
    NodeAddress to;
  };
  using event = std::variant<answered, redirected>;

  // The event a reply from `from` is. A redirection without a host means the
  // node that answered (it does not know how it is reached); one that cannot
  // be read is an error like any other, not a guess.
  static event read(const Reply& reply, const NodeAddress& from);

  // ---- actions ----
  struct deliver {};  // the reply is the command's
  // A MOVED: the slot lives at `to` now; patch the table at once.
  struct patch_table {
    std::uint16_t slot = 0;
    NodeAddress to;
  };
  // The slot table is out of date: read it again in the background.
  struct refresh_table {};
  // Send the command again, to `to`. `asking`: send ASKING first, on the
  // same connection (an ASK is for this one command while its slot
  // migrates; the table is left as it is).
  struct resend {
    NodeAddress to;
    bool asking = false;
  };
  // Redirected more than the limit allows (a cluster in flux, or a loop).
  struct give_up {};
  using action = std::variant<deliver, patch_table, refresh_table, resend, give_up>;
  using actions = action_list<action, 3>;

  actions on(const event& e);

  int taken() const { return taken_; }

 private:
  actions handle(const answered& e);
  actions handle(const redirected& e);

  int left_;
  int taken_ = 0;
};

}  // namespace warden::detail
