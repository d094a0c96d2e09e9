#include "redis_probe.hpp"

#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "detail/process.hpp"
#include "redis_server.hpp"

namespace warden::test {

namespace {

ProbeReply copy_reply(const redisReply& reply) {
  ProbeReply out;
  out.type = reply.type;
  switch (reply.type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.str.assign(reply.str, reply.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.integer = reply.integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.elements.reserve(reply.elements);
      for (std::size_t i = 0; i < reply.elements; ++i) out.elements.push_back(copy_reply(*reply.element[i]));
      break;
    default:
      break;
  }
  return out;
}

std::string describe(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv) {
    if (!text.empty()) text += ' ';
    text += arg;
  }
  return text;
}

}  // namespace

bool ProbeReply::is_nil() const { return type == REDIS_REPLY_NIL; }

bool ProbeReply::is_error() const { return type == REDIS_REPLY_ERROR; }

RedisProbe::RedisProbe(const std::string& host, std::uint16_t port, std::string password)
    : host_(host), port_(port), password_(std::move(password)) {
  connect();
}

RedisProbe::RedisProbe(const RedisServer& server) : RedisProbe(server.host(), server.port(), server.password()) {}

RedisProbe::~RedisProbe() { disconnect(); }

void RedisProbe::connect() {
  disconnect();
  const timeval timeout{2, 0};
  context_ = redisConnectWithTimeout(host_.c_str(), port_, timeout);
  const std::string where = host_ + ":" + std::to_string(port_);
  if (context_ == nullptr) throw std::runtime_error("RedisProbe: cannot allocate a connection to " + where);
  if (context_->err != 0) {
    std::string error = context_->errstr;
    disconnect();
    throw std::runtime_error("RedisProbe: cannot connect to " + where + ": " + error);
  }
  redisSetTimeout(context_, timeout);
  if (!password_.empty()) {
    ProbeReply reply = send({"AUTH", password_});
    if (reply.is_error()) {
      disconnect();
      throw std::runtime_error("RedisProbe: AUTH to " + where + " failed: " + reply.str);
    }
  }
}

void RedisProbe::ensure_connected() {
  if (context_ == nullptr || context_->err != 0) {
    connect();
    return;
  }
  // Between request/reply pairs nothing should be readable. EOF or an error
  // means the server went away since the last command; reconnecting now (no
  // command was in flight) is safe, unlike retrying a failed command.
  char byte;
  ssize_t n = recv(context_->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || n > 0) connect();
}

void RedisProbe::disconnect() noexcept {
  if (context_ != nullptr) {
    redisFree(context_);
    context_ = nullptr;
  }
}

ProbeReply RedisProbe::command(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("RedisProbe::command: empty argv");
  ensure_connected();
  return send(argv);
}

ProbeReply RedisProbe::send(const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const auto& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  redisReply* raw = nullptr;
  {
    detail::SigpipeGuard guard;
    raw = static_cast<redisReply*>(
        redisCommandArgv(context_, static_cast<int>(args.size()), args.data(), lengths.data()));
  }
  if (raw == nullptr) {
    std::string error = context_->errstr;
    disconnect();
    throw std::runtime_error("RedisProbe: " + describe(argv) + " on " + host_ + ":" + std::to_string(port_) +
                             " failed: " + error);
  }
  ProbeReply reply = copy_reply(*raw);
  freeReplyObject(raw);
  return reply;
}

ProbeReply RedisProbe::checked(const std::vector<std::string>& argv) {
  ProbeReply reply = command(argv);
  if (reply.is_error()) throw std::runtime_error("RedisProbe: " + describe(argv) + ": " + reply.str);
  return reply;
}

std::map<std::string, std::string> RedisProbe::hgetall(const std::string& key) {
  ProbeReply reply = checked({"HGETALL", key});
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    fields[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return fields;
}

long long RedisProbe::pttl(const std::string& key) { return checked({"PTTL", key}).integer; }

bool RedisProbe::exists(const std::string& key) { return checked({"EXISTS", key}).integer > 0; }

std::optional<std::string> RedisProbe::get(const std::string& key) {
  ProbeReply reply = checked({"GET", key});
  if (reply.is_nil()) return std::nullopt;
  return reply.str;
}

std::vector<std::string> RedisProbe::keys(const std::string& pattern) {
  ProbeReply reply = checked({"KEYS", pattern});
  std::vector<std::string> names;
  names.reserve(reply.elements.size());
  for (const auto& element : reply.elements) names.push_back(element.str);
  std::sort(names.begin(), names.end());
  return names;
}

long long RedisProbe::command_calls(const std::string& command) {
  std::string name = command;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string prefix = "cmdstat_" + name + ":";
  std::istringstream lines(checked({"INFO", "commandstats"}).str);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    // cmdstat_evalsha:calls=3,usec=120,usec_per_call=40.00,...
    auto at = line.find("calls=", prefix.size());
    if (at == std::string::npos) return 0;
    return std::atoll(line.c_str() + at + 6);
  }
  return 0;
}

}  // namespace warden::test
