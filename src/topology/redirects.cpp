#include "topology/redirects.hpp"

namespace warden::detail {

Redirects::Step Redirects::on_reply(const Reply& reply, const NodeAddress& from, SlotMap& map) {
  auto kind = classify(reply);
  if (kind != reply_class::moved && kind != reply_class::ask) return {};
  auto redirect = redirect_of(reply);  // classify() already checked that it reads
  Step step;
  if (left_ == 0) {
    step.what = Step::action::give_up;
    // A table that keeps sending commands in circles is worth reading again.
    step.refresh = kind == reply_class::moved;
    return step;
  }
  --left_;
  ++taken_;
  step.what = Step::action::resend;
  step.to = NodeAddress{redirect->host.empty() ? from.host : redirect->host, redirect->port};
  if (kind == reply_class::ask) {
    step.asking = true;
  } else {
    map.moved(redirect->slot, step.to);
    step.refresh = true;
  }
  return step;
}

}  // namespace warden::detail
