// examples/metrics.cpp against a real server: its scrape is valid text
// exposition and counts what the program did.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "redis_cluster.hpp"
#include "redis_probe.hpp"
#include "redis_sentinel.hpp"
#include "redis_server.hpp"
#include "run_program.hpp"

namespace warden::test {
namespace {

using namespace std::chrono_literals;

TEST(Examples, MetricsPrintsAPrometheusScrapeOfWhatItDid) {
  RedisServer server;
  auto run = run_program(WARDEN_EXAMPLE_METRICS, {server.url()}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& text = run.out;

  // Every line is a comment (# HELP / # TYPE) or `name{labels} value`.
  const std::regex sample(
      R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? [-+0-9.eE]+(Inf)?$)");
  const std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::istringstream lines(text);
  std::string line;
  int samples = 0;
  while (std::getline(lines, line)) {
    bool ok = std::regex_match(line, sample) || std::regex_match(line, comment);
    EXPECT_TRUE(ok) << "not exposition format: " << line;
    samples += line[0] != '#';
  }
  EXPECT_GT(samples, 20);

  auto has = [&](const std::string& part) { return text.find(part) != std::string::npos; };
  EXPECT_TRUE(has("# TYPE warden_acquire_wait_seconds histogram")) << text;
  // 4 threads x 25 holds, and the watchdog-renewed one.
  EXPECT_TRUE(has("warden_acquire_wait_seconds_count{kind=\"lock\",outcome=\"acquired\"} 101\n")) << text;
  EXPECT_TRUE(has("warden_acquire_wait_seconds_bucket{kind=\"lock\",outcome=\"acquired\",le=\"+Inf\"} 101\n")) << text;
  EXPECT_TRUE(has("warden_acquire_wait_seconds_count{kind=\"lock\",outcome=\"timed_out\"} 1\n")) << text;
  EXPECT_TRUE(has("warden_release_latency_seconds_count{kind=\"lock\",result=\"ok\"} 101\n")) << text;
  const std::string node = "node=\"127.0.0.1:" + std::to_string(server.port()) + "\"";
  EXPECT_TRUE(has("warden_renewal_batches_total{" + node + ",phase=\"confirmed\"}")) << text;
  EXPECT_TRUE(has("warden_connection_up{" + node + ",role=\"command\"} 1\n")) << text;
  EXPECT_TRUE(has("warden_connection_up{" + node + ",role=\"subscriber\"} 1\n")) << text;
}

TEST(Examples, ClusterTakesLocksOnSeveralMastersAndWakesAWaiterThroughAShardChannel) {
  RedisCluster cluster({3, 1, {}});  // replicas: the example's writes wait for them
  auto run = run_program(WARDEN_EXAMPLE_CLUSTER, {cluster.url()}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("held order:1001, order:1002 and order:1003 together"), std::string::npos) << run.out;
  std::smatch waited;
  ASSERT_TRUE(std::regex_search(run.out, waited, std::regex(R"(waited (\d+) ms for invoice:7 and was woken)")))
      << run.out;
  // Woken by the release, not by the lease (30 s) running out.
  EXPECT_LT(std::stoi(waited[1]), 10'000) << run.out;
  EXPECT_NE(run.err.find("waiters use sharded pub/sub"), std::string::npos) << run.err;
  // The three orders really live on more than one master.
  std::set<int> masters;
  for (const char* name : {"order:1001", "order:1002", "order:1003"}) {
    RedisProbe probe(cluster.node(0));
    masters.insert(
        cluster.master_of_slot(static_cast<std::uint16_t>(probe.command({"CLUSTER", "KEYSLOT", name}).integer)));
  }
  EXPECT_GT(masters.size(), 1u);
}

TEST(Examples, CountDownLatchWaitsForThreeWorkersAndIsWokenByTheLast) {
  RedisServer server;
  auto run = run_program(WARDEN_EXAMPLE_COUNT_DOWN_LATCH, {server.url()}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("waiting for 3 workers"), std::string::npos) << run.out;
  std::smatch done;
  ASSERT_TRUE(std::regex_search(run.out, done, std::regex(R"(all 3 workers done after (\d+) ms; count = 0)")))
      << run.out;
  // The last worker counts down after about 150 ms; the wait ends with it.
  EXPECT_LT(std::stoi(done[1]), 5'000) << run.out;
  RedisProbe probe(server);
  EXPECT_FALSE(probe.exists("latch:nightly-batch"));
}

TEST(Examples, SentinelHoldsALockOnTheMasterTheSentinelsName) {
  RedisSentinelOptions options;
  options.sentinel_password = "sentinel-secret";
  RedisSentinelGroup group(options);
  RedisProbe master(group.node(0));
  auto calls_before = master.command_calls("evalsha") + master.command_calls("eval");
  auto run = run_program(WARDEN_EXAMPLE_SENTINEL, {group.url(), "sentinel-secret"}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("holding 'sentinel-example:report' on the master the sentinels name"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("released"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("the sentinels name 127.0.0.1:" + std::to_string(group.node(0).port())), std::string::npos)
      << run.err;
  EXPECT_GE(master.command_calls("evalsha") + master.command_calls("eval"), calls_before + 2);
}

TEST(Examples, SemaphoreKeepsAtMostTwoWorkersInsideAndLeavesItsPermits) {
  RedisServer server;
  auto run = run_program(WARDEN_EXAMPLE_SEMAPHORE, {server.url()}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  auto has = [&](const std::string& part) { return run.out.find(part) != std::string::npos; };
  EXPECT_TRUE(has("at most 2 workers were inside at once")) << run.out;
  EXPECT_TRUE(has("try_acquire_for(200ms) with none free: timed out")) << run.out;
  EXPECT_TRUE(has("release(0): ")) << run.out;
  RedisProbe probe(server);
  EXPECT_EQ(probe.get("semaphore:partner-api"), "2");
}

TEST(Examples, PermitExpirableSemaphoreGetsBackAnExpiredPermitAndADeadHoldersPermit) {
  RedisServer server;
  auto run = run_program(WARDEN_EXAMPLE_PERMIT_EXPIRABLE_SEMAPHORE, {server.url()}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  auto has = [&](const std::string& part) { return run.out.find(part) != std::string::npos; };
  EXPECT_TRUE(has("free: 1, held: 1")) << run.out;
  EXPECT_TRUE(has("a waiter got the expired leased permit: yes")) << run.out;
  EXPECT_TRUE(has("a waiter got the dead worker's permit back: yes")) << run.out;
  EXPECT_TRUE(has("our kept permit after 1.5 s: still ours")) << run.out;
  EXPECT_TRUE(has("release(unknown id): ")) << run.out;
  EXPECT_TRUE(has("free: 2, held: 0")) << run.out;
  EXPECT_EQ(run.err.find("lost"), std::string::npos) << run.err;
  RedisProbe probe(server);
  EXPECT_EQ(probe.get("pes-example:render-slots"), "2");
  EXPECT_EQ(probe.command({"ZCARD", "{pes-example:render-slots}:timeout"}).integer, 0);
}

}  // namespace
}  // namespace warden::test
