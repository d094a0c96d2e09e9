#include "wake_floor.hpp"

#include <hiredis/hiredis.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <vector>

#include "lock/keys.hpp"
#include "records.hpp"
#include "redis_sync.hpp"
#include "scale_common.hpp"
#include "warden_scripts.hpp"

namespace warden_bench {
namespace {

namespace keys = warden::detail::keys;
namespace scripts = warden::detail::scripts;

// Appends one command (binary-safe) to the context's output buffer.
void append(redisContext* context, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  if (redisAppendCommandArgv(context, static_cast<int>(args.size()), argv.data(), lengths.data()) != REDIS_OK) {
    throw std::runtime_error(fmt::format("wake floor: {}", context->errstr));
  }
}

// Reads `count` replies; throws on an I/O error or an error reply.
void read_replies(redisContext* context, std::size_t count, const char* what) {
  for (std::size_t i = 0; i < count; ++i) {
    void* raw = nullptr;
    if (redisGetReply(context, &raw) != REDIS_OK || raw == nullptr) {
      throw std::runtime_error(fmt::format("wake floor, {}: {}", what, context->errstr));
    }
    std::unique_ptr<redisReply, decltype(&freeReplyObject)> reply(static_cast<redisReply*>(raw), freeReplyObject);
    if (reply->type == REDIS_REPLY_ERROR) {
      throw std::runtime_error(fmt::format("wake floor, {}: {}", what, std::string(reply->str, reply->len)));
    }
  }
}

struct lock_args {
  std::string name, channel;
};

std::vector<std::string> acquire(const warden::Config& config, const lock_args& lock, const std::string& owner,
                                 std::size_t attempt) {
  return {"EVALSHA",
          scripts::lock_acquire.sha1,
          "2",
          lock.name,
          keys::acquire_cancel(lock.name, fmt::format("{:032x}", attempt)),
          std::to_string(config.lock_watchdog_timeout.count()),
          owner};
}

std::vector<std::string> release(const warden::Config& config, const lock_args& lock, const std::string& owner,
                                 std::size_t request, const char* publish_command) {
  return {"EVALSHA", scripts::lock_release.sha1, "3", lock.name, lock.channel,
          keys::unlock_latch(lock.name, fmt::format("{:032x}", request)),
          // The library's order (lua/lock_release.lua): lease kept, owner,
          // publish command, message, latch TTL.
          std::to_string(config.lock_watchdog_timeout.count()), owner, publish_command, "0",
          std::to_string((config.command_timeout * (config.retry_attempts + 2)).count())};
}

}  // namespace

wake_floor measure_wake_floor(const warden::Config& config, const std::string& prefix, std::size_t n,
                              const char* publish_command, int run) {
  wake_floor out;
  out.locks = n;
  try {
    auto commands = redis_sync::connect(config, std::chrono::seconds(30));
    auto listener = redis_sync::connect(config, std::chrono::seconds(30));
    server_stats stats(config);
    for (const warden::detail::Script* script : {&scripts::lock_acquire, &scripts::lock_release}) {
      commands.command({"SCRIPT", "LOAD", script->body});
    }
    std::vector<lock_args> locks(n);
    for (std::size_t i = 0; i < n; ++i) {
      locks[i].name = run == 0 ? fmt::format("{}:floor:{}", prefix, i) : fmt::format("{}:floor{}:{}", prefix, run, i);
      locks[i].channel = keys::lock_channel(locks[i].name);
    }
    const std::string holder = "warden-bench-floor-holder:1", waiter = "warden-bench-floor-waiter:1";
    std::size_t ids = 0;

    // The holder takes every lock; the listener subscribes to every channel.
    for (const auto& lock : locks) append(commands.context(), acquire(config, lock, holder, ++ids));
    read_replies(commands.context(), n, "taking the locks");
    for (const auto& lock : locks) append(listener.context(), {"SUBSCRIBE", lock.channel});
    read_replies(listener.context(), n, "subscribing");

    // Timed: each release followed by the waiter's acquire, all pipelined.
    for (const auto& lock : locks) {
      append(commands.context(), release(config, lock, holder, ++ids, publish_command));
      append(commands.context(), acquire(config, lock, waiter, ++ids));
    }
    const auto calls0 = stats.command_calls();
    const std::int64_t expired0 = stats.info_integer("stats", "expired_keys");
    const double cpu0 = stats.cpu_s();
    const std::int64_t t0 = now_ns();
    read_replies(commands.context(), 2 * n, "releasing and taking again");
    const std::int64_t t1 = now_ns();
    out.server_cpu_s = stats.cpu_s() - cpu0;
    out.commands = command_delta(calls0, stats.command_calls());
    out.expired_keys = stats.info_integer("stats", "expired_keys") - expired0;
    out.seconds = seconds_between(t0, t1);

    // The messages the releases published, then the waiter's releases.
    read_replies(listener.context(), n, "reading the published messages");
    for (const auto& lock : locks) append(commands.context(), release(config, lock, waiter, ++ids, publish_command));
    read_replies(commands.context(), n, "releasing");
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

std::size_t drop_unlock_latches(const warden::Config& config, const std::string& prefix) {
  auto connection = redis_sync::connect(config, std::chrono::seconds(30));
  redisContext* context = connection.context();
  const std::string pattern = keys::unlock_latch(prefix, "") + "*";
  // The name is the hash tag's start: "redisson_unlock_latch:{<prefix>" then anything.
  const std::string match = pattern.substr(0, pattern.find(prefix) + prefix.size()) + "*";
  std::string cursor = "0";
  std::size_t dropped = 0;
  do {
    void* raw = redisCommand(context, "SCAN %s MATCH %s COUNT 10000", cursor.c_str(), match.c_str());
    if (raw == nullptr) throw std::runtime_error(fmt::format("dropping latches: {}", context->errstr));
    std::unique_ptr<redisReply, decltype(&freeReplyObject)> reply(static_cast<redisReply*>(raw), freeReplyObject);
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
      throw std::runtime_error("dropping latches: bad SCAN reply");
    cursor.assign(reply->element[0]->str, reply->element[0]->len);
    const redisReply* found = reply->element[1];
    if (found->elements != 0) {
      std::vector<std::string> command{"UNLINK"};
      for (std::size_t i = 0; i < found->elements; ++i)
        command.emplace_back(found->element[i]->str, found->element[i]->len);
      append(context, command);
      read_replies(context, 1, "dropping latches");
      dropped += found->elements;
    }
  } while (cursor != "0");
  return dropped;
}

namespace {

std::vector<double> measured_seconds(const wake_floors& floors) {
  std::vector<double> seconds;
  for (const auto& run : floors.runs) {
    if (run.error.empty() && run.seconds > 0) seconds.push_back(run.seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds;
}

}  // namespace

double wake_floors::median_s() const {
  const auto seconds = measured_seconds(*this);
  if (seconds.empty()) return 0;
  const std::size_t mid = seconds.size() / 2;
  return seconds.size() % 2 == 1 ? seconds[mid] : (seconds[mid - 1] + seconds[mid]) / 2;
}

double wake_floors::min_s() const {
  const auto seconds = measured_seconds(*this);
  return seconds.empty() ? 0 : seconds.front();
}

std::size_t wake_floors::measured() const { return measured_seconds(*this).size(); }

}  // namespace warden_bench
