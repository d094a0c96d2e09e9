#include "peer_run.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string_view>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "process.hpp"
#include "stats.hpp"

extern char** environ;

#ifndef WARDEN_BENCH_PEER_SCRIPT
#define WARDEN_BENCH_PEER_SCRIPT "bench/peer/redis_semaphore_peer.js"
#endif

namespace warden_bench {

double peer_result::server_cpu_per_pair_us() const {
  return server_cpu_s >= 0 && pairs_all > 0 ? server_cpu_s * 1e6 / static_cast<double>(pairs_all) : -1;
}

double peer_result::client_cpu_per_pair_us() const {
  return client_cpu_s >= 0 && pairs_all > 0 ? client_cpu_s * 1e6 / static_cast<double>(pairs_all) : -1;
}

double peer_result::commands_per_pair() const {
  if (!commands_known || pairs_all == 0) return -1;
  std::uint64_t n = 0;
  for (const auto& [name, calls] : server_commands) n += calls;
  return static_cast<double>(n) / static_cast<double>(pairs_all);
}

namespace {

// The Node child and the two pipes the bench talks to it through. Stopped
// (by its own pid) when this goes.
class peer_process {
 public:
  peer_process(const std::string& node, const std::string& script, const std::vector<std::string>& env) {
    int to_child[2];
    int from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
    if (::pipe2(from_child, O_CLOEXEC) != 0) {
      ::close(to_child[0]);
      ::close(to_child[1]);
      throw std::runtime_error(std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    std::vector<std::string> args{node, script};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> environment = env;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : environment) envp.push_back(e.data());
    envp.push_back(nullptr);
    const int spawned = ::posix_spawn(&pid_, node.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    if (spawned != 0) {
      pid_ = -1;
      throw std::runtime_error(fmt::format("cannot start {}: {}", node, std::strerror(spawned)));
    }
  }

  peer_process(const peer_process&) = delete;
  peer_process& operator=(const peer_process&) = delete;

  ~peer_process() {
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
    if (pid_ > 0) {
      // It exits on end of input; a child that does not is stopped by pid.
      for (int i = 0; i < 50; ++i) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
        ::usleep(100'000);
      }
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void send(const std::string& line) {
    std::string text = line + "\n";
    std::string_view rest = text;
    while (!rest.empty()) {
      const ssize_t n = ::write(in_, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("the peer's input closed");
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // The next line it prints, or throws after `timeout` or when it exits.
  std::string read_line(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (const auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw std::runtime_error("the peer did not answer in time");
      pollfd p{out_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(fmt::format("the peer exited{}", buffer_.empty() ? "" : ": " + buffer_));
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
};

// "result name=S3 window_s=5.0 ..." -> {"name": "S3", ...}
std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  in >> word;  // the kind
  while (in >> word) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

double number(const std::map<std::string, std::string>& f, const char* key, double fallback = -1) {
  const auto it = f.find(key);
  return it == f.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}

std::map<std::string, std::uint64_t> delta(const std::map<std::string, std::uint64_t>& before,
                                           const std::map<std::string, std::uint64_t>& after) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, calls] : after) {
    const auto it = before.find(name);
    const std::uint64_t was = it == before.end() ? 0 : it->second;
    if (calls > was) out[name] = calls - was;
  }
  return out;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

peer_outcome run_peer(const peer_settings& settings, const std::vector<peer_scenario>& scenarios) {
  peer_outcome outcome;
  auto node = find_on_path("node");
  if (!node) node = find_on_path("nodejs");
  if (!node) {
    outcome.skipped = "no node (or nodejs) on PATH (Debian: apt-get install nodejs)";
    return outcome;
  }
  const std::string script = WARDEN_BENCH_PEER_SCRIPT;
  if (!is_file(script)) {
    outcome.skipped = fmt::format("its harness {} is not there", script);
    return outcome;
  }
  const std::string modules = settings.package_dir + "/node_modules";
  for (const char* package : {"redis-semaphore", "ioredis"}) {
    if (!is_file(modules + "/" + package + "/package.json")) {
      outcome.skipped = fmt::format("{} is not installed in {} (npm install --prefix {} redis-semaphore ioredis)",
                                    package, settings.package_dir, settings.package_dir);
      return outcome;
    }
  }
  std::vector<std::string> env{"NODE_PATH=" + modules, "WARDEN_PEER_HOST=" + settings.server.host,
                               fmt::format("WARDEN_PEER_PORT={}", settings.server.port),
                               fmt::format("WARDEN_PEER_DB={}", settings.server.database)};
  // The password through the environment, not argv: ps shows arguments.
  if (!settings.server.password.empty()) env.push_back("WARDEN_PEER_PASSWORD=" + settings.server.password);
  if (!settings.server.username.empty()) env.push_back("WARDEN_PEER_USERNAME=" + settings.server.username);
  try {
    peer_process peer(*node, script, env);
    const std::string ready = peer.read_line(std::chrono::seconds(30));
    if (ready.rfind("ready ", 0) != 0) {
      outcome.skipped = ready.rfind("missing ", 0) == 0 ? "a package could not be loaded: " + ready.substr(8)
                                                        : "it did not start: " + ready;
      return outcome;
    }
    outcome.versions = ready.substr(6);
    outcome.ran = true;
    const auto wait =
        std::chrono::milliseconds(static_cast<long long>(settings.duration_s * 1000)) + std::chrono::seconds(120);
    for (const auto& s : scenarios) {
      fmt::print(stderr, "running the peer's {} (redis-semaphore Mutex, {} worker{}, {} lock{}) for {:g} s...\n",
                 s.name, s.workers, s.workers == 1 ? "" : "s", s.locks, s.locks == 1 ? "" : "s", settings.duration_s);
      peer_result r;
      r.name = s.name;
      r.workers = s.workers;
      r.locks = s.locks;
      const auto commands_before =
          settings.server_commands ? settings.server_commands() : std::map<std::string, std::uint64_t>{};
      const double cpu_before = settings.server_cpu_s ? settings.server_cpu_s() : -1;
      peer.send(fmt::format("run {} {} {} {:g} {}peer:", s.name, s.workers, s.locks, settings.duration_s,
                            settings.key_prefix));
      const std::string line = peer.read_line(wait);
      const double cpu_after = settings.server_cpu_s ? settings.server_cpu_s() : -1;
      const auto commands_after =
          settings.server_commands ? settings.server_commands() : std::map<std::string, std::uint64_t>{};
      if (line.rfind("result ", 0) != 0) {
        r.errors = 1;
        r.first_error = line;
        outcome.results.push_back(std::move(r));
        break;
      }
      const auto f = fields(line);
      r.window_s = number(f, "window_s", 0);
      r.pairs_in_window = static_cast<std::uint64_t>(number(f, "pairs_in_window", 0));
      r.pairs_all = static_cast<std::uint64_t>(number(f, "pairs_all", 0));
      r.pairs_per_s = r.window_s > 0 ? static_cast<double>(r.pairs_in_window) / r.window_s : 0;
      r.client_cpu_s = number(f, "client_cpu_s");
      r.p50_us = number(f, "p50_us");
      r.p99_us = number(f, "p99_us");
      r.overlaps = static_cast<std::uint64_t>(number(f, "overlaps", 0));
      r.errors = static_cast<std::uint64_t>(number(f, "errors", 0));
      if (const auto it = f.find("first_error"); it != f.end() && it->second != "-") r.first_error = it->second;
      if (cpu_before >= 0 && cpu_after >= 0) r.server_cpu_s = cpu_after - cpu_before;
      if (!commands_before.empty() && !commands_after.empty()) {
        r.server_commands = delta(commands_before, commands_after);
        r.commands_known = true;
      }
      outcome.results.push_back(std::move(r));
    }
    peer.send("quit");
  } catch (const std::exception& e) {
    if (!outcome.ran) {
      outcome.skipped = e.what();
    } else {
      peer_result r;
      r.name = "(peer)";
      r.errors = 1;
      r.first_error = e.what();
      outcome.results.push_back(std::move(r));
    }
  }
  return outcome;
}

namespace {

std::string us(double value) { return value >= 0 ? fmt::format("{:.1f} µs", value) : std::string("n/a"); }

std::string per_pair(double value) { return value >= 0 ? fmt::format("{:.2f}", value) : std::string("n/a"); }

const scenario_result* warden_of(const std::vector<scenario_result>& warden, const std::string& name) {
  for (const auto& r : warden) {
    if (r.spec.name == name) return &r;
  }
  return nullptr;
}

}  // namespace

void print_peer_report(std::FILE* out, const peer_outcome& peer, const std::vector<scenario_result>& warden,
                       const loop_result* ceiling) {
  fmt::print(out, "## Peer: redis-semaphore's Mutex (--peer)\n\n");
  if (!peer.ran) {
    fmt::print(out, "Skipped: {}.\n\n", peer.skipped);
    std::fflush(out);
    return;
  }
  fmt::print(out,
             "{} ({}), on the same server as warden's scenarios, after them. Each async worker of one Node process "
             "takes lock (i + k) mod locks on its k-th pair as warden's threads do, all on one ioredis connection; "
             "the Mutex with its defaults (lock timeout 10 s, retry every 10 ms while the lock is held: it polls, "
             "nothing is published) and an acquire timeout of 600 s.\n\n",
             "redis-semaphore Mutex", peer.versions);
  fmt::print(out,
             "| scenario | warden pairs/s | peer pairs/s | warden ÷ peer | server CPU per pair, warden / peer (÷) "
             "| client CPU per pair, warden / peer | Redis commands per pair, warden / peer | peer pair p50 / p99 "
             "| peer overlaps / errors |\n");
  fmt::print(out, "|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const auto& p : peer.results) {
    const scenario_result* w = warden_of(warden, p.name);
    const double w_server = w ? w->per_pair_ns(w->server_cpu_s) / 1e3 : -1;
    const double p_server = p.server_cpu_per_pair_us();
    fmt::print(out, "| {} | {} | {} | {} | {} / {} ({}) | {} / {} | {} / {} | {} / {} | {} / {} |\n", p.name,
               w ? format_rate(w->pairs_per_s) : std::string("not run"), format_rate(p.pairs_per_s),
               w && p.pairs_per_s > 0 ? fmt::format("{:.2f}", w->pairs_per_s / p.pairs_per_s) : std::string("n/a"),
               us(w_server), us(p_server),
               w_server >= 0 && p_server > 0 ? fmt::format("{:.2f}", w_server / p_server) : std::string("n/a"),
               us(w ? w->per_pair_ns(w->client_cpu_s) / 1e3 : -1), us(p.client_cpu_per_pair_us()),
               per_pair(w ? w->all_commands_per_pair() : -1), per_pair(p.commands_per_pair()),
               p.p50_us >= 0 ? format_ns(static_cast<std::int64_t>(p.p50_us * 1000)) : std::string("n/a"),
               p.p99_us >= 0 ? format_ns(static_cast<std::int64_t>(p.p99_us * 1000)) : std::string("n/a"),
               group_thousands(p.overlaps), group_thousands(p.errors));
  }
  fmt::print(out, "\n");
  for (const auto& p : peer.results) {
    if (!p.first_error.empty()) fmt::print(out, "- peer {}: first error: {}\n", p.name, p.first_error);
  }
  for (const auto& p : peer.results) {
    if (p.name != "S3") continue;
    const scenario_result* w = warden_of(warden, "S3");
    if (!w) {
      fmt::print(out, "- The targets against the peer need warden's S3 in the same run (--scenarios ...,S3).\n");
      continue;
    }
    const double share = p.pairs_per_s > 0 ? w->pairs_per_s / p.pairs_per_s : -1;
    const double w_server = w->per_pair_ns(w->server_cpu_s) / 1e3;
    const double p_server = p.server_cpu_per_pair_us();
    const double cpu = w_server >= 0 && p_server > 0 ? w_server / p_server : -1;
    fmt::print(out, "- S3 pairs/s ≥ {:g} × the peer's: {:.2f} × {}\n", s3_min_share_of_peer, share,
               share >= s3_min_share_of_peer ? "✓ PASS" : "✗ MISS");
    fmt::print(out, "- S3 server CPU per pair ≤ {:g} × the peer's: {} {}\n", s3_max_server_cpu_vs_peer,
               cpu >= 0 ? fmt::format("{:.2f} ×", cpu) : std::string("n/a"),
               cpu >= 0 && cpu <= s3_max_server_cpu_vs_peer ? "✓ PASS" : "✗ MISS");
    if (ceiling != nullptr && ceiling->ran && ceiling->ok && ceiling->pairs > 0 && p.pairs_per_s > 0) {
      const double c_server = ceiling->per_pair_ns(ceiling->server_cpu_s) / 1000;
      fmt::print(out,
                 "- S3's ceiling here, the plain-hiredis loop on as many threads side by side (a connection and a "
                 "lock each, no library, no contention): {} pairs/s, {:.2f} × the peer's, at {} of server CPU per "
                 "pair ({} × the peer's)\n",
                 format_rate(ceiling->pairs_per_s), ceiling->pairs_per_s / p.pairs_per_s, us(c_server),
                 c_server >= 0 && p_server > 0 ? fmt::format("{:.2f}", c_server / p_server) : std::string("n/a"));
    }
  }
  fmt::print(out,
             "- Per pair: the peer's figures divide by every pair it finished between the bench's readings, "
             "warden's by the pairs of its window. Client CPU: the Node process's (its own clock) against the "
             "bench process's (warden's threads and the bench's workers). Server CPU is the server's whole CPU "
             "over the window: fewer pairs per second carry more of its fixed upkeep each, and warden's unlock "
             "latches (one per release, kept command_timeout × (retry_attempts + 2)) expire, and cost the server, "
             "in later windows (S1's in S3's; S3's in the peer's S1 and S2).\n\n");
  std::fflush(out);
}

}  // namespace warden_bench
