#include "redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "detail/process.hpp"

namespace warden::test {

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr auto ready_timeout = 10s;
constexpr auto stop_grace = 5s;
// How many fresh ports the constructor tries when redis-server exits at once,
// which almost always means another process took the port in between.
constexpr int port_attempts = 5;

// Lets the kernel choose a port nobody is bound to. It is released again
// before redis-server binds it, so a collision is possible (and retried).
std::uint16_t pick_free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    int error = errno;
    close(fd);
    throw std::system_error(error, std::generic_category(), "picking a free port");
  }
  close(fd);
  return ntohs(address.sin_port);
}

std::string make_temp_directory(std::string parent) {
  if (parent.empty()) {
    const char* base = std::getenv("TMPDIR");
    parent = base != nullptr && *base != '\0' ? base : "/tmp";
  }
  std::string pattern = parent + "/warden-redis-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  }
  return buffer.data();
}

std::string read_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

struct context_deleter {
  void operator()(redisContext* context) const { redisFree(context); }
};
using context_ptr = std::unique_ptr<redisContext, context_deleter>;

struct reply_deleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using reply_ptr = std::unique_ptr<redisReply, reply_deleter>;

reply_ptr run(redisContext* context, std::initializer_list<std::string> args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> lengths;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  detail::SigpipeGuard guard;
  return reply_ptr(
      static_cast<redisReply*>(redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
}

// The value following "--requirepass", else empty.
std::string password_in(const std::vector<std::string>& args) {
  std::string password;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--requirepass") password = args[i + 1];
  }
  return password;
}

}  // namespace

RedisServer::RedisServer(std::vector<std::string> extra_args)
    : RedisServer(RedisServerOptions{std::move(extra_args), std::nullopt, false, false, {}, {}}) {}

RedisServer::RedisServer(RedisServerOptions options)
    : extra_args_(std::move(options.extra_args)),
      tls_(std::move(options.tls)),
      cluster_(options.cluster),
      sentinel_(!options.sentinel_config.empty()),
      executable_(detail::resolve_program("redis-server", "/usr/bin/redis-server")) {
  password_ = password_in(extra_args_);
  directory_ = make_temp_directory(options.parent_directory);
  if (sentinel_) {
    std::ofstream config(directory_ + "/sentinel.conf");
    for (const auto& line : options.sentinel_config) config << line << "\n";
    if (!config) throw std::runtime_error("RedisServer: cannot write " + directory_ + "/sentinel.conf");
  }
  if (options.unix_socket) {
    unix_socket_ = directory_ + "/redis.sock";
    // sockaddr_un::sun_path holds 108 bytes with the terminating NUL.
    if (unix_socket_.size() > 107) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
      throw std::runtime_error("RedisServer: unix socket path too long (shorten TMPDIR): " + unix_socket_);
    }
  }
  start_first_time();
}

void RedisServer::start_first_time() {
  try {
    std::string why;
    for (int attempt = 0; attempt < port_attempts; ++attempt) {
      port_ = pick_free_port();
      if (tls_) {
        do tls_port_ = pick_free_port();
        while (tls_port_ == port_);
      }
      if (cluster_) {
        // Not port + 10000, redis-server's default: that may be past 65535 or taken.
        do cluster_port_ = pick_free_port();
        while (cluster_port_ == port_ || cluster_port_ == tls_port_);
      }
      spawn_server();
      switch (wait_until_ready(clock_type::now() + ready_timeout, &why)) {
        case readiness::ready:
          return;
        case readiness::exited:
          continue;  // most likely a port was taken meanwhile: pick others
        case readiness::timed_out:
          stop();
          throw std::runtime_error("redis-server on port " + std::to_string(port_) + " did not answer within 10 s\n" +
                                   log_tail());
      }
    }
    throw std::runtime_error("redis-server could not be started (" + why + ")\n" + log_tail());
  } catch (...) {
    // The destructor does not run for a throwing constructor.
    kill();
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    throw;
  }
}

