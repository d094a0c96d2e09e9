// What a command routed by its key's slot does with a MOVED or ASK reply: go
// where it is sent, a bounded number of times. Plain logic, no I/O: the
// router sends, this decides.
#pragma once

#include "io/reply.hpp"
#include "topology/slot_map.hpp"

namespace warden::detail {

class Redirects {
 public:
  // At most `limit` redirections for one command; the next one gives up.
  explicit Redirects(int limit) : left_(limit) {}

  struct Step {
    enum class action {
      deliver,  // not a redirection: the reply is the command's
      resend,   // send the command again, to `to`
      give_up,  // redirected more than the limit allows (a cluster in flux, or a loop)
    };
    action what = action::deliver;
    NodeAddress to;
    // resend: send ASKING first, on the same connection. An ASK is for this
    // one command while its slot migrates; the table is left as it is.
    bool asking = false;
    // The slot table is out of date (a MOVED): read it again in the background.
    bool refresh = false;
  };

  // `from` is the node that answered: a redirection without a host means it
  // (the node does not know how it is reached). A MOVED patches `map` at once.
  Step on_reply(const Reply& reply, const NodeAddress& from, SlotMap& map);

  int taken() const { return taken_; }

 private:
  int left_;
  int taken_ = 0;
};

}  // namespace warden::detail
