// warden-inspect: what Redis holds for a distributed lock (see --help).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <warden/error.hpp>
#include <warden/version.hpp>

#include "inspect/options.hpp"
#include "inspect/render.hpp"
#include "inspect/session.hpp"

namespace {

using namespace warden::inspect;

constexpr int exit_error = 1;
constexpr int exit_usage = 2;

void print(const Options& options, const LockState& state) {
  if (options.json) {
    std::cout << render_json(state) << '\n';
  } else {
    std::cout << render_text(state);
  }
  std::cout.flush();
}

int show(Session& session, const Options& options) {
  // On a terminal each refresh replaces the last; piped, they follow each other.
  bool redraw = options.watch && !options.json && isatty(STDOUT_FILENO);
  for (long shown = 0;; ++shown) {
    auto state = session.read(options.name);
    if (redraw) std::cout << "\x1b[H\x1b[2J";
    print(options, state);
    if (!options.watch) return state.kind == "not a lock" ? exit_error : 0;
    if (options.count && shown + 1 >= *options.count) return 0;
    std::this_thread::sleep_for(options.interval);
    if (!options.json && !redraw) std::cout << '\n';
  }
}

bool confirmed(const LockState& state) {
  if (!isatty(STDIN_FILENO)) {
    std::cerr << "warden-inspect: not confirmed: standard input is not a terminal (use --yes)\n";
    return false;
  }
  std::cerr << "Force-unlock '" << state.name << "', held by " << state.holders.size() << " owner"
            << (state.holders.size() == 1 ? "" : "s") << "? Its holders are not told until their next renewal. [y/N] ";
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

int force_unlock(Session& session, const Options& options) {
  auto state = session.read(options.name);
  print(options, state);
  if (state.kind == "not a lock") {
    std::cerr << "warden-inspect: '" << options.name << "' is not a lock: nothing deleted\n";
    return exit_error;
  }
  if (!state.held()) {
    std::cout << options.name << ": nothing to unlock\n";
    return 0;
  }
  if (!options.yes && !confirmed(state)) {
    std::cerr << "warden-inspect: '" << options.name << "' was not unlocked\n";
    return exit_error;
  }
  if (session.force_unlock(state)) {
    std::cout << options.name << ": force-unlocked; waiters were woken\n";
  } else {
    std::cout << options.name << ": nothing to unlock any more (released or changed meanwhile)\n";
  }
  return 0;
}

int scan(Session& session, const Options& options) {
  auto locks = session.scan(options.pattern);
  std::cout << (options.json ? render_scan_json(locks) + "\n" : render_scan_text(locks));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::invalid_argument& error) {
    std::cerr << "warden-inspect: " << error.what() << '\n';
    return exit_usage;
  }
  if (options.what == Options::action::help) {
    std::cout << manual();
    return 0;
  }
  if (options.what == Options::action::version) {
    std::cout << "warden-inspect " << WARDEN_VERSION << '\n';
    return 0;
  }
  try {
    Session session(options);
    if (options.what == Options::action::scan) return scan(session, options);
    if (options.force_unlock) return force_unlock(session, options);
    return show(session, options);
  } catch (const warden::Error& error) {
    std::cerr << "warden-inspect: " << error.what() << '\n';
    return error.code() == warden::errc::invalid_argument ? exit_usage : exit_error;
  } catch (const std::exception& error) {
    std::cerr << "warden-inspect: " << error.what() << '\n';
    return exit_error;
  }
}
