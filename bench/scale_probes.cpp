#include "scale_probes.hpp"

#include <exception>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include <warden/error.hpp>

#include "cpu_time.hpp"
#include "pacer.hpp"
#include "records.hpp"

namespace warden_bench {

latency_probe::latency_probe(warden::Lock lock, std::chrono::nanoseconds pace, std::size_t capacity)
    : lock_(std::move(lock)), pace_(pace) {
  samples_.reserve(capacity);
  first_error_.reserve(256);
}

void latency_probe::start() {
  stop();
  samples_.clear();
  errors_ = dropped_ = 0;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void latency_probe::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void latency_probe::run() {
  const double cpu_start = warden_bench::thread_cpu_s();
  pacer tick(std::chrono::steady_clock::now(), pace_);
  while (!stopping_.load(std::memory_order_relaxed)) {
    tick.wait();
    const std::int64_t start = now_ns();
    std::error_code error;
    try {
      lock_.lock();
      error = lock_.unlock_checked();
    } catch (const warden::Error& e) {
      error = e.code();
    } catch (const std::exception&) {
      error = std::make_error_code(std::errc::io_error);
    }
    const std::int64_t latency = now_ns() - start;
    if (error) {
      if (errors_++ == 0) first_error_ = error.message();
      continue;
    }
    if (samples_.size() < samples_.capacity()) {
      samples_.push_back({start, latency});
    } else {
      ++dropped_;
    }
  }
  thread_cpu_s_ = warden_bench::thread_cpu_s() - cpu_start;
}

pttl_sampler::pttl_sampler(const warden::Config& server, std::vector<std::string> names,
                           std::chrono::milliseconds every)
    : connection_(redis_sync::connect(server, std::chrono::seconds(10))), names_(std::move(names)), every_(every) {
  error_.reserve(256);
}

void pttl_sampler::start() {
  stop();
  stopping_ = false;
  min_pttl_ms_ = -3;
  rounds_ = missing_ = no_expiry_ = 0;
  thread_ = std::thread([this] { run(); });
}

void pttl_sampler::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void pttl_sampler::run() {
  const double cpu_start = warden_bench::thread_cpu_s();
  redisContext* context = connection_.context();
  pacer tick(std::chrono::steady_clock::now(), every_);
  while (!stopping_.load(std::memory_order_relaxed) && error_.empty()) {
    tick.wait();
    // One write of every PTTL, then the answers: a round costs one round
    // trip, not one per key, and takes a single moment's view of the keys.
    for (const auto& name : names_) {
      const char* argv[] = {"PTTL", name.data()};
      const std::size_t lens[] = {4, name.size()};
      if (redisAppendCommandArgv(context, 2, argv, lens) != REDIS_OK) {
        error_ = fmt::format("PTTL: {}", context->errstr);
        break;
      }
    }
    for (std::size_t i = 0; i < names_.size() && error_.empty(); ++i) {
      void* raw = nullptr;
      if (redisGetReply(context, &raw) != REDIS_OK || raw == nullptr) {
        error_ = fmt::format("PTTL: {}", context->errstr);
        break;
      }
      auto* reply = static_cast<redisReply*>(raw);
      if (reply->type == REDIS_REPLY_INTEGER) {
        const long long v = reply->integer;
        if (v == -2) {
          ++missing_;
        } else if (v == -1) {
          ++no_expiry_;
        } else if (min_pttl_ms_ == -3 || v < min_pttl_ms_) {
          min_pttl_ms_ = v;
        }
      } else {
        error_ = "PTTL: an answer that is not an integer";
      }
      freeReplyObject(reply);
    }
    ++rounds_;
  }
  thread_cpu_s_ = warden_bench::thread_cpu_s() - cpu_start;
}

}  // namespace warden_bench