RedisServer::~RedisServer() {
  try {
    stop();
  } catch (...) {
    // A destructor must not throw; a leftover process dies with its parent.
  }
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

std::string RedisServer::host() const { return "127.0.0.1"; }

std::uint16_t RedisServer::port() const { return port_; }

std::string RedisServer::url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

std::uint16_t RedisServer::tls_port() const { return tls_port_; }

std::uint16_t RedisServer::cluster_port() const { return cluster_port_; }

std::string RedisServer::tls_url() const {
  return tls_ ? "rediss://127.0.0.1:" + std::to_string(tls_port_) : std::string();
}

const std::string& RedisServer::unix_socket() const { return unix_socket_; }

std::string RedisServer::unix_url() const { return unix_socket_.empty() ? std::string() : "unix://" + unix_socket_; }

pid_t RedisServer::pid() const { return running() ? pid_.load() : -1; }

bool RedisServer::running() const {
  pid_t pid = pid_.load();
  if (pid == -1) return false;
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  if (r == 0) return true;
  // It exited by itself (or was reaped by a concurrent stop()).
  pid_t expected = pid;
  pid_.compare_exchange_strong(expected, -1);
  return false;
}

const std::string& RedisServer::password() const { return password_; }

const std::string& RedisServer::directory() const { return directory_; }

void RedisServer::kill() {
  pid_t pid = pid_.load();
  if (pid == -1) return;
  ::kill(pid, SIGKILL);
  detail::wait_blocking(pid);
  pid_.store(-1);
}

void RedisServer::stop() {
  pid_t pid = pid_.load();
  if (pid == -1) return;
  // A stopped process leaves SIGTERM pending until it is continued.
  ::kill(pid, SIGCONT);
  ::kill(pid, SIGTERM);
  if (!detail::wait_with_timeout(pid, stop_grace, nullptr)) {
    ::kill(pid, SIGKILL);
    detail::wait_blocking(pid);
  }
  pid_.store(-1);
}

void RedisServer::start(std::vector<std::string> extra_args) {
  if (running()) return;
  extra_args_ = std::move(extra_args);
  password_ = password_in(extra_args_);
  start();
}

void RedisServer::start() {
  if (running()) return;
  const auto deadline = clock_type::now() + ready_timeout;
  std::string why;
  for (;;) {
    spawn_server();
    switch (wait_until_ready(deadline, &why)) {
      case readiness::ready:
        return;
      case readiness::exited:
        // The port is still held (a lingering socket or another process):
        // the port must stay the same, so wait and try again.
        if (clock_type::now() + 100ms < deadline) {
          std::this_thread::sleep_for(100ms);
          continue;
        }
        throw std::runtime_error("redis-server could not be restarted on port " + std::to_string(port_) + " (" + why +
                                 ")\n" + log_tail());
      case readiness::timed_out:
        stop();
        throw std::runtime_error("restarted redis-server on port " + std::to_string(port_) +
                                 " did not answer within 10 s\n" + log_tail());
    }
  }
}

void RedisServer::pause() {
  pid_t pid = pid_.load();
  if (pid == -1) throw std::logic_error("RedisServer::pause: the server is not running");
  ::kill(pid, SIGSTOP);
  // SIGSTOP takes effect asynchronously; WUNTRACED reports the moment it has,
  // so the caller knows the server is frozen when pause() returns.
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WUNTRACED);
    if (r < 0 && errno == EINTR) continue;
    if (r == pid && (WIFEXITED(status) || WIFSIGNALED(status))) pid_.store(-1);
    return;
  }
}

void RedisServer::resume() {
  pid_t pid = pid_.load();
  if (pid == -1) throw std::logic_error("RedisServer::resume: the server is not running");
  // The kernel resumes a stopped process while handling kill(), so there is
  // nothing to wait for.
  ::kill(pid, SIGCONT);
}

