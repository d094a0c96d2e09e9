#include "lock/lock_core.hpp"

#include <fmt/format.h>

#include <optional>

#include <warden/error.hpp>

#include "lock/keys.hpp"
#include "lock/lock_events.hpp"
#include "lock/lock_host.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {

LockCore::LockCore(std::shared_ptr<LockHost> client, std::string name, bool reentrant)
    : client_(std::move(client)),
      channel_(keys::lock_channel(name)),
      name_at_(static_cast<std::uint32_t>(keys::lock_channel_name_at(name))),
      name_size_(static_cast<std::uint32_t>(name.size())),
      reentrant_(reentrant) {}

LockCore::~LockCore() {
  if (!kind_.empty()) client_->forget_core(*this, kind_);
  delete name_string_.load(std::memory_order_acquire);
}

const std::string& LockCore::name_string() const {
  if (auto* made = name_string_.load(std::memory_order_acquire)) return *made;
  // Two threads may both make one: the first to publish it wins.
  auto fresh = std::make_unique<const std::string>(name());
  const std::string* expected = nullptr;
  if (name_string_.compare_exchange_strong(expected, fresh.get(), std::memory_order_acq_rel)) return *fresh.release();
  return *expected;
}

const char* LockCore::publish_command() const { return client_->topology().publish_command(); }

std::error_code LockCore::link_problem() const {
  auto node = client_->topology().node_for(name());
  if (!node) return make_error_code(errc::routing_failed);
  return node->commands().ready() ? std::error_code{} : node->commands().pending_error();
}

std::string LockCore::message(std::string_view what) const {
  return lock_message(name(), client_->topology().describe(name()), what);
}

const Script& LockCore::renew_script() const { return scripts::lock_renew; }

ScriptCall LockCore::acquire_call(thread_id owner, milliseconds lease) const {
  return {&scripts::lock_acquire,
          {name_key()},
          {std::to_string(lease.count()), client_->owner(owner), reentrant_ ? "1" : "0"}};
}

AcquireAnswer LockCore::read_acquire(const Reply& reply) const {
  AcquireAnswer answer;
  if (reply_problem(reply, {Reply::kind::nil, Reply::kind::integer})) {
    answer.problem = describe_problem(reply, {Reply::kind::nil, Reply::kind::integer});
    return answer;
  }
  answer.acquired = reply.is_nil();
  answer.ttl = milliseconds{reply.integer};
  return answer;
}

std::optional<SettleAnswer> LockCore::read_settle(const Reply& reply, bool /*keep*/) const {
  if (!reply.is_integer()) return std::nullopt;
  return SettleAnswer{reply.integer == 1, std::nullopt};
}

std::string LockCore::wait_channel(thread_id /*owner*/) const { return channel_key(); }

std::optional<ScriptCall> LockCore::give_up_call(thread_id /*owner*/) const { return std::nullopt; }

ScriptCall LockCore::release_call(thread_id owner, milliseconds keep_lease, const std::string& request_id,
                                  milliseconds latch_ttl) const {
  return {&scripts::lock_release,
          {name_key(), channel_key(), keys::unlock_latch(name(), request_id)},
          {std::to_string(keep_lease.count()), client_->owner(owner), publish_command(), unlock_message(),
           std::to_string(latch_ttl.count())}};
}

ScriptCall LockCore::force_release_call() const {
  // The fair queue's key lets the script refuse a fair lock that has waiters.
  return {&scripts::lock_force_release,
          {name_key(), channel_key(), keys::fair_queue(name())},
          {"", "", publish_command(), unlock_message()}};
}

ScriptCall LockCore::resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::lock_resolve_acquire,
          {name_key(), channel_key()},
          {std::to_string(keep_lease.count()), client_->owner(owner), publish_command(), unlock_message(),
           std::to_string(expected)}};
}

void LockCore::write_owner_field(thread_id owner, std::string& out) const { client_->write_owner(owner, out); }

const void* LockCore::owner_field_family() const {
  static constexpr char owner_id_alone = 0;
  return &owner_id_alone;
}

ScriptCall LockCore::set_lease_call(thread_id owner, milliseconds lease) const {
  return {&scripts::lock_set_lease, {name_key()}, {std::to_string(lease.count()), owner_field(owner)}};
}

void LockCore::give_up(thread_id owner) {
  auto call = give_up_call(owner);
  if (!call) return;
  client_->run_script(*call->script, call->keys, call->args, clock::now() + client_->config().command_timeout, true,
                      [](Response&&) {});
}

void LockCore::enter_lane(thread_id owner, std::optional<clock::time_point> give_up_at, std::function<void()> admitted,
                          std::function<void()> gave_up) {
  Lane* found = find_lane(owner);
  if (!found) {
    lanes_.push_back(Lane{owner, {}});
    return admitted();
  }
  Lane& lane = *found;
  LaneWaiter waiter;
  waiter.id = next_lane_waiter_++;
  waiter.admitted = std::move(admitted);
  waiter.gave_up = std::move(gave_up);
  if (give_up_at) {
    auto self = shared_from_this();
    waiter.timer = client_->loop().at(*give_up_at, [self, owner, id = waiter.id] {
      Lane* found = self->find_lane(owner);
      if (!found) return;
      auto& queue = found->waiting;
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (it->id != id) continue;
        auto gave_up = std::move(it->gave_up);
        queue.erase(it);
        return gave_up();
      }
    });
  }
  lane.waiting.push_back(std::move(waiter));
}

