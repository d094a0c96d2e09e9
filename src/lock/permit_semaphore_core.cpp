#include "lock/permit_semaphore_core.hpp"

#include <fmt/format.h>

#include <warden/error.hpp>

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "lock/permit_keeper.hpp"
#include "lock/permit_source.hpp"
#include "lock/semaphore_keys.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

// One acquire of a permit, as the wait for it asks for it: the attempt id
// is the new permit's id. It remembers when its last try was sent: a permit
// the watchdog keeps was valid for its lease from then at least.
class PermitSemaphoreTry final : public PermitSource {
 public:
  PermitSemaphoreTry(std::shared_ptr<PermitSemaphoreCore> core, std::optional<milliseconds> lease)
      : core_(std::move(core)), lease_(lease) {}

  LockHost& client() const override { return core_->client(); }
  const SharedText& channel_text() const override { return core_->channel_text(); }
  std::string message(std::string_view what) const override { return core_->message(what); }

  ScriptCall try_call(const std::string& attempt, milliseconds mark_ttl) const override {
    sent_ = clock::now();
    return {&scripts::pes_acquire,
            {core_->name_string(), std::string(core_->channel()), core_->timeouts(),
             keys::acquire_cancel(core_->name(), attempt)},
            {lease_ ? std::to_string(lease_->count()) : std::string(), "", core_->publish_command(), "", attempt,
             std::to_string(mark_ttl.count())}};
  }

  PermitTry read_try(const Reply& reply) const override {
    PermitTry out;
    if (!reply.is_integer() || reply.integer < -2) return out;
    if (reply.integer == -1) {
      out.what = PermitTry::kind::taken;
      return out;
    }
    out.what = PermitTry::kind::refused;
    // The earliest held permit expires then (server time): nothing may be
    // published when it does, so the waiter tries again at that time.
    if (reply.integer >= 0) out.retry_in = milliseconds{reply.integer};
    return out;
  }

  ScriptCall settle_call(const std::string& attempt, bool keep, milliseconds mark_ttl) const override {
    return {&scripts::pes_settle,
            {core_->name_string(), std::string(core_->channel()), core_->timeouts(),
             keys::acquire_cancel(core_->name(), attempt)},
            {"", "", core_->publish_command(), "", attempt, keep ? "1" : "0", std::to_string(mark_ttl.count())}};
  }

  void give_back(const std::string& attempt, std::function<void(std::error_code, const std::string&)> done) override {
    core_->release(attempt, [done = std::move(done)](std::error_code error, long long, const std::string& message) {
      done(error, message);
    });
  }

  clock::time_point sent() const { return sent_; }

 private:
  std::shared_ptr<PermitSemaphoreCore> core_;
  std::optional<milliseconds> lease_;
  mutable clock::time_point sent_{};  // try_call() is called just before each try is sent
};

}  // namespace

PermitSemaphoreCore::PermitSemaphoreCore(std::shared_ptr<LockHost> client, std::string name,
                                         std::shared_ptr<PermitKeeper> keeper)
    : client_(std::move(client)),
      name_(std::move(name)),
      channel_(keys::semaphore_channel(name_)),
      timeouts_(keys::suffixed(name_, "timeout")),
      keeper_(std::move(keeper)) {}

std::string PermitSemaphoreCore::message(std::string_view what) const {
  return fmt::format("warden: permit-expirable semaphore '{}' on {}: {}", name_, client_->topology().describe(name_),
                     what);
}

const char* PermitSemaphoreCore::publish_command() const { return client_->topology().publish_command(); }

void PermitSemaphoreCore::acquire(std::optional<milliseconds> lease, std::optional<milliseconds> wait,
                                  cancel_token cancel, acquire_done done) {
  // Without a lease, the permit gets the watchdog's (Config's
  // lock_watchdog_timeout, as a lock's hold) and is renewed every third of
  // it: it comes back one lease after this client dies, never before.
  const bool kept = !lease;
  auto attempt =
      std::make_shared<PermitSemaphoreTry>(shared_from_this(), kept ? client_->config().lock_watchdog_timeout : *lease);
  PermitSource::wait_for_permits(
      attempt, wait, std::move(cancel),
      [self = shared_from_this(), attempt, kept, done = std::move(done)](
          std::error_code error, bool acquired, const std::string& id, const std::string& message) {
        if (!error && acquired && kept) self->keeper_->keep(id, attempt->sent());
        done(error, acquired ? std::optional<std::string>(id) : std::nullopt, message);
      });
}

void PermitSemaphoreCore::run_counting(std::string_view what, const Script& script, std::vector<std::string> args,
                                       bool idempotent, replica_wait wait, count_done done) {
  auto deadline = clock::now() + client_->config().command_timeout;
  std::vector<std::string> keys{name_, std::string(channel()), timeouts_};
  client_->run_script(
      script, keys, args, deadline, idempotent,
      [self = shared_from_this(), what = std::string(what), done = std::move(done)](Response&& response) {
        auto answer = read_integer_answer(response, what);
        if (!answer.warning.empty()) self->client().log(log_level::warning, self->message(answer.warning));
        done(answer.error, answer.value, answer.error ? self->message(answer.why) : std::string());
      },
      wait);
}

void PermitSemaphoreCore::release(const std::string& id, count_done done) {
  // Not re-sent after a lost reply: a second run would answer "not held".
  keeper_->stop(id);
  run_counting("release", scripts::pes_release, {"", "", publish_command(), "", id}, false, replica_wait::keep,
               [keeper = keeper_, id, done = std::move(done)](std::error_code error, long long value,
                                                              const std::string& message) {
                 keeper->forget(id);
                 done(error, value, message);
               });
}

void PermitSemaphoreCore::update_lease(const std::string& id, std::optional<milliseconds> lease, count_done done) {
  // A lease set by the caller is the permit's from now on: the watchdog
  // lets go of it (before the call, so that no renewal stretches it).
  keeper_->stop(id);
  run_counting("update_lease_time", scripts::pes_update_lease,
               {lease ? std::to_string(lease->count()) : std::string(), "", publish_command(), "", id}, true,
               replica_wait::keep,
               [keeper = keeper_, id, done = std::move(done)](std::error_code error, long long value,
                                                              const std::string& message) {
                 keeper->forget(id);
                 done(error, value, message);
               });
}

void PermitSemaphoreCore::available(count_done done) {
  run_counting("available_permits", scripts::pes_read, {"", "", publish_command(), "", "available"}, true,
               replica_wait::none, std::move(done));
}

void PermitSemaphoreCore::acquired(count_done done) {
  run_counting("acquired_permits", scripts::pes_read, {"", "", publish_command(), "", "acquired"}, true,
               replica_wait::none, std::move(done));
}

void PermitSemaphoreCore::lease_time(const std::string& id, count_done done) {
  run_counting("lease_time", scripts::pes_read, {"", "", publish_command(), "", "lease_time", id}, true,
               replica_wait::none, std::move(done));
}

void PermitSemaphoreCore::try_set(long long permits, count_done done) {
  run_counting("try_set_permits", scripts::pes_set, {"", "", publish_command(), "", std::to_string(permits), "try_set"},
               true, replica_wait::none, std::move(done));
}

void PermitSemaphoreCore::set(long long permits, count_done done) {
  run_counting("set_permits", scripts::pes_set, {"", "", publish_command(), "", std::to_string(permits), "set"}, true,
               replica_wait::keep, std::move(done));
}

}  // namespace warden::detail
