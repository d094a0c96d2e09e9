// Cluster settings: the seeds a URL names, and what validate() says of bad ones.
#include "cluster_fixture.hpp"

namespace warden::test {
namespace {

TEST(ClusterConfig, URLsNameTheSeeds) {
  auto config = Config::from_url("redis+cluster://user:p%40ss@127.0.0.1:7000,localhost:7001,[::1]:7002/");
  ASSERT_EQ(config.cluster.seeds.size(), 3u);
  EXPECT_EQ(config.cluster.seeds[0].host, "127.0.0.1");
  EXPECT_EQ(config.cluster.seeds[0].port, 7000);
  EXPECT_EQ(config.cluster.seeds[1].host, "localhost");
  EXPECT_EQ(config.cluster.seeds[2].host, "::1");
  EXPECT_EQ(config.cluster.seeds[2].port, 7002);
  EXPECT_EQ(config.username, "user");
  EXPECT_EQ(config.password, "p@ss");
  EXPECT_FALSE(config.tls.enabled);
  EXPECT_TRUE(Config::from_url("rediss+cluster://10.0.0.1:6380").tls.enabled);
  EXPECT_EQ(Config::from_url("redis+cluster://h").cluster.seeds.at(0).port, 6379);
  for (const char* bad : {"redis+cluster://", "redis+cluster://a:1,", "redis+cluster://a:1/2", "redis+cluster://a:0"}) {
    try {
      Config::from_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument) << bad;
    }
  }
}

TEST(ClusterConfig, ValidateNamesTheField) {
  auto expect_invalid = [](Config config, const std::string& field) {
    try {
      config.validate();
      ADD_FAILURE() << field << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), errc::invalid_argument);
      EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
    }
  };
  Config config;
  config.cluster.seeds = {endpoint{"127.0.0.1", 7000}};
  config.validate();
  Config db = config;
  db.database = 1;
  expect_invalid(db, "database");
  Config empty_host = config;
  empty_host.cluster.seeds.push_back(endpoint{"", 7001});
  expect_invalid(empty_host, "cluster.seeds[1]");
  Config redirects = config;
  redirects.cluster.max_redirects = 0;
  expect_invalid(redirects, "cluster.max_redirects");
  Config refresh = config;
  refresh.cluster.refresh_interval = 1ms;
  expect_invalid(refresh, "cluster.refresh_interval");
  Config socket = config;
  socket.unix_socket = "/tmp/redis.sock";
  expect_invalid(socket, "unix_socket");
}

}  // namespace
}  // namespace warden::test
