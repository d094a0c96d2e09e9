// Config defaults and Config::from_url.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <system_error>

#include <warden/config.hpp>
#include <warden/error.hpp>

namespace {

using namespace std::chrono_literals;
using warden::Config;

TEST(ConfigDefaults, MatchDocumentedValues) {
  Config config;
  EXPECT_EQ(config.host, "127.0.0.1");
  EXPECT_EQ(config.port, 6379);
  EXPECT_EQ(config.username, "");
  EXPECT_EQ(config.password, "");
  EXPECT_EQ(config.database, 0);
  EXPECT_EQ(config.lock_watchdog_timeout, 30s);
  EXPECT_EQ(config.lock_watchdog_batch_size, 100);
  EXPECT_EQ(config.fair_lock_wait_timeout, 300s);
  EXPECT_EQ(config.connect_timeout, 10s);
  EXPECT_EQ(config.command_timeout, 3s);
  EXPECT_EQ(config.retry_attempts, 3);
  EXPECT_EQ(config.retry_backoff_min, 50ms);
  EXPECT_EQ(config.retry_backoff_max, 2s);
  EXPECT_EQ(config.health_check_interval, 5s);
  EXPECT_FALSE(config.logger);
  EXPECT_EQ(config.unix_socket, "");
  EXPECT_FALSE(config.tls.enabled);
  EXPECT_EQ(config.tls.ca_file, "");
  EXPECT_EQ(config.tls.ca_dir, "");
  EXPECT_EQ(config.tls.cert_file, "");
  EXPECT_EQ(config.tls.key_file, "");
  EXPECT_EQ(config.tls.server_name, "");
  EXPECT_TRUE(config.tls.verify_peer);
  EXPECT_EQ(config.tls.min_version, warden::tls_version::tls1_2);
  EXPECT_EQ(config.replica_sync.mode, warden::replica_sync_mode::automatic);
  EXPECT_EQ(config.replica_sync.replicas, 1);
  EXPECT_EQ(config.replica_sync.timeout, 1s);
}

TEST(ConfigFromUrl, HostOnlyKeepsDefaults) {
  Config config = Config::from_url("redis://cache.example.com");
  EXPECT_EQ(config.host, "cache.example.com");
  EXPECT_EQ(config.port, 6379);
  EXPECT_EQ(config.database, 0);
  EXPECT_EQ(config.username, "");
  EXPECT_EQ(config.password, "");
  EXPECT_EQ(config.lock_watchdog_timeout, 30s);
  EXPECT_EQ(config.command_timeout, 3s);
  EXPECT_EQ(config.retry_attempts, 3);
}

TEST(ConfigFromUrl, HostAndPort) {
  Config config = Config::from_url("redis://10.0.0.7:7000");
  EXPECT_EQ(config.host, "10.0.0.7");
  EXPECT_EQ(config.port, 7000);
  EXPECT_EQ(config.database, 0);
}

TEST(ConfigFromUrl, PortBounds) {
  EXPECT_EQ(Config::from_url("redis://h:1").port, 1);
  EXPECT_EQ(Config::from_url("redis://h:65535").port, 65535);
}

TEST(ConfigFromUrl, Database) {
  Config config = Config::from_url("redis://localhost:6380/5");
  EXPECT_EQ(config.host, "localhost");
  EXPECT_EQ(config.port, 6380);
  EXPECT_EQ(config.database, 5);
  EXPECT_EQ(Config::from_url("redis://localhost/12").database, 12);
  EXPECT_EQ(Config::from_url("redis://localhost/12").port, 6379);
}

TEST(ConfigFromUrl, TrailingSlashMeansDatabaseZero) {
  Config config = Config::from_url("redis://localhost/");
  EXPECT_EQ(config.host, "localhost");
  EXPECT_EQ(config.database, 0);
}

TEST(ConfigFromUrl, BarePasswordIsLegacyAuth) {
  Config config = Config::from_url("redis://s3cret@localhost");
  EXPECT_EQ(config.username, "");
  EXPECT_EQ(config.password, "s3cret");
  EXPECT_EQ(config.host, "localhost");
}

TEST(ConfigFromUrl, ColonPasswordIsLegacyAuth) {
  Config config = Config::from_url("redis://:s3cret@localhost:6390");
  EXPECT_EQ(config.username, "");
  EXPECT_EQ(config.password, "s3cret");
  EXPECT_EQ(config.host, "localhost");
  EXPECT_EQ(config.port, 6390);
}

TEST(ConfigFromUrl, UserAndPassword) {
  Config config = Config::from_url("redis://alice:wonder@redis.local:6381/3");
  EXPECT_EQ(config.username, "alice");
  EXPECT_EQ(config.password, "wonder");
  EXPECT_EQ(config.host, "redis.local");
  EXPECT_EQ(config.port, 6381);
  EXPECT_EQ(config.database, 3);
}

TEST(ConfigFromUrl, PercentEscapesInCredentials) {
  Config config = Config::from_url("redis://us%40er:p%3Aa%40ss%2Fw%25d@host");
  EXPECT_EQ(config.username, "us@er");
  EXPECT_EQ(config.password, "p:a@ss/w%d");
  EXPECT_EQ(config.host, "host");
}

TEST(ConfigFromUrl, PercentEscapesAreCaseInsensitiveHex) {
  EXPECT_EQ(Config::from_url("redis://:%2f%2F@host").password, "//");
}

TEST(ConfigFromUrl, UnescapedAtInPasswordSplitsAtLastAt) {
  Config config = Config::from_url("redis://u:p@ss@host");
  EXPECT_EQ(config.username, "u");
  EXPECT_EQ(config.password, "p@ss");
  EXPECT_EQ(config.host, "host");
}

TEST(ConfigFromUrl, Ipv6InBrackets) {
  Config config = Config::from_url("redis://[::1]:6390/2");
  EXPECT_EQ(config.host, "::1");
  EXPECT_EQ(config.port, 6390);
  EXPECT_EQ(config.database, 2);
}

TEST(ConfigFromUrl, Ipv6InBracketsWithoutPort) {
  Config config = Config::from_url("redis://user:pw@[fe80::1:2]");
  EXPECT_EQ(config.host, "fe80::1:2");
  EXPECT_EQ(config.port, 6379);
  EXPECT_EQ(config.username, "user");
  EXPECT_EQ(config.password, "pw");
}

// Asserts that `url` is rejected with errc::invalid_argument and a message
// naming it as `shown` (the URL with its password masked).
void expect_rejected(const std::string& url, std::string shown = {}) {
  if (shown.empty()) shown = url;
  try {
    (void)Config::from_url(url);
    ADD_FAILURE() << "accepted " << url;
  } catch (const warden::Error& error) {
    EXPECT_EQ(error.code(), warden::errc::invalid_argument) << url;
    EXPECT_NE(std::string(error.what()).find(shown), std::string::npos) << error.what();
  } catch (const std::exception& other) {
    ADD_FAILURE() << url << " threw something other than warden::Error: " << other.what();
  }
}

TEST(ConfigFromUrlRejects, WrongScheme) {
  expect_rejected("http://localhost:6379");
  expect_rejected("redis+tls://localhost:6379");
  expect_rejected("unix:/tmp/redis.sock");
  expect_rejected("localhost:6379");
  expect_rejected("redis:/localhost");
  expect_rejected("");
}

TEST(ConfigFromUrlRejects, NoHost) {
  expect_rejected("redis://");
  expect_rejected("redis://:6379");
  expect_rejected("redis:///0");
  expect_rejected("redis://pw@", "redis://***@");
  expect_rejected("redis://[]:6379");
}

TEST(ConfigFromUrlRejects, PortZero) { expect_rejected("redis://localhost:0"); }

TEST(ConfigFromUrlRejects, PortTooLarge) {
  expect_rejected("redis://localhost:70000");
  expect_rejected("redis://localhost:65536");
  expect_rejected("redis://[::1]:70000");
}

TEST(ConfigFromUrlRejects, PortNotANumber) {
  expect_rejected("redis://localhost:abc");
  expect_rejected("redis://localhost:63x9");
  expect_rejected("redis://localhost:-1");
  expect_rejected("redis://localhost:");
  expect_rejected("redis://[::1]:abc");
}

TEST(ConfigFromUrlRejects, BadDatabase) {
  expect_rejected("redis://localhost/abc");
  expect_rejected("redis://localhost/-1");
  expect_rejected("redis://localhost/1x");
  expect_rejected("redis://localhost/1/2");
  expect_rejected("redis://localhost:6379/99999999999");
}

TEST(ConfigFromUrlRejects, BadIpv6Brackets) {
  expect_rejected("redis://[::1");
  expect_rejected("redis://[::1]6379");
}

TEST(ConfigFromUrlRejects, BadPercentEscape) {
  expect_rejected("redis://:pw%@host", "redis://:***@host");
  expect_rejected("redis://:pw%4@host", "redis://:***@host");
  expect_rejected("redis://:pw%zz@host", "redis://:***@host");
}

TEST(ConfigFromUrlRejects, AHostWithAByteNoHostHas) {
  using namespace std::string_literals;
  // A NUL would end the host for the resolver: this must not reach 127.0.0.1.
  const std::string nul = "redis://127.0.0.1\0evil:6379"s;
  expect_rejected(nul, "redis://127.0.0.1\\x00evil:6379");
  try {
    (void)Config::from_url(nul);
  } catch (const warden::Error& error) {
    EXPECT_NE(std::string(error.what()).find("the host contains a NUL byte"), std::string::npos) << error.what();
  }
  expect_rejected("redis://127.0.0.1 evil:6379");
  expect_rejected("redis://127.0.0.1#evil:6379");
  expect_rejected("redis://127.0.0.1?evil:6379");
  expect_rejected("redis://host?db=1");
  expect_rejected("redis://host#fragment");
  expect_rejected("redis://ho\tst:6379", "redis://ho\\x09st:6379");
  expect_rejected("redis://a,b:6379");
  expect_rejected("redis://[::1 ]:6379");
  expect_rejected("redis://[::1\0]:6379"s, "redis://[::1\\x00]:6379");
  expect_rejected("redis+cluster://127.0.0.1:7000,127.0.0.1\0evil:7001"s,
                  "redis+cluster://127.0.0.1:7000,127.0.0.1\\x00evil:7001");
  expect_rejected("redis+sentinel://127.0.0.1 x:26379/mymaster");
  expect_rejected("rediss://user:pw@host#x:6379", "rediss://user:***@host#x:6379");
}

TEST(ConfigFromUrl, SchemesAreCaseInsensitive) {
  Config upper = Config::from_url("REDIS://db.example:6380/2");
  EXPECT_EQ(upper.host, "db.example");
  EXPECT_EQ(upper.port, 6380);
  EXPECT_EQ(upper.database, 2);
  EXPECT_FALSE(upper.tls.enabled);
  EXPECT_TRUE(Config::from_url("Rediss://host").tls.enabled);
  EXPECT_EQ(Config::from_url("UNIX:///tmp/redis.sock").unix_socket, "/tmp/redis.sock");
  Config cluster = Config::from_url("Redis+Cluster://a:7000,b:7001");
  EXPECT_EQ(cluster.cluster.seeds.size(), 2u);
  Config sentinel = Config::from_url("REDISS+SENTINEL://s1/mymaster");
  EXPECT_EQ(sentinel.sentinel.master_name, "mymaster");
  EXPECT_TRUE(sentinel.tls.enabled);
  // The host keeps its case: only the scheme is folded.
  EXPECT_EQ(Config::from_url("REDIS://Db.Example").host, "Db.Example");
  // And the password of a URL with an upper-case scheme is masked as well.
  try {
    (void)Config::from_url("REDIS://user:s3cr3t@host:notaport");
    ADD_FAILURE() << "accepted a bad port";
  } catch (const warden::Error& error) {
    EXPECT_EQ(std::string(error.what()).find("s3cr3t"), std::string::npos) << error.what();
  }
}

TEST(ConfigValidate, RefusesAHostWithAByteNoHostHas) {
  using namespace std::string_literals;
  for (const std::string& host : {"127.0.0.1\0evil"s, "a b"s, "a#b"s, "a?b"s, "a/b"s, "a\nb"s}) {
    Config config;
    config.host = host;
    try {
      config.validate();
      ADD_FAILURE() << "accepted host " << host;
    } catch (const warden::Error& error) {
      EXPECT_EQ(error.code(), warden::errc::invalid_argument);
      EXPECT_NE(std::string(error.what()).find("Config::host"), std::string::npos) << error.what();
    }
  }
  Config seeds;
  seeds.cluster.seeds = {warden::endpoint{"127.0.0.1\0x"s, 7000}};
  EXPECT_THROW(seeds.validate(), warden::Error);
  Config ipv6;
  ipv6.host = "::1";
  EXPECT_NO_THROW(ipv6.validate());
  ipv6.host = "fe80::1%eth0";  // a zone is fine
  EXPECT_NO_THROW(ipv6.validate());
}

TEST(ConfigFromUrlRejects, NeverEchoesThePassword) {
  for (const char* url :
       {"redis://user:s3cr3t@host:notaport", "redis://:s3cr3t%zz@host", "redis://s3cr3t@", "redis://user:s3cr3t@[::1",
        "redis://user:s3cr3t@host/notadb", "rediss://user:s3cr3t@host:0", "http://user:s3cr3t@host",
        "unix://user:s3cr3t@/tmp/r.sock?db=x", "unix://s3cr3t@relative.sock",
        "redis+unix://u:s3cr3t@/tmp/r.sock?password=s3cr3t", "unix:///tmp/r.sock?password=s3cr3t"}) {
    try {
      (void)Config::from_url(url);
      ADD_FAILURE() << "accepted " << url;
    } catch (const warden::Error& error) {
      EXPECT_EQ(std::string(error.what()).find("s3cr3t"), std::string::npos) << error.what();
    }
  }
}

// Each field outside its documented range is refused by name.
TEST(ConfigValidate, RefusesEachFieldOutOfRange) {
  using namespace std::chrono_literals;
  struct Case {
    const char* field;
    void (*spoil)(Config&);
  };
  const Case cases[] = {
      {"port", [](Config& c) { c.port = 0; }},
      {"database", [](Config& c) { c.database = -1; }},
      {"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = 0ms; }},
      {"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = -1s; }},
      {"lock_watchdog_timeout", [](Config& c) { c.lock_watchdog_timeout = std::chrono::milliseconds::max(); }},
      {"lock_watchdog_batch_size", [](Config& c) { c.lock_watchdog_batch_size = 0; }},
      {"lock_watchdog_batch_size", [](Config& c) { c.lock_watchdog_batch_size = 10'001; }},
      {"fair_lock_wait_timeout", [](Config& c) { c.fair_lock_wait_timeout = 0ms; }},
      {"fair_lock_wait_timeout", [](Config& c) { c.fair_lock_wait_timeout = std::chrono::milliseconds::max(); }},
      {"connect_timeout", [](Config& c) { c.connect_timeout = 0ms; }},
      {"connect_timeout", [](Config& c) { c.connect_timeout = std::chrono::milliseconds::max(); }},
      {"command_timeout", [](Config& c) { c.command_timeout = -5ms; }},
      {"command_timeout", [](Config& c) { c.command_timeout = std::chrono::milliseconds::max(); }},
      {"health_check_interval", [](Config& c) { c.health_check_interval = 0ms; }},
      {"health_check_interval", [](Config& c) { c.health_check_interval = -1ms; }},
      {"retry_backoff_min", [](Config& c) { c.retry_backoff_min = -1ms; }},
      {"retry_backoff_max", [](Config& c) { c.retry_backoff_max = -1ms; }},
      {"retry_backoff_min", [](Config& c) { c.retry_backoff_min = 3s, c.retry_backoff_max = 1s; }},
      {"retry_attempts", [](Config& c) { c.retry_attempts = -1; }},
      {"unix_socket", [](Config& c) { c.unix_socket = "relative/redis.sock"; }},
      {"unix_socket", [](Config& c) { c.unix_socket = "/" + std::string(107, 'x'); }},
      {"unix_socket", [](Config& c) { c.unix_socket = std::string("/tmp/a\0b", 8); }},
      {"tls.cert_file", [](Config& c) { c.tls.cert_file = "client.crt"; }},
      {"tls.key_file", [](Config& c) { c.tls.key_file = "client.key"; }},
      {"tls.min_version", [](Config& c) { c.tls.min_version = static_cast<warden::tls_version>(7); }},
      {"replica_sync.mode", [](Config& c) { c.replica_sync.mode = static_cast<warden::replica_sync_mode>(42); }},
      {"replica_sync.replicas",
       [](Config& c) { c.replica_sync.mode = warden::replica_sync_mode::count, c.replica_sync.replicas = 0; }},
      {"replica_sync.replicas",
       [](Config& c) { c.replica_sync.mode = warden::replica_sync_mode::count, c.replica_sync.replicas = 1001; }},
      {"replica_sync.timeout", [](Config& c) { c.replica_sync.timeout = 0ms; }},
  };
  Config{}.validate();
  for (const auto& entry : cases) {
    Config config;
    entry.spoil(config);
    try {
      config.validate();
      ADD_FAILURE() << "accepted a bad " << entry.field;
    } catch (const warden::Error& error) {
      EXPECT_EQ(error.code(), warden::errc::invalid_argument) << error.what();
      EXPECT_NE(std::string(error.what()).find(std::string("Config::") + entry.field), std::string::npos)
          << error.what();
    }
  }
}

TEST(ConfigValidate, AcceptsGoodTlsAndSocketSettings) {
  Config config;
  config.unix_socket = "/" + std::string(106, 'x');  // 107 bytes: the longest that fits
  config.tls.enabled = true;                         // TLS over a unix socket is allowed
  config.tls.cert_file = "client.crt";
  config.tls.key_file = "client.key";
  config.tls.ca_file = "/no/such/ca.crt";  // files are read by the Client, not here
  config.tls.min_version = warden::tls_version::tls1_3;
  config.validate();
}

TEST(ConfigValidate, CertWithoutKeyNamesBothFields) {
  Config config;
  config.tls.cert_file = "client.crt";
  try {
    config.validate();
    FAIL() << "accepted a certificate without a key";
  } catch (const warden::Error& error) {
    EXPECT_EQ(error.code(), warden::errc::invalid_argument);
    EXPECT_NE(std::string(error.what()).find("tls.cert_file"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("tls.key_file"), std::string::npos) << error.what();
  }
}

TEST(ConfigFromUrl, RedissTurnsOnTls) {
  Config config = Config::from_url("rediss://alice:pw@cache.example.com:6380/4");
  EXPECT_TRUE(config.tls.enabled);
  EXPECT_TRUE(config.tls.verify_peer);
  EXPECT_EQ(config.tls.server_name, "");  // empty: the host is checked
  EXPECT_EQ(config.host, "cache.example.com");
  EXPECT_EQ(config.port, 6380);
  EXPECT_EQ(config.database, 4);
  EXPECT_EQ(config.username, "alice");
  EXPECT_EQ(config.password, "pw");
  EXPECT_EQ(config.unix_socket, "");
  EXPECT_EQ(Config::from_url("rediss://[::1]").host, "::1");
  EXPECT_FALSE(Config::from_url("redis://host").tls.enabled);
}

TEST(ConfigFromUrl, UnixSocket) {
  Config config = Config::from_url("unix:///var/run/redis/redis.sock");
  EXPECT_EQ(config.unix_socket, "/var/run/redis/redis.sock");
  EXPECT_EQ(config.database, 0);
  EXPECT_FALSE(config.tls.enabled);
  EXPECT_EQ(config.username, "");
  EXPECT_EQ(config.password, "");
}

TEST(ConfigFromUrl, UnixSocketWithDatabase) {
  EXPECT_EQ(Config::from_url("unix:///tmp/redis.sock?db=2").database, 2);
  Config config = Config::from_url("redis+unix:///tmp/redis.sock?db=7");
  EXPECT_EQ(config.unix_socket, "/tmp/redis.sock");
  EXPECT_EQ(config.database, 7);
  EXPECT_EQ(Config::from_url("redis+unix:///tmp/redis.sock").unix_socket, "/tmp/redis.sock");
}

TEST(ConfigFromUrl, UnixSocketWithCredentials) {
  Config config = Config::from_url("unix://alice:p%40ss@/tmp/redis.sock?db=3");
  EXPECT_EQ(config.username, "alice");
  EXPECT_EQ(config.password, "p@ss");
  EXPECT_EQ(config.unix_socket, "/tmp/redis.sock");
  EXPECT_EQ(config.database, 3);
  Config bare = Config::from_url("redis+unix://secret@/tmp/redis.sock");
  EXPECT_EQ(bare.username, "");
  EXPECT_EQ(bare.password, "secret");
  EXPECT_EQ(bare.unix_socket, "/tmp/redis.sock");
}

TEST(ConfigFromUrl, UnixSocketPathMayHoldEscapesAndAt) {
  EXPECT_EQ(Config::from_url("unix:///tmp/my%20dir/redis.sock").unix_socket, "/tmp/my dir/redis.sock");
  EXPECT_EQ(Config::from_url("unix:///tmp/a@b/redis.sock").unix_socket, "/tmp/a@b/redis.sock");
}

TEST(ConfigFromUrlRejects, BadUnixSocket) {
  expect_rejected("unix://");
  expect_rejected("unix://relative/redis.sock");
  expect_rejected("redis+unix://?db=1");
  expect_rejected("unix:///tmp/redis.sock?db=abc");
  expect_rejected("unix:///tmp/redis.sock?db=-1");
  expect_rejected("unix:///tmp/redis.sock?db=");
  expect_rejected("unix:///tmp/redis.sock?timeout=5");
  expect_rejected("unix:///" + std::string(107, 'x'));
  expect_rejected("unix://user:pw@relative.sock", "unix://user:***@relative.sock");
  expect_rejected("unix:///tmp/r.sock?password=pw", "unix:///tmp/r.sock?password=***");
}

TEST(ConfigFromUrlRejects, ErrorIsASystemErrorInWardenCategory) {
  try {
    (void)Config::from_url("redis://localhost:0");
    FAIL() << "accepted port 0";
  } catch (const std::system_error& error) {
    EXPECT_EQ(error.code().category(), warden::error_category());
    EXPECT_EQ(error.code().value(), static_cast<int>(warden::errc::invalid_argument));
  }
}

}  // namespace
