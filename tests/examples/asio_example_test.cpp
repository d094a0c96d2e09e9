// examples/asio/account_server.cpp against a real server: its 8 clients'
// 200 deposits all arrive, and it leaves no lock behind.
#include <gtest/gtest.h>

#include "redis_probe.hpp"
#include "redis_server.hpp"
#include "run_program.hpp"

namespace warden::test {
namespace {

using namespace std::chrono_literals;

TEST(AsioExample, AccountServerLosesNoDepositAndLeavesNoLock) {
  RedisServer server;
  RedisProbe probe(server);
  auto run = run_program(WARDEN_EXAMPLE_ACCOUNT_SERVER, {server.url()}, 60s);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("alice: OK 104, bob: OK 96 after 200 deposits by 8 clients (0 busy, 0 failed)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("no deposit lost"), std::string::npos) << run.out;
  // No lock key: only releases' results (redisson_unlock_latch:..., kept briefly, with a TTL).
  for (auto& key : probe.keys("*")) {
    EXPECT_TRUE(key.rfind("redisson_unlock_latch:", 0) == 0 && probe.pttl(key) > 0) << key;
  }
}

}  // namespace
}  // namespace warden::test