std::vector<std::string> RedisServer::command_line() const {
  if (sentinel_) {
    std::vector<std::string> args{
        executable_,
        directory_ + "/sentinel.conf",
        "--sentinel",
        "--port",
        std::to_string(port_),
        "--bind",
        "127.0.0.1",
        "--daemonize",
        "no",
        "--dir",
        directory_,
        "--logfile",
        directory_ + "/redis.log",
    };
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    return args;
  }
  std::vector<std::string> args{
      executable_,
      "--port",
      std::to_string(port_),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--daemonize",
      "no",
      "--dir",
      directory_,
      "--logfile",
      directory_ + "/redis.log",
      "--enable-debug-command",
      "local",
  };
  if (tls_) {
    args.insert(args.end(), {
                                "--tls-port",
                                std::to_string(tls_port_),
                                "--tls-cert-file",
                                tls_->cert_file,
                                "--tls-key-file",
                                tls_->key_file,
                                "--tls-ca-cert-file",
                                tls_->ca_file,
                                "--tls-auth-clients",
                                tls_->auth_clients ? "yes" : "no",
                            });
  }
  if (!unix_socket_.empty()) {
    args.insert(args.end(), {"--unixsocket", unix_socket_, "--unixsocketperm", "700"});
  }
  if (cluster_) {
    args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-port", std::to_string(cluster_port_),
                             "--cluster-config-file", "nodes.conf"});
  }
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  return args;
}

void RedisServer::spawn_server() {
  // redis-server's own output (early config errors) goes to a file rather
  // than the test's stdout: a server outliving a crashed test must not hold
  // ctest's output pipe open.
  const std::string output_path = directory_ + "/stdout.log";
  int output = open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (output < 0) throw std::system_error(errno, std::generic_category(), "open " + output_path);
  try {
    pid_.store(detail::spawn(executable_, command_line(), output));
  } catch (...) {
    close(output);
    throw;
  }
  close(output);
}

RedisServer::readiness RedisServer::wait_until_ready(clock_type::time_point deadline, std::string* why) {
  const pid_t pid = pid_.load();
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      pid_.store(-1);
      *why = "redis-server exited with code " + std::to_string(detail::exit_code_from_status(status));
      return readiness::exited;
    }
    if (answers_as_this_process(pid)) return readiness::ready;
    if (clock_type::now() >= deadline) {
      *why = "no answer";
      return readiness::timed_out;
    }
    std::this_thread::sleep_for(10ms);
  }
}

bool RedisServer::answers_as_this_process(pid_t pid) const {
  timeval connect_timeout{0, 200'000};
  context_ptr context(redisConnectWithTimeout("127.0.0.1", port_, connect_timeout));
  if (!context || context->err != 0) return false;
  timeval io_timeout{0, 500'000};
  redisSetTimeout(context.get(), io_timeout);
  reply_ptr pong = run(context.get(), {"PING"});
  if (!pong) return false;
  // LOADING: listening but not serving yet. Other errors (NOAUTH) still mean
  // the server is up.
  if (pong->type == REDIS_REPLY_ERROR && std::strncmp(pong->str, "LOADING", 7) == 0) return false;
  if (!password_.empty()) run(context.get(), {"AUTH", password_});
  // Make sure the port is answered by our child and not by a server that
  // grabbed the port first (our child then exits, which the caller notices).
  reply_ptr info = run(context.get(), {"INFO", "server"});
  if (!info) return false;
  if (info->type != REDIS_REPLY_STRING) return true;  // e.g. ACL users only: cannot tell, trust PING
  const std::string text(info->str, info->len);
  const std::string field = "process_id:";
  auto at = text.find(field);
  if (at == std::string::npos) return true;
  return std::atol(text.c_str() + at + field.size()) == static_cast<long>(pid);
}

std::string RedisServer::log_tail() const {
  std::ostringstream out;
  out << "--- " << directory_ << "/redis.log (tail) ---\n" << read_tail(directory_ + "/redis.log", 3000);
  std::string output = read_tail(directory_ + "/stdout.log", 2000);
  if (!output.empty()) out << "--- stdout/stderr ---\n" << output;
  return out.str();
}

}  // namespace warden::test
