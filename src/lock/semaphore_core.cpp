#include "lock/semaphore_core.hpp"

#include <fmt/format.h>

#include <warden/error.hpp>

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "lock/lock_random.hpp"
#include "lock/permit_source.hpp"
#include "lock/semaphore_keys.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

// One acquire of `permits` permits, as the wait for them asks for it.
class SemaphoreTry final : public PermitSource {
 public:
  SemaphoreTry(std::shared_ptr<SemaphoreCore> core, long long permits) : core_(std::move(core)), permits_(permits) {}

  LockHost& client() const override { return core_->client(); }
  const SharedText& channel_text() const override { return core_->channel_text(); }
  std::string message(std::string_view what) const override { return core_->message(what); }

  ScriptCall try_call(const std::string& attempt, milliseconds mark_ttl) const override {
    return {&scripts::semaphore_acquire,
            {core_->name_string(), keys::acquire_cancel(core_->name(), attempt)},
            {"", "", std::to_string(permits_), std::to_string(mark_ttl.count())}};
  }

  PermitTry read_try(const Reply& reply) const override {
    PermitTry out;
    if (!reply.is_integer()) return out;
    out.what = reply.integer == 1 ? PermitTry::kind::taken : PermitTry::kind::refused;
    return out;
  }

  ScriptCall settle_call(const std::string& attempt, bool keep, milliseconds mark_ttl) const override {
    return {&scripts::semaphore_settle,
            {core_->name_string(), std::string(core_->channel()), keys::acquire_cancel(core_->name(), attempt)},
            {"", "", core_->publish_command(), "", std::to_string(permits_), keep ? "1" : "0",
             std::to_string(mark_ttl.count())}};
  }

  void give_back(const std::string&, std::function<void(std::error_code, const std::string&)> done) override {
    core_->release(permits_, [done = std::move(done)](std::error_code error, long long, const std::string& message) {
      done(error, message);
    });
  }

 private:
  std::shared_ptr<SemaphoreCore> core_;
  long long permits_;
};

}  // namespace

void SemaphoreCore::acquire(long long permits, std::optional<milliseconds> wait, cancel_token cancel,
                            acquire_done done) {
  PermitSource::wait_for_permits(
      std::make_shared<SemaphoreTry>(shared_from_this(), permits), wait, std::move(cancel),
      [done = std::move(done)](std::error_code error, bool acquired, const std::string&, const std::string& message) {
        done(error, acquired, message);
      });
}

SemaphoreCore::SemaphoreCore(std::shared_ptr<LockHost> client, std::string name)
    : client_(std::move(client)), name_(std::move(name)), channel_(keys::semaphore_channel(name_)) {}

SemaphoreCore::~SemaphoreCore() = default;

std::string SemaphoreCore::message(std::string_view what) const {
  return fmt::format("warden: semaphore '{}' on {}: {}", name_, client_->topology().describe(name_), what);
}

const char* SemaphoreCore::publish_command() const { return client_->topology().publish_command(); }

void SemaphoreCore::run_counting(std::string_view what, const Script& script, std::vector<std::string> keys,
                                 std::vector<std::string> args, bool idempotent, replica_wait wait, count_done done) {
  auto deadline = clock::now() + client_->config().command_timeout;
  client_->run_script(
      script, keys, args, deadline, idempotent,
      [self = shared_from_this(), what = std::string(what), done = std::move(done)](Response&& response) {
        auto answer = read_integer_answer(response, what);
        if (!answer.warning.empty()) self->client().log(log_level::warning, self->message(answer.warning));
        done(answer.error, answer.value, answer.error ? self->message(answer.why) : std::string());
      },
      wait);
}

void SemaphoreCore::release(long long permits, count_done done) {
  auto& config = client_->config();
  auto latch_ttl = config.command_timeout * (config.retry_attempts + 2);
  // Idempotent through its latch: the connection may send it again after a
  // reconnect, and it adds its permits once.
  run_counting("release", scripts::semaphore_release,
               {name_, std::string(channel()), keys::release_latch(name_, random_request_id())},
               {"", "", publish_command(), "", std::to_string(permits), std::to_string(latch_ttl.count())}, true,
               replica_wait::keep, std::move(done));
}

void SemaphoreCore::release_if_exists(long long permits, count_done done) {
  auto& config = client_->config();
  auto latch_ttl = config.command_timeout * (config.retry_attempts + 2);
  // Idempotent through its latch, as release(): the latch keeps 1 or 0.
  run_counting("release_if_exists", scripts::semaphore_release,
               {name_, std::string(channel()), keys::release_latch(name_, random_request_id())},
               {"", "", publish_command(), "", std::to_string(permits), std::to_string(latch_ttl.count()), "if_exists"},
               true, replica_wait::keep, std::move(done));
}

void SemaphoreCore::available(count_done done) {
  run_counting("available_permits", scripts::semaphore_read, {name_}, {"", "", "read"}, true, replica_wait::none,
               std::move(done));
}

void SemaphoreCore::drain(count_done done) {
  run_counting("drain_permits", scripts::semaphore_read, {name_}, {"", "", "drain"}, false, replica_wait::none,
               std::move(done));
}

void SemaphoreCore::try_set(long long permits, count_done done) {
  // Idempotent: sent again after a lost reply, it finds the count it set
  // (and answers 0, as it would to anyone after that).
  run_counting("try_set_permits", scripts::semaphore_set, {name_, std::string(channel())},
               {"", "", publish_command(), "", std::to_string(permits), "try_set"}, true, replica_wait::none,
               std::move(done));
}

void SemaphoreCore::add(long long permits, count_done done) {
  run_counting("add_permits", scripts::semaphore_set, {name_, std::string(channel())},
               {"", "", publish_command(), "", std::to_string(permits), "add"}, false, replica_wait::keep,
               std::move(done));
}

}  // namespace warden::detail
