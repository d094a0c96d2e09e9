// A release (LockCore::release): sent in the owner's lane, its answer read
// by ReleaseMachine, whose actions this performs.
#include <fmt/format.h>

#include <memory>

#include <warden/error.hpp>

#include "lock/keys.hpp"
#include "lock/lock_core.hpp"
#include "lock/lock_events.hpp"
#include "lock/lock_host.hpp"
#include "lock/lock_random.hpp"
#include "lock/release_machine.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

using machine = ReleaseMachine;

// The words of a release's answer. `response` is null when none came.
std::string release_message(const LockCore& lock, thread_id id, const machine::answer& answer,
                            const Response* response) {
  auto owner = [&] { return lock.client().owner(id); };
  switch (answer.why) {
    case machine::reason::released:
      return {};
    case machine::reason::lane_timed_out:
      return lock.message(
          "release timed out waiting for an acquire of the same owner to be settled; the hold is no longer "
          "renewed and expires with its lease");
    case machine::reason::failed:
      return lock.message(
          fmt::format("release of {} failed, the hold is no longer renewed and expires with its lease: {}", owner(),
                      answer.error.message()));
    case machine::reason::bad_reply:
      return lock.message(fmt::format(
          "release of {} failed: {}", owner(),
          response ? describe_problem(response->reply, {Reply::kind::nil, Reply::kind::integer}) : std::string()));
    case machine::reason::lease_expired:
      return lock.message(fmt::format("owner {} held it, but its lease expired or the key was deleted", owner()));
    case machine::reason::not_owner:
      return lock.message(fmt::format("not held by owner {}", owner()));
  }
  return {};
}

// Performs what the machine made of a release's answer. `sent`: for the
// observer.
void perform_release(const std::shared_ptr<LockCore>& self, thread_id owner, clock::time_point sent,
                     const machine::actions& todo, const Response* response, const LockCore::release_done& done) {
  auto& client = self->client();
  auto& holds = client.holds();
  for (const auto& action : todo) {
    if (std::holds_alternative<machine::forget>(action)) {
      holds.forget(*self, owner);
    } else if (auto* released = std::get_if<machine::released>(&action)) {
      holds.released(*self, owner, released->freed);
    } else if (std::holds_alternative<machine::warn_short_of_replicas>(action)) {
      client.log(log_level::warning, self->message(fmt::format("released by {}, but {}", client.owner(owner),
                                                               response ? response->replica_shortfall : "")));
    } else if (auto* answer = std::get_if<machine::answer>(&action)) {
      auto text = release_message(*self, owner, *answer, response);
      auto finish = [self, owner, sent, answer = *answer, text, done] {
        if (answer.tell_listeners) self->notify_lost(LockLost{self->name_key(), owner, answer.error, text});
        report_release(*self, owner, sent, answer.error, answer.freed, answer.short_of_replicas);
        done(answer.error, text);
      };
      // Listeners run on the I/O thread, and before the release reports
      // back: an unlock() that read this answer itself hands it all over.
      if (answer->listeners_first && client.loop().led_here() && client.post(finish)) continue;
      finish();
    }
  }
}

}  // namespace

void LockCore::release(thread_id owner, release_done done) {
  auto deadline = clock::now() + client_->config().command_timeout;
  auto shared_done = std::make_shared<release_done>(std::move(done));
  auto self = shared_from_this();
  enter_lane(
      owner, deadline,
      [self, owner, deadline, shared_done] { self->send_release(owner, deadline, std::move(*shared_done)); },
      [self, owner, deadline, shared_done] {
        bool believed = self->client_->holds().count(*self, owner) > 0;
        perform_release(self, owner, deadline - self->client_->config().command_timeout,
                        machine{}.on(machine::lane_timed_out{believed}), nullptr, *shared_done);
      });
}

void LockCore::send_release(thread_id owner, clock::time_point deadline, release_done done) {
  auto self = shared_from_this();
  auto& config = client_->config();
  // Held, or lost lately (a lapsed lease): the owner's own release.
  bool believed = client_->holds().knew_of(*this, owner);
  auto keep_lease = client_->holds().releasing(*this, owner);
  // The latch outlives every resend of this release.
  auto latch_ttl = config.command_timeout * (config.retry_attempts + 2);
  auto call = release_call(owner, keep_lease, random_request_id(), latch_ttl);
  // A release of a hold the book never knew (an unlock by a non-owner) that
  // finds nothing to release leaves Redis as it was: no "not held" latch
  // (lua/prelude/release_latch.lua; the argument after the script's own).
  if (!believed) call.args.emplace_back("0");
  // Read only for the observer: no clock read when nobody observes.
  auto sent = client_->observer().on_release ? clock::now() : clock::time_point{};
  client_->run_script(
      *call.script, std::move(call.keys), std::move(call.args), deadline, true,
      [self, owner, sent, done = std::move(done)](Response&& response) {
        self->leave_lane(owner);
        auto& holds = self->client_->holds();
        machine::answered answer;
        // A hold the book still vouched for: its failed release is news to
        // the listeners. One it had reported lost was told already.
        answer.believed = holds.count(*self, owner) > 0;
        if (response.error) {
          answer.kind = machine::reply::failed;
          answer.error = response.error;
        } else if (auto problem = reply_problem(response.reply, {Reply::kind::nil, Reply::kind::integer})) {
          answer.kind = machine::reply::bad_reply;
          answer.error = problem;
        } else if (response.reply.is_nil()) {
          answer.kind = machine::reply::not_held;
          answer.knew_of = holds.knew_of(*self, owner);
        } else {
          answer.kind = response.reply.integer == 1 ? machine::reply::released : machine::reply::decreased;
          answer.short_of_replicas = !response.replica_shortfall.empty();
        }
        perform_release(self, owner, sent, machine{}.on(answer), &response, done);
      },
      replica_wait::keep);
}

}  // namespace warden::detail
