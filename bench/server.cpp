#include "server.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <fmt/format.h>

#include "process.hpp"
#include "redis_sync.hpp"

namespace warden_bench {

namespace {

// The servers the signal handlers must stop: a single server, or the nodes of
// a cluster. An entry is claimed and released by the main thread only; its
// paths are written before its pid is set, and the handlers read them only
// while it is. An atomic of a lock-free type is one of the few things a signal
// handler may read, and fixed buffers let it remove the files with
// async-signal-safe calls only.
struct registration {
  std::atomic<pid_t> pid{0};
  bool claimed = false;
  char dir[PATH_MAX];
  char log[PATH_MAX];
  char nodes_conf[PATH_MAX];  // "" unless a cluster node
};
static_assert(std::atomic<pid_t>::is_always_lock_free);

// Enough for the 3 masters of --cluster and a few more.
constexpr int max_servers = 8;
registration registry[max_servers];

int claim_registration() {
  for (int i = 0; i < max_servers; ++i) {
    if (!registry[i].claimed) {
      registry[i].claimed = true;
      return i;
    }
  }
  throw std::runtime_error(fmt::format("more than {} throw-away redis-servers at once", max_servers));
}

void remove_registered_files(const registration& r) noexcept {
  ::unlink(r.log);
  if (r.nodes_conf[0] != '\0') ::unlink(r.nodes_conf);
  ::rmdir(r.dir);
}

void copy_path(char (&to)[PATH_MAX], const std::string& from) {
  if (from.size() >= PATH_MAX) throw std::runtime_error("temporary path too long");
  std::strcpy(to, from.c_str());
}

// Asks the kernel for a free port by binding to port 0. The socket is closed
// before redis-server binds, so another process may take the port in between;
// start() retries when that happens.
std::uint16_t pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(fmt::format("finding a free port: {}", std::strerror(err)));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Reaps `pid` if it has exited. True when it is gone.
bool reap_if_exited(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

void on_fatal_signal(int sig) {
  for (const registration& r : registry) {
    const pid_t pid = r.pid.load();
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      remove_registered_files(r);
    }
  }
  // Die of the same signal, so the parent shell sees what happened.
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void install_server_cleanup_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void kill_server_now() noexcept {
  // Every server gets its signal before the bench waits for any of them.
  pid_t pids[max_servers] = {};
  for (int i = 0; i < max_servers; ++i) {
    pids[i] = registry[i].pid.exchange(0);
    if (pids[i] > 0) ::kill(pids[i], SIGKILL);
  }
  for (int i = 0; i < max_servers; ++i) {
    if (pids[i] <= 0) continue;
    ::waitpid(pids[i], nullptr, 0);
    remove_registered_files(registry[i]);
  }
}

std::unique_ptr<redis_server> redis_server::start(bool cluster_node, const std::vector<std::string>& extra_args) {
  const auto binary = find_on_path("redis-server");
  if (!binary) throw std::runtime_error("redis-server not found on PATH (or pass --url)");

  std::unique_ptr<redis_server> server{new redis_server};
  char dir_template[] = "/tmp/warden-bench-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) {
    throw std::runtime_error(fmt::format("mkdtemp: {}", std::strerror(errno)));
  }
  server->dir_ = dir_template;
  server->log_path_ = server->dir_ + "/redis-server.log";
  if (cluster_node) server->nodes_conf_path_ = server->dir_ + "/nodes.conf";
  server->registration_ = claim_registration();
  registration& entry = registry[server->registration_];
  copy_path(entry.dir, server->dir_);
  copy_path(entry.log, server->log_path_);
  copy_path(entry.nodes_conf, server->nodes_conf_path_);

  constexpr int attempts = 5;
  std::string last_log;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    const std::uint16_t port = pick_free_port();
    const std::string port_text = std::to_string(port);
    std::uint16_t cluster_port = 0;
    // The kernel hands out ports in turn, so two picks in a row differ; the
    // loop is only a guard.
    while (cluster_node && (cluster_port == 0 || cluster_port == port)) cluster_port = pick_free_port();
    // Everything the child needs is built before fork(): between fork and exec
    // only async-signal-safe calls are allowed.
    std::vector<std::string> args = {
        *binary,        "--port",     port_text,     "--bind", "127.0.0.1", "--save", "",  // no RDB snapshots
        "--appendonly", "no",                               // no AOF either: nothing of a bench run is worth keeping
        "--dir",        server->dir_, "--daemonize", "no",  // stay our child, so the pid we hold is the server's
    };
    if (cluster_node) {
      for (const std::string& a :
           {std::string("--cluster-enabled"), std::string("yes"), std::string("--cluster-config-file"),
            server->nodes_conf_path_, std::string("--cluster-port"), std::to_string(cluster_port)}) {
        args.push_back(a);
      }
    }
    for (const std::string& a : extra_args) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
    if (pid == 0) {
#ifdef __linux__
      // If the bench is SIGKILLed no handler runs; let the kernel stop the
      // server instead. The getppid check closes the race with a parent that
      // died before prctl took effect.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(1);
#endif
      const int log_fd = ::open(server->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (log_fd >= 0) {
        ::dup2(log_fd, STDOUT_FILENO);
        ::dup2(log_fd, STDERR_FILENO);
      }
      if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    (void)parent;
    server->pid_ = pid;
    server->port_ = port;
    server->cluster_port_ = cluster_port;
    entry.pid.store(pid);

    warden::Config probe;
    probe.host = "127.0.0.1";
    probe.port = port;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      if (reap_if_exited(pid)) {
        exited = true;
        break;
      }
      try {
        auto connection = redis_sync::connect(probe, std::chrono::milliseconds(200));
        if (connection.command({"PING"}) == "PONG") return server;
      } catch (const std::exception&) {
        // Not listening yet (or still loading): try again shortly.
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    last_log = read_file(server->log_path_);
    if (exited) {
      server->pid_ = -1;
      entry.pid.store(0);
      // Lost the race for a port: pick others. Any other failure would
      // repeat on every port.
      if (last_log.find("Address already in use") != std::string::npos) continue;
      break;
    }
    server->stop();
    throw std::runtime_error(
        fmt::format("redis-server on port {} did not answer PING within 10 s; its log:\n{}", port, last_log));
  }
  server->stop();
  throw std::runtime_error(fmt::format("redis-server would not start; its log:\n{}", last_log));
}

std::unique_ptr<redis_server> redis_server::start_replica_of(std::uint16_t master_port) {
  const std::string master_port_text = std::to_string(master_port);
  auto replica = start(false, {"--replicaof", "127.0.0.1", master_port_text});
  warden::Config replica_config;
  replica_config.host = "127.0.0.1";
  replica_config.port = replica->port();
  warden::Config master_config = replica_config;
  master_config.port = master_port;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string last_problem = "no answer yet";
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      // The replica's side first: the initial sync is done and the stream of
      // writes flows. Then the master's: a write followed by WAIT 1 comes
      // back acknowledged, which is what the bench's WAITs will ask for.
      auto on_replica = redis_sync::connect(replica_config, std::chrono::seconds(1));
      if (on_replica.command({"INFO", "replication"}).find("master_link_status:up") == std::string::npos) {
        last_problem = "master_link_status is not up";
      } else {
        auto on_master = redis_sync::connect(master_config, std::chrono::seconds(2));
        on_master.command({"SET", "warden-bench:replica-probe", "1", "PX", "1000"});
        if (on_master.command({"WAIT", "1", "1000"}) == "1") return replica;
        last_problem = "WAIT 1 1000 on the master did not count it";
      }
    } catch (const std::exception& e) {
      last_problem = e.what();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string log = read_file(replica->log_path_);
  replica->stop();
  throw std::runtime_error(fmt::format("the replica of 127.0.0.1:{} did not come up within 10 s ({}); its log:\n{}",
                                       master_port, last_problem, log));
}

void redis_server::stop() noexcept {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    bool gone = false;
    while (!(gone = reap_if_exited(pid_)) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!gone) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }
  if (registration_ >= 0) {
    registry[registration_].pid.store(0);
    registry[registration_].claimed = false;
    registration_ = -1;
  }
  if (!dir_.empty()) {
    // Persistence is off, so the log (and a cluster node's nodes.conf) are
    // the only files; dump.rdb is removed in case a server configured
    // elsewhere wrote one on shutdown anyway.
    ::unlink(log_path_.c_str());
    if (!nodes_conf_path_.empty()) ::unlink(nodes_conf_path_.c_str());
    ::unlink((dir_ + "/dump.rdb").c_str());
    ::rmdir(dir_.c_str());
    dir_.clear();
  }
}

}  // namespace warden_bench
