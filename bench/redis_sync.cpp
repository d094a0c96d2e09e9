#include "redis_sync.hpp"

#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

namespace warden_bench {

namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms.count() / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms.count() % 1000) * 1000);
  return tv;
}

}  // namespace

redis_sync redis_sync::connect(const warden::Config& config, std::chrono::milliseconds timeout) {
  redisContext* context = redisConnectWithTimeout(config.host.c_str(), config.port, to_timeval(timeout));
  if (context == nullptr) {
    throw std::runtime_error(fmt::format("{}:{}: cannot allocate a hiredis context", config.host, config.port));
  }
  if (context->err != 0) {
    std::string message = fmt::format("{}:{}: {}", config.host, config.port, context->errstr);
    redisFree(context);
    throw std::runtime_error(message);
  }
  redis_sync connection{context};
  redisSetTimeout(context, to_timeval(timeout));
  if (!config.password.empty()) {
    if (config.username.empty()) {
      connection.command({"AUTH", config.password});
    } else {
      connection.command({"AUTH", config.username, config.password});
    }
  }
  if (config.database != 0) connection.command({"SELECT", std::to_string(config.database)});
  return connection;
}

redis_sync::redis_sync(redis_sync&& other) noexcept : context_(std::exchange(other.context_, nullptr)) {}

redis_sync& redis_sync::operator=(redis_sync&& other) noexcept {
  if (this != &other) {
    if (context_ != nullptr) redisFree(context_);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

redis_sync::~redis_sync() {
  if (context_ != nullptr) redisFree(context_);
}

std::string redis_sync::command(std::initializer_list<std::string_view> args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> argvlen;
  argv.reserve(args.size());
  argvlen.reserve(args.size());
  for (auto arg : args) {
    argv.push_back(arg.data());
    argvlen.push_back(arg.size());
  }
  auto* reply =
      static_cast<redisReply*>(redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), argvlen.data()));
  if (reply == nullptr) {
    throw std::runtime_error(fmt::format("{}: {}", *args.begin(), context_->errstr));
  }
  std::string text;
  const int type = reply->type;
  if (type == REDIS_REPLY_STRING || type == REDIS_REPLY_STATUS || type == REDIS_REPLY_ERROR) {
    text.assign(reply->str, reply->len);
  } else if (type == REDIS_REPLY_INTEGER) {
    text = std::to_string(reply->integer);
  }
  freeReplyObject(reply);
  if (type == REDIS_REPLY_ERROR) throw std::runtime_error(fmt::format("{}: {}", *args.begin(), text));
  if (type == REDIS_REPLY_ARRAY) {
    throw std::runtime_error(fmt::format("{}: unexpected array reply", *args.begin()));
  }
  return text;
}

}  // namespace warden_bench