LockCore::Lane* LockCore::find_lane(thread_id owner) {
  for (auto& lane : lanes_) {
    if (lane.owner == owner) return &lane;
  }
  return nullptr;
}

void LockCore::leave_lane(thread_id owner) {
  Lane* found = find_lane(owner);
  if (!found) return;
  auto& lane = *found;
  if (lane.waiting.empty()) {
    lanes_.erase(lanes_.begin() + (found - lanes_.data()));
    // Not `lanes_ = {}`: that assigns an empty list and keeps the storage.
    if (lanes_.empty()) std::vector<Lane>().swap(lanes_);
    return;
  }
  auto next = std::move(lane.waiting.front());
  lane.waiting.pop_front();
  client_->loop().cancel(next.timer);
  next.admitted();
}

void LockCore::force_release(std::function<void(std::error_code, bool, const std::string&)> done) {
  auto self = shared_from_this();
  auto call = force_release_call();
  client_->run_script(
      *call.script, std::move(call.keys), std::move(call.args), clock::now() + client_->config().command_timeout, true,
      [self, done = std::move(done)](Response&& response) {
        if (response.error) return done(response.error, false, self->message(response.error.message()));
        if (auto problem = reply_problem(response.reply, {Reply::kind::integer})) {
          return done(problem, false, self->message(describe_problem(response.reply, {Reply::kind::integer})));
        }
        if (!response.replica_shortfall.empty()) {
          self->client_->log(log_level::warning, self->message("force-released, but " + response.replica_shortfall));
        }
        done({}, response.reply.integer == 1, {});
      },
      replica_wait::keep);
}

void LockCore::inspect(thread_id owner, inspect_done done) {
  // In the owner's lane, behind any acquire attempt of that owner still on
  // its way and the take-back of one whose caller has heard back already
  // (cancelled while the attempt was in flight): the owner never reads a hold
  // it was told it did not get. A lane still busy after one command's time
  // (a take-back that keeps trying) is not waited for: the state is read as
  // it is then.
  auto self = shared_from_this();
  auto shared_done = std::make_shared<inspect_done>(std::move(done));
  enter_lane(
      owner, clock::now() + client_->config().command_timeout,
      [self, owner, shared_done] { self->send_inspect(owner, true, std::move(*shared_done)); },
      [self, owner, shared_done] { self->send_inspect(owner, false, std::move(*shared_done)); });
}

void LockCore::send_inspect(thread_id owner, bool in_lane, inspect_done done) {
  auto self = shared_from_this();
  client_->run_script(
      scripts::lock_inspect, {name_key()}, {"", owner_field(owner), layout()},
      clock::now() + client_->config().command_timeout, true,
      [self, owner, in_lane, done = std::move(done)](Response&& response) {
        if (in_lane) self->leave_lane(owner);
        if (response.error) return done(response.error, {}, self->message(response.error.message()));
        const auto& reply = response.reply;
        auto problem = reply_problem(reply, {Reply::kind::array});
        if (!problem && (reply.elements.size() != 3 || !reply.elements[0].is_integer() ||
                         !reply.elements[1].is_integer() || reply.elements[2].type != Reply::kind::string)) {
          problem = make_error_code(errc::protocol_error);
        }
        if (problem) {
          return done(problem, {}, self->message(describe_problem(reply, {Reply::kind::array})));
        }
        Inspection state;
        state.pttl = reply.elements[0].integer;
        state.count = reply.elements[1].integer;
        state.mode = reply.elements[2].str;
        done({}, std::move(state), {});
      });
}

void LockCore::set_lease(thread_id owner, milliseconds lease, std::function<void(std::error_code, bool)> done) {
  auto self = shared_from_this();
  auto call = set_lease_call(owner, lease);
  auto sent = clock::now();
  client_->run_script(
      *call.script, std::move(call.keys), std::move(call.args), sent + client_->config().command_timeout, true,
      [self, owner, lease, sent, done = std::move(done)](Response&& response) {
        if (!response.ok()) {
          return done(response.error ? response.error : make_error_code(errc::server_error), false);
        }
        bool held = response.reply.integer == 1;
        if (held && !response.replica_shortfall.empty()) {
          self->client_->log(log_level::warning, self->message("lease set, but " + response.replica_shortfall));
        }
        if (held) self->client_->holds().leased(*self, owner, lease, sent);
        done({}, held);
      },
      replica_wait::keep);
}

std::uint64_t LockCore::add_lost_listener(std::function<void(const LockLost&)> listener) {
  return lost_listeners_.add(std::move(listener));
}

void LockCore::remove_lost_listener(std::uint64_t token) { lost_listeners_.remove(token); }

void LockCore::notify_lost(const LockLost& event) const {
  if (client_->loop().led_here()) {
    // A caller waiting for its own answer read this (its unlock() found the
    // hold gone): listeners run on the I/O thread, which the caller hands
    // the loop to as soon as this is queued.
    if (client_->post([self = shared_from_this(), event] { self->notify_lost(event); })) return;
  }
  client_->log(log_level::warning, event.message);
  report_hold_lost(*this, event.owner, event.cause, event.message);
  lost_listeners_.notify(event,
                         [client = client_](log_level level, const std::string& text) { client->log(level, text); });
}

void LockCore::hold_lost(thread_id owner, std::error_code cause, std::string_view why) {
  notify_lost(
      LockLost{name_key(), owner, cause, message(fmt::format("hold of {} lost: {}", client_->owner(owner), why))});
}

}  // namespace warden::detail
