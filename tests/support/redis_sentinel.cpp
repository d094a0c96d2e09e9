#include "redis_sentinel.hpp"

#include <stdexcept>

#include "detail/server_state.hpp"
#include "redis_probe.hpp"

namespace warden::test {
namespace {

using detail::info_field;

// The field `name` of a SENTINEL MASTER reply (a flat list of field, value).
std::string master_field(const ProbeReply& reply, const std::string& name) {
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    if (reply.elements[i].str == name) return reply.elements[i + 1].str;
  }
  return {};
}

}  // namespace

RedisSentinelGroup::RedisSentinelGroup(RedisSentinelOptions options) : options_(std::move(options)) {
  std::vector<std::string> data_args{"--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1"};
  data_args.insert(data_args.end(), options_.extra_args.begin(), options_.extra_args.end());
  master_args_ = data_args;
  nodes_.push_back(std::make_unique<RedisServer>(data_args));
  const std::string master_port = std::to_string(nodes_[0]->port());
  for (std::size_t i = 0; i < options_.replicas; ++i) {
    auto args = data_args;
    args.insert(args.end(), {"--replicaof", "127.0.0.1", master_port});
    if (!nodes_[0]->password().empty()) args.insert(args.end(), {"--masterauth", nodes_[0]->password()});
    nodes_.push_back(std::make_unique<RedisServer>(args));
  }
  for (std::size_t i = 0; i < options_.sentinels; ++i) {
    RedisServerOptions sentinel;
    const auto& name = options_.master_name;
    sentinel.sentinel_config = {
        "sentinel monitor " + name + " 127.0.0.1 " + master_port + " " + std::to_string(options_.quorum),
        "sentinel down-after-milliseconds " + name + " " + std::to_string(options_.down_after.count()),
        "sentinel failover-timeout " + name + " " + std::to_string(options_.failover_timeout.count()),
        "sentinel parallel-syncs " + name + " 1",
    };
    if (!nodes_[0]->password().empty())
      sentinel.sentinel_config.push_back("sentinel auth-pass " + name + " " + nodes_[0]->password());
    if (!options_.sentinel_password.empty()) {
      sentinel.extra_args = {"--requirepass", options_.sentinel_password};
    }
    sentinels_.push_back(std::make_unique<RedisServer>(sentinel));
  }
  wait_until_healthy();
}

std::string RedisSentinelGroup::url() const {
  std::string out = "redis+sentinel://";
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    out += (i == 0 ? "" : ",") + std::string("127.0.0.1:") + std::to_string(sentinels_[i]->port());
  }
  return out + "/" + options_.master_name;
}

void RedisSentinelGroup::restart_as_master(std::size_t index) { nodes_.at(index)->start(master_args_); }

int RedisSentinelGroup::master_index() {
  for (auto& sentinel : sentinels_) {
    if (!sentinel->running()) continue;
    RedisProbe probe(*sentinel);
    auto reply = probe.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
    if (reply.elements.size() != 2) continue;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (std::to_string(nodes_[i]->port()) == reply.elements[1].str) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string RedisSentinelGroup::problem_with_master(std::size_t index, bool with_replicas) {
  const std::string port = std::to_string(nodes_.at(index)->port());
  if (!nodes_[index]->running()) return "node " + std::to_string(index) + " is not running";
  RedisProbe master(*nodes_[index]);
  auto role = master.command({"ROLE"});
  if (role.elements.empty() || role.elements[0].str != "master")
    return "node " + std::to_string(index) + " is no master";
  for (std::size_t s = 0; s < sentinels_.size(); ++s) {
    if (!sentinels_[s]->running()) continue;
    RedisProbe probe(*sentinels_[s]);
    auto named = probe.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
    if (named.elements.size() != 2 || named.elements[1].str != port) {
      return "sentinel " + std::to_string(s) + " does not name node " + std::to_string(index);
    }
  }
  for (std::size_t i = 0; with_replicas && i < nodes_.size(); ++i) {
    if (i == index || !nodes_[i]->running()) continue;
    RedisProbe replica(*nodes_[i]);
    auto info = replica.command({"INFO", "replication"}).str;
    if (info_field(info, "role") != "slave" || info_field(info, "master_port") != port ||
        info_field(info, "master_link_status") != "up") {
      return "node " + std::to_string(i) + " does not replicate node " + std::to_string(index) + " yet";
    }
  }
  return {};
}

void RedisSentinelGroup::wait_for_master(std::size_t index, std::chrono::milliseconds timeout) {
  detail::wait_for([&] { return problem_with_master(index, false); }, timeout, "RedisSentinelGroup",
                   "waiting for node " + std::to_string(index) + " as master");
}

void RedisSentinelGroup::wait_until_healthy(std::chrono::milliseconds timeout) {
  detail::wait_for(
      [&]() -> std::string {
        int master = master_index();
        if (master < 0) return "no sentinel names a master";
        if (auto problem = problem_with_master(static_cast<std::size_t>(master), true); !problem.empty()) {
          return problem;
        }
        std::size_t running_sentinels = 0, running_replicas = 0;
        for (auto& sentinel : sentinels_) running_sentinels += sentinel->running() ? 1 : 0;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
          if (static_cast<int>(i) != master && nodes_[i]->running()) ++running_replicas;
        }
        for (std::size_t s = 0; s < sentinels_.size(); ++s) {
          if (!sentinels_[s]->running()) continue;
          RedisProbe probe(*sentinels_[s]);
          auto state = probe.command({"SENTINEL", "MASTER", options_.master_name});
          if (master_field(state, "num-other-sentinels") != std::to_string(running_sentinels - 1)) {
            return "sentinel " + std::to_string(s) + " knows " + master_field(state, "num-other-sentinels") +
                   " other sentinels";
          }
          if (master_field(state, "num-slaves") != std::to_string(running_replicas)) {
            return "sentinel " + std::to_string(s) + " knows " + master_field(state, "num-slaves") + " replicas";
          }
        }
        return {};
      },
      timeout, "RedisSentinelGroup", "waiting until healthy");
}

}  // namespace warden::test
