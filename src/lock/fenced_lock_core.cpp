#include "lock/fenced_lock_core.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include <warden/error.hpp>

#include "lock/keys.hpp"
#include "lock/lock_host.hpp"
#include "warden_scripts.hpp"

namespace warden::detail {
namespace {

// A token counter's text: a non-negative decimal integer that fits int64.
std::optional<std::int64_t> parse_token(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

bool two_integers(const Reply& reply) {
  return reply.type == Reply::kind::array && reply.elements.size() == 2 && reply.elements[0].is_integer() &&
         reply.elements[1].is_integer();
}

}  // namespace

FencedLockCore::FencedLockCore(std::shared_ptr<LockHost> client, std::string name)
    : LockCore(std::move(client), std::move(name)), token_key_(keys::fenced_token(this->name())) {}

ScriptCall FencedLockCore::acquire_call(thread_id owner, milliseconds lease) const {
  return {&scripts::fenced_acquire, {name_key(), token_key_}, {std::to_string(lease.count()), client().owner(owner)}};
}

AcquireAnswer FencedLockCore::read_acquire(const Reply& reply) const {
  AcquireAnswer answer;
  // {-1, token >= 1}: acquired; {pttl, -1}: not (pttl -1: held without expiry).
  if (two_integers(reply)) {
    auto first = reply.elements[0].integer, second = reply.elements[1].integer;
    if (first == -1 && second >= 1) {
      answer.acquired = true;
      answer.token = second;
      return answer;
    }
    if (second == -1) {
      answer.ttl = milliseconds{first};
      return answer;
    }
  }
  answer.problem =
      describe_problem(reply, {Reply::kind::array}) + " (a fenced acquire answers {-1, token} or {pttl, -1})";
  return answer;
}

ScriptCall FencedLockCore::resolve_call(thread_id owner, long long expected, milliseconds keep_lease) const {
  return {&scripts::fenced_resolve_acquire,
          {name_key(), channel_key(), token_key_},
          {std::to_string(keep_lease.count()), client().owner(owner), publish_command(), unlock_message(),
           std::to_string(expected)}};
}

std::optional<SettleAnswer> FencedLockCore::read_settle(const Reply& reply, bool keep) const {
  if (reply.is_integer()) {
    // A kept hold always comes with its token.
    if (keep && reply.integer == 1) return std::nullopt;
    return SettleAnswer{reply.integer == 1, std::nullopt};
  }
  if (keep && two_integers(reply) && reply.elements[0].integer == 1 && reply.elements[1].integer >= 1) {
    return SettleAnswer{true, reply.elements[1].integer};
  }
  return std::nullopt;
}

void FencedLockCore::token(std::function<void(std::error_code, std::int64_t, const std::string&)> done) {
  auto self = std::static_pointer_cast<FencedLockCore>(shared_from_this());
  client().send({"GET", token_key_}, token_key_, clock::now() + client().config().command_timeout, true,
                [self, done = std::move(done)](Response&& response) {
                  if (response.error) return done(response.error, 0, self->message(describe_error(response)));
                  const auto& reply = response.reply;
                  if (reply.is_nil()) return done({}, 0, {});
                  if (reply.is_error()) {
                    return done(error_reply_code(reply), 0,
                                self->message(fmt::format("reading {}: {}", self->token_key_,
                                                          describe_problem(reply, {Reply::kind::string}))));
                  }
                  auto value = reply.type == Reply::kind::string ? parse_token(reply.str) : std::nullopt;
                  if (!value) {
                    return done(
                        make_error_code(errc::wrong_type), 0,
                        self->message(fmt::format("{} holds {} that is not a fencing token counter", self->token_key_,
                                                  reply.type == Reply::kind::string
                                                      ? "'" + reply.str.substr(0, 32) + "'"
                                                      : describe_problem(reply, {Reply::kind::string}))));
                  }
                  done({}, *value, {});
                });
}

}  // namespace warden::detail
