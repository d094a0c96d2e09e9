#include "inspect/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <memory>
#include <sstream>

#include <warden/error.hpp>

#include "api/access.hpp"
#include "client/client_core.hpp"
#include "topology/node.hpp"

namespace warden::inspect {
namespace {

Config config_for(const Options& options) {
  Config config = Config::from_url(options.url);
  config.connect_timeout = options.timeout;
  config.command_timeout = options.timeout;
  config.retry_attempts = 1;
  // The inspector takes no lock, so whether the server may evict lock keys is
  // not its question; and reading it would need an ACL grant (+info) that the
  // ACL line of --help does not ask for.
  config.eviction_guard = eviction_guard_mode::off;
  return config;
}

// A refused command stops the inspection: what it would show could be wrong.
const detail::Reply& checked(const detail::Reply& reply, const std::string& command) {
  if (reply.is_error()) throw Error(errc::server_error, fmt::format("the server refused {}: {}", command, reply.str));
  return reply;
}

std::vector<std::string> strings_of(const detail::Reply& reply) {
  std::vector<std::string> out;
  for (auto& element : reply.elements) out.push_back(element.str);
  return out;
}

long long number_of(const std::string& text) {
  try {
    return static_cast<long long>(std::stod(text));
  } catch (const std::exception&) {
    return 0;
  }
}

// client id -> "addr[, addr...]" of connections named "warden:<client id>".
std::map<std::string, std::string> warden_clients(const std::string& client_list) {
  std::map<std::string, std::string> out;
  std::istringstream lines(client_list);
  std::string line;
  while (std::getline(lines, line)) {
    std::string addr, name;
    std::istringstream fields(line);
    std::string field;
    while (fields >> field) {
      if (field.rfind("addr=", 0) == 0) addr = field.substr(5);
      if (field.rfind("name=warden:", 0) == 0) name = field.substr(12);
    }
    if (name.empty() || addr.empty()) continue;
    auto& entry = out[name];
    entry += (entry.empty() ? "" : ", ") + addr;
  }
  return out;
}

}  // namespace

Session::Session(const Options& options) : client_(config_for(options)) {}

std::vector<detail::Reply> Session::run(std::vector<std::vector<std::string>> commands, const std::string& route_key) {
  auto& core = detail::access::core(client_);
  struct Batch {
    std::vector<detail::Response> responses;
    std::size_t left = 0;
    std::promise<void> done;
  };
  auto batch = std::make_shared<Batch>();
  batch->responses.resize(commands.size());
  batch->left = commands.size();
  auto finished = batch->done.get_future();
  if (commands.empty()) return {};
  auto deadline = detail::clock::now() + client_.config().command_timeout;
  bool posted = core->post([core, batch, commands = std::move(commands), deadline, route_key]() mutable {
    auto node = core->router().node_for(route_key);
    if (!node) {
      detail::Response none{make_error_code(errc::routing_failed), {}};
      none.detail = "no node is known to serve " + core->topology().describe(route_key);
      for (auto& response : batch->responses) response = none;
      return batch->done.set_value();
    }
    for (std::size_t i = 0; i < commands.size(); ++i) {
      // Not resent after a drop: a MULTI/EXEC must not be split.
      node->send(std::move(commands[i]), deadline, false, [batch, i](detail::Response&& response) {
        batch->responses[i] = std::move(response);
        if (--batch->left == 0) batch->done.set_value();
      });
    }
  });
  if (!posted) throw Error(errc::shut_down, "warden-inspect: the client shut down");
  finished.wait();
  std::vector<detail::Reply> replies;
  for (auto& response : batch->responses) {
    if (response.error) throw Error(response.error, detail::describe_error(response));
    replies.push_back(std::move(response.reply));
  }
  return replies;
}

LockState Session::read(const std::string& name) {
  auto keys = keys_of(name);
  auto replies = run(
      {
          {"MULTI"},
          {"TYPE", name},
          {"HGETALL", name},
          {"PTTL", name},
          {"LRANGE", keys.queue, "0", "-1"},
          {"ZRANGE", keys.deadlines, "0", "-1", "WITHSCORES"},
          {"GET", keys.token},
          {"TIME"},
          {"GET", name},
          {"EXEC"},
      },
      name);
  const auto& exec = checked(replies.back(), "MULTI/EXEC");
  if (exec.elements.size() != 8) throw Error(errc::protocol_error, "warden-inspect: unexpected MULTI/EXEC reply");
  const auto& got = exec.elements;
  RawLock raw;
  raw.type = checked(got[0], "TYPE").str;
  // HGETALL of a key that is not a hash is an error reply: no fields. So are
  // the queue and deadlines of a name whose such keys are of another type.
  if (raw.type == "hash") {
    auto flat = strings_of(checked(got[1], "HGETALL"));
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) raw.fields.emplace_back(flat[i], flat[i + 1]);
  }
  raw.pttl = checked(got[2], "PTTL").integer;
  if (!got[3].is_error()) raw.queue = strings_of(got[3]);
  if (!got[4].is_error()) {
    auto flat = strings_of(got[4]);
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) raw.deadlines[flat[i]] = number_of(flat[i + 1]);
  }
  if (!got[5].is_error() && got[5].type == detail::Reply::kind::string) raw.token = got[5].str;
  const auto& time = checked(got[6], "TIME");
  if (time.elements.size() == 2) {
    raw.now_ms = number_of(time.elements[0].str) * 1000 + number_of(time.elements[1].str) / 1000;
  }
  // GET of a key that is not a string is an error reply: no value.
  if (raw.type == "string" && got[7].type == detail::Reply::kind::string) raw.value = got[7].str;
  // A permit-expirable semaphore's permits: {NAME}:timeout, or NAME:timeout
  // for a name with '{' (Redisson's suffixName), which on a cluster may hash
  // to another slot than NAME: read on its own, routed by itself.
  auto permits = run({{"TYPE", keys.permit_timeouts}, {"ZRANGE", keys.permit_timeouts, "0", "-1", "WITHSCORES"}},
                     keys.permit_timeouts);
  raw.permits_type = checked(permits[0], "TYPE").str;
  if (raw.permits_type == "zset" && !permits[1].is_error()) {
    auto flat = strings_of(permits[1]);
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) raw.permits.emplace_back(flat[i], number_of(flat[i + 1]));
  }

  std::vector<std::vector<std::string>> second;
  auto hold_keys = read_hold_keys(name, raw);
  for (auto& key : hold_keys) second.push_back({"PTTL", key});
  std::vector<std::string> numsub{"PUBSUB", "NUMSUB"};
  for (auto& channel : channels_to_count(name, raw)) numsub.push_back(channel);
  second.push_back(numsub);
  second.push_back({"CLIENT", "LIST"});
  auto answers = run(std::move(second), name);
  for (std::size_t i = 0; i < hold_keys.size(); ++i) {
    raw.read_hold_ttls[hold_keys[i]] = checked(answers[i], "PTTL").integer;
  }
  const auto& counts = checked(answers[hold_keys.size()], "PUBSUB NUMSUB");
  for (std::size_t i = 0; i + 1 < counts.elements.size(); i += 2) {
    raw.subscribers[counts.elements[i].str] = counts.elements[i + 1].integer;
  }
  // CLIENT LIST may be refused (an ACL user without it): addresses are then unknown.
  if (!answers.back().is_error()) raw.client_addresses = warden_clients(answers.back().str);
  return interpret(name, raw);
}

