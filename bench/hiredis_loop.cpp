#include "hiredis_loop.hpp"

#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include "cpu_time.hpp"
#include "lock/keys.hpp"
#include "pacer.hpp"
#include "records.hpp"
#include "warden_scripts.hpp"

namespace warden_bench {

namespace {

namespace scripts = warden::detail::scripts;
namespace keys = warden::detail::keys;

// warden's request and attempt ids are 32 hex digits (two 64-bit draws).
constexpr std::size_t id_length = 32;

struct reply_deleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

// hiredis 0.14 takes the argument array as non-const (it never writes to it).
reply_ptr send(redisContext* context, std::vector<const char*>& argv, const std::vector<std::size_t>& lens) {
  return reply_ptr(
      static_cast<redisReply*>(redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

std::string describe(const redisReply& reply) {
  switch (reply.type) {
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_INTEGER:
      return fmt::format("integer {}", reply.integer);
    case REDIS_REPLY_STRING:
      return fmt::format("string '{}'", std::string(reply.str, reply.len));
    case REDIS_REPLY_STATUS:
      return fmt::format("status '{}'", std::string(reply.str, reply.len));
    case REDIS_REPLY_ERROR:
      return fmt::format("error '{}'", std::string(reply.str, reply.len));
    case REDIS_REPLY_ARRAY:
      return "an array";
  }
  return fmt::format("a reply of type {}", reply.type);
}

// A version-4 UUID text, the shape of warden's client id.
std::string random_uuid(std::mt19937_64& random) {
  const std::uint64_t hi = random();
  const std::uint64_t lo = random();
  const std::string hex = fmt::format("{:016x}{:016x}", (hi & ~0xf000ull) | 0x4000ull,
                                      (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull);
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4),
                     hex.substr(20));
}

void point_at(const std::vector<std::string>& args, std::vector<const char*>& argv, std::vector<std::size_t>& lens) {
  argv.clear();
  lens.clear();
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
}

}  // namespace

hiredis_loop::hiredis_loop(const warden::Config& config, std::string lock_name, std::string publish_command)
    : connection_(redis_sync::connect(config, std::chrono::seconds(5))), random_(std::random_device{}()) {
  for (const warden::detail::Script* script : {&scripts::lock_acquire, &scripts::lock_release}) {
    const std::string sha = connection_.command({"SCRIPT", "LOAD", script->body});
    if (sha != script->sha1) {
      throw std::runtime_error(fmt::format("SCRIPT LOAD of {}: the server names it {}, warden sends EVALSHA {}",
                                           script->name, sha, script->sha1));
    }
  }

  // The layouts LockCore::acquire_call (plus the attempt's cancel mark) and
  // LockCore::release_call build, with the values a Client on `config` sends
  // for a lock taken without a lease: the watchdog lease, and a latch kept
  // for every resend of the release.
  const std::string owner = random_uuid(random_) + ":1";
  const std::string lease = std::to_string(config.lock_watchdog_timeout.count());
  const std::string latch_ttl = std::to_string((config.command_timeout * (config.retry_attempts + 2)).count());
  const std::string placeholder(id_length, '0');
  acquire_args_ = {
      "EVALSHA", scripts::lock_acquire.sha1, "2", lock_name, keys::acquire_cancel(lock_name, placeholder), lease,
      owner};
  release_args_ = {"EVALSHA",
                   scripts::lock_release.sha1,
                   "3",
                   lock_name,
                   keys::lock_channel(lock_name),
                   keys::unlock_latch(lock_name, placeholder),
                   lease,
                   owner,
                   publish_command,
                   "0",
                   latch_ttl};
  point_at(acquire_args_, acquire_argv_, acquire_lens_);
  point_at(release_args_, release_argv_, release_lens_);

  for (int i = 0; i < 200; ++i) {
    if (auto problem = pair(); !problem.empty()) throw std::runtime_error(problem);
  }
}

void hiredis_loop::wait_after_writes(int replicas, std::chrono::milliseconds timeout) {
  wait_replicas_ = replicas;
  wait_args_ = {"WAIT", std::to_string(replicas), std::to_string(timeout.count())};
  point_at(wait_args_, wait_argv_, wait_lens_);
}

std::string hiredis_loop::wait_for_replicas(const char* after) {
  if (wait_replicas_ <= 0) return {};
  redisContext* context = connection_.context();
  reply_ptr waited = send(context, wait_argv_, wait_lens_);
  if (!waited) return fmt::format("WAIT after {}: {}", after, context->errstr);
  if (waited->type != REDIS_REPLY_INTEGER || waited->integer < wait_replicas_) {
    return fmt::format("WAIT after {} answered {}, not {} (replicas acknowledged)", after, describe(*waited),
                       wait_replicas_);
  }
  return {};
}

void hiredis_loop::fresh_id(std::string& key) {
  static constexpr char digits[] = "0123456789abcdef";
  char* at = key.data() + key.size() - id_length;
  for (int half = 0; half < 2; ++half) {
    std::uint64_t bits = random_();
    for (int i = 0; i < 16; ++i, bits >>= 4) *at++ = digits[bits & 0xf];
  }
}

std::string hiredis_loop::pair() {
  redisContext* context = connection_.context();
  fresh_id(acquire_args_[4]);
  reply_ptr acquired = send(context, acquire_argv_, acquire_lens_);
  if (!acquired) return fmt::format("acquire: {}", context->errstr);
  if (acquired->type != REDIS_REPLY_NIL) {
    return fmt::format("acquire of {} answered {}, not nil (taken)", acquire_args_[3], describe(*acquired));
  }
  if (auto problem = wait_for_replicas("the acquire"); !problem.empty()) return problem;
  fresh_id(release_args_[5]);
  reply_ptr released = send(context, release_argv_, release_lens_);
  if (!released) return fmt::format("release: {}", context->errstr);
  if (released->type != REDIS_REPLY_INTEGER || released->integer != 1) {
    return fmt::format("release of {} answered {}, not 1 (released)", release_args_[3], describe(*released));
  }
  return wait_for_replicas("the release");
}

distribution hiredis_loop::ping_round_trip(unsigned samples) {
  std::vector<std::int64_t> times;
  times.reserve(samples);
  for (unsigned i = 0; i < 100; ++i) connection_.command({"PING"});
  for (unsigned i = 0; i < samples; ++i) {
    const std::int64_t start = now_ns();
    connection_.command({"PING"});
    times.push_back(now_ns() - start);
  }
  return summarize(std::move(times));
}

loop_result hiredis_loop::run(std::chrono::duration<double> duration, std::chrono::nanoseconds pace,
                              const std::function<double()>& server_cpu_s, std::vector<std::int64_t>* samples) {
  loop_result result;
  result.ran = true;
  result.paced = pace > std::chrono::nanoseconds::zero();
  const auto window = std::chrono::duration_cast<std::chrono::nanoseconds>(duration);
  std::vector<std::int64_t> latencies;
  // Room for the whole window up front, so no reallocation lands in it.
  latencies.reserve(result.paced ? static_cast<std::size_t>(window / pace) + 16 : std::size_t{1} << 20);

  auto server_cpu = [&] { return server_cpu_s ? server_cpu_s() : -1.0; };
  const double server_start = server_cpu();
  const double process_start = process_cpu_s();
  const auto switches_start = process_switches();
  const double thread_start = thread_cpu_s();
  const std::int64_t t_start = now_ns();
  const std::int64_t t_end = t_start + window.count();
  std::optional<pacer> ticks;
  if (result.paced) ticks.emplace(pacer::clock::time_point(std::chrono::nanoseconds(t_start)), pace);
  std::string problem;
  for (;;) {
    if (ticks) ticks->wait();
    const std::int64_t begin = now_ns();
    if (begin >= t_end) break;
    try {
      problem = pair();
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) break;
    latencies.push_back(now_ns() - begin);
  }
  const std::int64_t t_stop = now_ns();
  const double thread_stop = thread_cpu_s();
  const double process_stop = process_cpu_s();
  const auto switches_stop = process_switches();
  const double server_stop = server_cpu();

  result.ok = problem.empty();
  result.error = std::move(problem);
  result.window_s = static_cast<double>(t_stop - t_start) / 1e9;
  result.pairs = latencies.size();
  result.pairs_per_s = result.window_s > 0 ? static_cast<double>(result.pairs) / result.window_s : 0;
  result.skipped_ticks = ticks ? ticks->skipped() : 0;
  if (samples != nullptr) samples->insert(samples->end(), latencies.begin(), latencies.end());
  result.pair_latency = summarize(std::move(latencies));
  if (process_start >= 0 && process_stop >= 0) result.client_cpu_s = process_stop - process_start;
  if (thread_start >= 0 && thread_stop >= 0) result.loop_thread_cpu_s = thread_stop - thread_start;
  result.client_switches = switches_stop - switches_start;
  if (server_start >= 0 && server_stop >= 0) result.server_cpu_s = server_stop - server_start;
  return result;
}

}  // namespace warden_bench
