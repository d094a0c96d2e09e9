#include "lock/count_down_latch_core.hpp"

#include <fmt/format.h>

#include <warden/error.hpp>

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {

CountDownLatchCore::CountDownLatchCore(std::shared_ptr<LockHost> client, std::string name)
    : client_(std::move(client)), name_(std::move(name)), channel_(keys::latch_channel(name_)) {}

std::string CountDownLatchCore::message(std::string_view what) const {
  return fmt::format("warden: count-down latch '{}' on {}: {}", name_, client_->topology().describe(name_), what);
}

bool CountDownLatchCore::channel_shares_slot() const {
  return client_->topology().group_of(name_) == client_->topology().group_of(channel_.view());
}

void CountDownLatchCore::run_write(const Script& script, const char* publish_message, std::int64_t publish_when,
                                   std::vector<std::string> extra_args, bool idempotent, std::string_view what,
                                   done_fn done) {
  bool in_script = channel_shares_slot();
  std::vector<std::string> keys{name_};
  if (in_script) keys.emplace_back(channel_.view());
  std::vector<std::string> args{"", "", in_script ? client_->topology().publish_command() : "", publish_message};
  for (auto& arg : extra_args) args.push_back(std::move(arg));
  auto self = shared_from_this();
  client_->run_script(
      script, keys, args, clock::now() + client_->config().command_timeout, idempotent,
      [self, in_script, publish_message, publish_when, what = std::string(what),
       done = std::move(done)](Response&& response) {
        auto answer = read_integer_answer(response, what);
        if (!answer.warning.empty()) self->client_->log(log_level::warning, self->message(answer.warning));
        if (answer.error) return done(answer.error, 0, self->message(answer.why));
        std::int64_t value = answer.value;
        if (in_script || value != publish_when) return done({}, value, {});
        // The channel lives in another slot: tell it now, then answer. A
        // failure here is logged; the write itself took effect.
        auto& client = *self->client_;
        client.send(
            Command{client.topology().publish_command(), self->channel_.view(), publish_message}, self->channel_.view(),
            clock::now() + client.config().command_timeout, true, [self, value, done](Response&& published) {
              if (!published.ok()) {
                self->client_->log(log_level::warning,
                                   self->message("the channel could not be told: " +
                                                 (published.error ? describe_error(published) : published.reply.str)));
              }
              done({}, value, {});
            });
      },
      replica_wait::keep);
}

void CountDownLatchCore::try_set_count(std::int64_t count, done_fn done) {
  run_write(scripts::latch_try_set_count, "1", 1, {std::to_string(count)}, false, "try_set_count", std::move(done));
}

void CountDownLatchCore::count_down(done_fn done) {
  // Not idempotent: a resend after a lost reply could count down twice.
  run_write(scripts::latch_count_down, "0", 0, {}, false, "count_down", std::move(done));
}

void CountDownLatchCore::remove(done_fn done) {
  run_write(scripts::latch_delete, "1", 1, {}, true, "delete", std::move(done));
}

void CountDownLatchCore::count(done_fn done) {
  auto self = shared_from_this();
  client_->run_script(scripts::latch_count, {name_}, {}, clock::now() + client_->config().command_timeout, true,
                      [self, done = std::move(done)](Response&& response) {
                        auto answer = read_integer_answer(response, "count");
                        done(answer.error, answer.value, answer.error ? self->message(answer.why) : std::string());
                      });
}

}  // namespace warden::detail
