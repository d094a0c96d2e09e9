// The public cancel_token and cancel_source over the shared cancel_state.
#include <warden/cancel.hpp>

#include "base/cancel_state.hpp"

namespace warden {

bool cancel_token::cancelled() const noexcept { return state_ && state_->cancelled(); }

cancel_source::cancel_source() : state_(detail::cancel_access::make()) {}

void cancel_source::cancel() noexcept { state_->cancel(); }

bool cancel_source::cancelled() const noexcept { return state_->cancelled(); }

}  // namespace warden
