// The least-privilege ACL line of docs/production.md (section "ACL"),
// applied as it is printed: with it, every lock kind works — waits woken by
// pub/sub, a fair queue, read-write holds, watchdog renewals, give-ups,
// force-unlocks, named connections — and the server denies nothing
// (ACL LOG stays empty), while a lock outside its key patterns is refused.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "redis_probe.hpp"
#include "test_env.hpp"

namespace warden::test {
namespace {

// The words of the ACL SETUSER line in the docs' code block that follows
// the "acl-line" marker.
std::vector<std::string> documented_acl_line() {
  std::ifstream doc(WARDEN_ACL_DOC);
  if (!doc) throw std::runtime_error("cannot read " WARDEN_ACL_DOC);
  std::string line;
  bool marked = false;
  while (std::getline(doc, line)) {
    if (line.find("<!-- acl-line") != std::string::npos) marked = true;
    if (marked && line.rfind("ACL SETUSER ", 0) == 0) {
      std::istringstream words(line);
      std::vector<std::string> argv;
      for (std::string word; words >> word;) argv.push_back(word);
      return argv;
    }
  }
  throw std::runtime_error("no ACL SETUSER line after an acl-line marker in " WARDEN_ACL_DOC);
}

class Acl : public ::testing::Test {
 public:
  // What the server denied (ACL LOG), one entry per line.
  std::string denials() {
    auto reply = probe.command({"ACL", "LOG"});
    std::string out;
    for (auto& entry : reply.elements) {
      for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
        out += entry.elements[i].str + "=" + entry.elements[i + 1].str + " ";
      }
      out += "\n";
    }
    return out;
  }

 protected:
  void SetUp() override {
    auto argv = documented_acl_line();
    ASSERT_GE(argv.size(), 4u);
    ASSERT_EQ(argv[2], "locks");
    auto reply = probe.command(argv);
    ASSERT_FALSE(reply.is_error()) << reply.str;
    probe.command({"ACL", "LOG", "RESET"});
  }

  Config restricted() {
    Config config = fast_config(server);
    config.username = "locks";
    config.password = "secret";
    config.lock_watchdog_timeout = 600ms;  // renewals every 200 ms
    config.logger = [log = log](log_level level, std::string_view message) {
      if (level < log_level::info) return;
      std::lock_guard<std::mutex> guard(log->mutex);
      log->lines.emplace_back(message);
    };
    return config;
  }

  void exercise(Client& a, Client& b);

  struct Log {
    std::mutex mutex;
    std::vector<std::string> lines;
  };

  RedisServer server;
  RedisProbe probe{server};
  std::shared_ptr<Log> log = std::make_shared<Log>();
};

TEST_F(Acl, TheDocumentedLineIsEnoughForEveryLockKind) {
  Client a{restricted()};
  Client b{restricted()};
  try {
    exercise(a, b);
  } catch (const std::exception& error) {
    ADD_FAILURE() << error.what();
  }
  // Named connections, and nothing denied.
  std::string clients = probe.command({"CLIENT", "LIST"}).str;
  EXPECT_NE(clients.find("name=warden:" + a.id()), std::string::npos) << clients;
  EXPECT_EQ(denials(), "");
  std::lock_guard<std::mutex> guard(log->mutex);
  for (auto& line : log->lines) {
    EXPECT_EQ(line.find("refused"), std::string::npos) << line;
    EXPECT_EQ(line.find("NOPERM"), std::string::npos) << line;
  }
}

// Every lock kind through the restricted user: holds, waits, renewals,
// give-ups, force-unlocks.
void Acl::exercise(Client& a, Client& b) {
  // Lock: a waiter parked on the channel, woken by the release's message.
  Lock lock = a.get_lock("orders:1");
  lock.lock();
  lock.lock();
  std::promise<void> got;
  std::thread waiter([&] {
    Lock theirs = b.get_lock("orders:1");
    theirs.lock();
    got.set_value();
    theirs.unlock();
  });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_lock__channel:{orders:1}") == 1; }));
  EXPECT_EQ(lock.hold_count(), 2);
  EXPECT_TRUE(lock.is_locked());
  // Renewed by the watchdog for a few periods.
  std::this_thread::sleep_for(700ms);
  EXPECT_GT(probe.pttl("orders:1"), 300);
  lock.unlock();
  lock.unlock();
  ASSERT_EQ(got.get_future().wait_for(2s), std::future_status::ready);
  waiter.join();

  // FairLock: a queued waiter woken on its own channel, and one that gives up.
  FairLock fair = a.get_fair_lock("orders:2");
  fair.lock();
  EXPECT_FALSE(b.get_fair_lock("orders:2").try_lock_for(100ms));  // joins the queue, then leaves it
  std::promise<void> fair_got;
  std::thread fair_waiter([&] {
    FairLock theirs = b.get_fair_lock("orders:2");
    theirs.lock();
    fair_got.set_value();
    theirs.unlock();
  });
  ASSERT_TRUE(eventually([&] { return probe.command({"LLEN", "redisson_lock_queue:{orders:2}"}).integer == 1; }));
  fair.unlock();
  ASSERT_EQ(fair_got.get_future().wait_for(2s), std::future_status::ready);
  fair_waiter.join();

  // ReadWriteLock: shared readers, a writer woken when they leave, downgrade.
  ReadWriteLock rw = a.get_read_write_lock("orders:3");
  rw.read_lock().lock();
  std::promise<void> wrote;
  std::thread writer([&] {
    Lock theirs = b.get_read_write_lock("orders:3").write_lock();
    theirs.lock();
    theirs.unlock();
    wrote.set_value();
  });
  ASSERT_TRUE(eventually([&] { return subscribers(probe, "redisson_rwlock:{orders:3}") == 1; }));
  rw.read_lock().unlock();
  ASSERT_EQ(wrote.get_future().wait_for(2s), std::future_status::ready);
  writer.join();
  rw.write_lock().lock();
  rw.read_lock().lock();
  rw.write_lock().unlock();
  rw.read_lock().unlock();

  // A FencedLock's token: its INCR and its key are allowed (DRYRUN answers OK,
  // or says why not).
  EXPECT_EQ(probe.command({"ACL", "DRYRUN", "locks", "INCR", "redisson_lock_token:{orders:4}"}).str, "OK");
  EXPECT_NE(probe.command({"ACL", "DRYRUN", "locks", "INCR", "redisson_lock_token:{invoices:4}"}).str, "OK");

  // Force-unlocks of each kind, with a fixed lease.
  a.get_lock("orders:5").lock(lock_options().with_lease(10s));
  EXPECT_TRUE(b.get_lock("orders:5").force_unlock());
  a.get_fair_lock("orders:6").lock(lock_options().with_lease(10s));
  EXPECT_TRUE(b.get_fair_lock("orders:6").force_unlock());
  a.get_read_write_lock("orders:7").read_lock().lock(lock_options().with_lease(10s));
  EXPECT_TRUE(b.get_read_write_lock("orders:7").read_lock().force_unlock());
}

TEST_F(Acl, ALockOutsideThePatternsIsRefused) {
  Client client{restricted()};
  try {
    client.get_lock("invoices:1").try_lock();
    FAIL() << "a lock outside the user's key patterns was taken";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), errc::server_error) << error.what();
    EXPECT_NE(std::string(error.what()).find("NOPERM"), std::string::npos) << error.what();
  }
  EXPECT_FALSE(probe.exists("invoices:1"));
  EXPECT_NE(denials(), "");
}

}  // namespace
}  // namespace warden::test
