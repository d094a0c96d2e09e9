#include "topology/redirects.hpp"

namespace warden::detail {

Redirects::event Redirects::read(const Reply& reply, const NodeAddress& from) {
  auto kind = classify(reply);
  if (kind != reply_class::moved && kind != reply_class::ask) return answered{};
  auto redirect = redirect_of(reply);  // classify() already checked that it reads
  return redirected{kind == reply_class::ask, redirect->slot,
                    NodeAddress{redirect->host.empty() ? from.host : redirect->host, redirect->port}};
}

Redirects::actions Redirects::on(const event& e) {
  return std::visit([this](const auto& what) { return handle(what); }, e);
}

Redirects::actions Redirects::handle(const answered&) { return {deliver{}}; }

Redirects::actions Redirects::handle(const redirected& e) {
  if (left_ == 0) {
    // A table that keeps sending commands in circles is worth reading again.
    if (e.ask) return {give_up{}};
    return {refresh_table{}, give_up{}};
  }
  --left_;
  ++taken_;
  if (e.ask) return {resend{e.to, true}};
  return {patch_table{e.slot, e.to}, refresh_table{}, resend{e.to, false}};
}

}  // namespace warden::detail
