#include "topology/eviction_watch.hpp"

#include <fmt/format.h>

namespace warden::detail {
namespace {

// Why a read gave no settings, in words.
std::string refusal_of(const Response& response) {
  if (response.error) return describe_error(response);
  if (response.reply.is_error()) return response.reply.str;
  return "no maxmemory and maxmemory_policy in the answer";
}

}  // namespace

EvictionWatch::EvictionWatch(EventLoop& loop, const ConnectionOptions& options, std::string server)
    : loop_(loop),
      server_(std::move(server)),
      log_(options.log),
      on_eviction_(options.on_eviction),
      guard_(options.eviction_guard, options.health_check_interval),
      interval_(options.health_check_interval) {}

EvictionWatch::~EvictionWatch() { close(); }

void EvictionWatch::close() {
  closed_ = true;
  *alive_ = false;
  if (timer_ != 0) loop_.cancel(timer_);
  timer_ = 0;
}

std::vector<std::string> EvictionWatch::setup_read(const Response* answer) {
  if (closed_) return {};
  return step(setup_asked_, answer);
}

std::vector<std::string> EvictionWatch::step(int& asked, const Response* answer) {
  if (answer == nullptr) {
    asked = 1;
    return {"INFO", "memory"};
  }
  if (closed_) {
    asked = 0;
    return {};
  }
  if (answer->error) {
    // No answer (dropped, timed out, shut down): nothing learnt.
    asked = 0;
    perform(guard_.on(EvictionGuard::read_failed{}));
    return {};
  }
  auto settings = asked == 1 ? memory_settings_from_info(answer->reply) : memory_settings_from_config(answer->reply);
  if (!settings && asked == 1) {
    info_refusal_ = refusal_of(*answer);
    asked = 2;
    return {"CONFIG", "GET", "maxmemory*"};
  }
  asked = 0;
  if (!settings) {
    config_refusal_ = refusal_of(*answer);
    perform(guard_.on(EvictionGuard::read_denied{}));
    return {};
  }
  last_ = *settings;
  perform(guard_.on(EvictionGuard::read{*settings}));
  return {};
}

void EvictionWatch::read_now() {
  timer_ = 0;
  if (closed_ || commands_ == nullptr || poll_asked_ != 0) return;
  send_read(step(poll_asked_, nullptr));
}

// INFO, then (maybe) CONFIG GET, each sent once the previous one is answered.
void EvictionWatch::send_read(std::vector<std::string> argv) {
  if (argv.empty()) return;
  commands_->send(argv, clock::now() + interval_, true, [this, alive = alive_](Response&& response) {
    if (!*alive) return;
    send_read(step(poll_asked_, &response));
  });
}

void EvictionWatch::perform(const EvictionGuard::actions& actions) {
  for (const auto& action : actions) {
    if (std::holds_alternative<EvictionGuard::warn>(action)) {
      bool refusing = std::get<EvictionGuard::warn>(action).refusing;
      EvictionEvent event;
      event.node = server_;
      event.finding = eviction_finding::evictable;
      event.policy = last_.policy;
      event.maxmemory = last_.maxmemory;
      event.refusing = refusing;
      say(refusing ? log_level::error : log_level::warning,
          fmt::format("warden: {} may evict lock keys (maxmemory {} bytes, maxmemory-policy {}): under memory "
                      "pressure it can delete a held lock and let a second owner in; set maxmemory-policy "
                      "noeviction on servers that keep locks. {}",
                      server_, last_.maxmemory, last_.policy,
                      refusing ? "Acquires there are refused (Config::eviction_guard is refuse)"
                               : "Locks work on (Config::eviction_guard is warn)"),
          event);
    } else if (std::holds_alternative<EvictionGuard::report_safe>(action)) {
      EvictionEvent event;
      event.node = server_;
      event.finding = eviction_finding::safe;
      event.policy = last_.policy;
      event.maxmemory = last_.maxmemory;
      say(log_level::info,
          fmt::format("warden: {} no longer evicts lock keys (maxmemory {} bytes, maxmemory-policy {})", server_,
                      last_.maxmemory, last_.policy),
          event);
    } else if (std::holds_alternative<EvictionGuard::report_unreadable>(action)) {
      std::string detail = fmt::format("INFO memory: {}; CONFIG GET maxmemory*: {}", info_refusal_, config_refusal_);
      EvictionEvent event;
      event.node = server_;
      event.finding = eviction_finding::unreadable;
      event.detail = detail;
      say(log_level::warning,
          fmt::format("warden: {}: cannot tell whether the server may evict lock keys ({}); locks work on as if "
                      "it does not. Allow the Client's user +info (see docs/eviction.md), or set "
                      "Config::eviction_guard off",
                      server_, detail),
          event);
    } else if (std::holds_alternative<EvictionGuard::read_again>(action)) {
      if (timer_ != 0) loop_.cancel(timer_);
      timer_ = loop_.after(std::get<EvictionGuard::read_again>(action).after, [this] { read_now(); });
    }
    // refuse and allow change what refusing() answers; nothing to do here.
  }
}

void EvictionWatch::say(log_level level, const std::string& message, const EvictionEvent& event) const {
  if (log_) log_(level, message);
  if (on_eviction_) on_eviction_(event);
}

std::string EvictionWatch::refusal() const {
  return fmt::format(
      "{} may evict lock keys (maxmemory {} bytes, maxmemory-policy {}) and "
      "Config::eviction_guard is refuse",
      server_, last_.maxmemory, last_.policy);
}

}  // namespace warden::detail
