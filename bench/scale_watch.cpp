#include "scale_watch.hpp"

#include <fmt/format.h>

#include "records.hpp"

namespace warden_bench {

namespace {
constexpr std::size_t logged_kept = 5;
}

client_watch::client_watch(std::size_t capacity) { records_.reserve(capacity); }

void client_watch::install(warden::Config& config) {
  auto self = shared_from_this();
  config.observer.on_renewal = [self](const warden::RenewalEvent& e) { self->renewal(e); };
  config.observer.on_hold_lost = [self](const warden::HoldLostEvent& e) { self->lost(e); };
  config.logger = [self](warden::log_level level, std::string_view message) { self->logged(level, message); };
}

void client_watch::renewal(const warden::RenewalEvent& e) {
  const std::int64_t t = now_ns();
  std::lock_guard<std::mutex> guard(mutex_);
  if (e.phase == warden::renewal_phase::sent) ++sent_;
  if (records_.size() == records_.capacity()) {
    ++dropped_;
    return;
  }
  records_.push_back({t, e.phase, static_cast<std::uint32_t>(e.count), static_cast<std::uint32_t>(e.renewed),
                      static_cast<std::uint32_t>(e.gone), e.latency.count()});
}

void client_watch::lost(const warden::HoldLostEvent& e) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (lost_++ == 0) first_lost_ = std::string(e.message);
}

void client_watch::logged(warden::log_level level, std::string_view message) {
  if (level != warden::log_level::warning && level != warden::log_level::error) return;
  const char* tag = level == warden::log_level::error ? "error" : "warning";
  fmt::print(stderr, "warden {}: {}\n", tag, message);
  std::lock_guard<std::mutex> guard(mutex_);
  ++logged_;
  if (first_logged_.size() < logged_kept) first_logged_.push_back(fmt::format("{}: {}", tag, message));
}

std::vector<renewal_record> client_watch::renewals() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return records_;
}

std::vector<std::int64_t> client_watch::sent_between(std::int64_t from_ns, std::int64_t to_ns) const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<std::int64_t> out;
  for (const auto& r : records_) {
    if (r.phase == warden::renewal_phase::sent && r.t_ns >= from_ns && r.t_ns < to_ns) out.push_back(r.t_ns);
  }
  return out;
}

std::uint64_t client_watch::sent_batches() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return sent_;
}

std::uint64_t client_watch::dropped() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return dropped_;
}

std::uint64_t client_watch::holds_lost() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return lost_;
}

std::string client_watch::first_lost() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return first_lost_;
}

std::vector<std::string> client_watch::log_note() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<std::string> out;
  if (logged_ == 0) return out;
  out.push_back(fmt::format("warden logged {} warning(s)/error(s); the first {}:", logged_, first_logged_.size()));
  for (const auto& m : first_logged_) out.push_back(fmt::format("  `{}`", m));
  return out;
}

}  // namespace warden_bench
