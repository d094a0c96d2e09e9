#include "target.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include "redis_sync.hpp"

namespace warden_bench {

namespace {

// The --cluster layout: enough masters that a set of locks is spread, few
// enough that 2 cores can carry them next to the client.
constexpr std::size_t throwaway_masters = 3;

std::string server_version(const warden::Config& config) {
  try {
    auto connection = redis_sync::connect(config, std::chrono::seconds(5));
    const std::string info = connection.command({"INFO", "server"});
    const std::string_view key = "redis_version:";
    const auto at = info.find(key);
    if (at == std::string::npos) return "unknown version";
    const auto end = info.find_first_of("\r\n", at);
    return info.substr(at + key.size(), end - at - key.size());
  } catch (const std::exception& e) {
    return fmt::format("version unknown: {}", e.what());
  }
}

void describe_cluster(bench_target& target) {
  const auto& masters = target.layout->masters();
  std::string list;
  for (std::size_t m = 0; m < masters.size(); ++m) {
    const auto& master = masters[m];
    std::string slots;
    for (const auto& [first, last] : master.slots) {
      slots += fmt::format("{}{}", slots.empty() ? "" : ",",
                           first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last));
    }
    std::string pid;
    if (target.cluster) {
      for (const auto& node : target.cluster->nodes()) {
        if (node->port() == master.port) pid = fmt::format(", pid {}", node->pid());
      }
    }
    list += fmt::format("{}master {} {} (slots {}{})", list.empty() ? "" : "; ", m, master.address(), slots, pid);
  }
  target.description = fmt::format(
      "Redis Cluster of {} masters{} — {}; redis-server {}{}. S1's master (also the plain-hiredis loop's and the "
      "1-connection bound's): master 0, {}",
      masters.size(), target.cluster ? " (no replicas, replica_sync off)" : "", list, server_version(target.home),
      target.cluster ? ", throw-away nodes started by the bench (--cluster)" : ", from --url", target.home_address);
}

void use_cluster(bench_target& target) {
  target.layout = cluster_layout::read(target.client);
  for (const auto& master : target.layout->masters()) {
    target.servers.push_back(node_config(target.client, master.host, master.port));
  }
  target.home = target.servers.front();
  target.home_address = target.layout->masters().front().address();
  describe_cluster(target);
}

}  // namespace

bench_target open_target(const options& opts) {
  bench_target target;
  if (opts.cluster) {
    fmt::print(stderr, "starting a throw-away Redis Cluster of {} masters...\n", throwaway_masters);
    target.cluster = throwaway_cluster::start(throwaway_masters);
    target.client.cluster.seeds = target.cluster->seeds();
    // Its masters have no replicas, so nothing to wait for (WAIT's cost is
    // a replica's round trip, not warden's).
    target.client.replica_sync.mode = warden::replica_sync_mode::off;
    use_cluster(target);
    return target;
  }
  if (opts.url) {
    target.client = warden::Config::from_url(*opts.url);
    if (!target.client.cluster.seeds.empty()) {
      use_cluster(target);
      return target;
    }
  } else {
    fmt::print(stderr, "starting a throw-away redis-server...\n");
    target.server = redis_server::start();
    target.client.host = "127.0.0.1";
    target.client.port = target.server->port();
  }
  target.home = target.client;
  target.servers = {target.home};
  target.home_address = fmt::format("{}:{}", target.home.host, target.home.port);
  const std::string version = server_version(target.home);
  target.description = target.server ? fmt::format("{} (throw-away redis-server {}, pid {})", target.home_address,
                                                   version, target.server->pid())
                                     : fmt::format("{} (--url, redis-server {})", target.home_address, version);
  return target;
}

std::string bench_target::place(const std::string& base, std::size_t index) const {
  if (!layout) return base;
  return layout->name_on(base, index % layout->masters().size());
}

std::string bench_target::publish_command() const {
  if (!layout) return "publish";
  switch (client.cluster.pubsub) {
    case warden::sharded_pubsub::on:
      return "spublish";
    case warden::sharded_pubsub::off:
      return "publish";
    case warden::sharded_pubsub::automatic:
      break;
  }
  // An array answer means the server knows shard channels; an error (an
  // unknown subcommand before Redis 7) that it does not.
  auto connection = redis_sync::connect(home, std::chrono::seconds(5));
  auto* reply = static_cast<redisReply*>(redisCommand(connection.context(), "PUBSUB SHARDNUMSUB"));
  if (reply == nullptr) {
    throw std::runtime_error(fmt::format("PUBSUB SHARDNUMSUB: {}", connection.context()->errstr));
  }
  const bool sharded = reply->type == REDIS_REPLY_ARRAY;
  freeReplyObject(reply);
  return sharded ? "spublish" : "publish";
}

}  // namespace warden_bench