std::vector<LockState> Session::scan(const std::string& pattern) {
  std::vector<std::string> names;
  std::string cursor = "0";
  bool typed = true;  // SCAN ... TYPE hash needs Redis 6; older servers get every key
  do {
    std::vector<std::string> command{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
    if (typed) {
      command.push_back("TYPE");
      command.push_back("hash");
    }
    auto reply = run({command}).front();
    if (reply.is_error() && typed) {
      typed = false;
      cursor = "0";
      names.clear();
      continue;
    }
    checked(reply, "SCAN");
    if (reply.elements.size() != 2) throw Error(errc::protocol_error, "warden-inspect: unexpected SCAN reply");
    cursor = reply.elements[0].str;
    for (auto& name : strings_of(reply.elements[1])) names.push_back(name);
  } while (cursor != "0");
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<LockState> locks;
  for (auto& name : names) {
    auto state = read(name);
    if (state.held() && state.kind != "not a lock") locks.push_back(std::move(state));
  }
  return locks;
}

bool Session::force_unlock(const LockState& state) {
  if (state.kind == "fair") return client_.get_fair_lock(state.name).force_unlock();
  if (state.kind == "rw") {
    auto rw = client_.get_read_write_lock(state.name);
    return state.mode == "write" ? rw.write_lock().force_unlock() : rw.read_lock().force_unlock();
  }
  if (state.kind == "lock" || state.kind == "fenced") return client_.get_lock(state.name).force_unlock();
  return false;
}

}  // namespace warden::inspect
