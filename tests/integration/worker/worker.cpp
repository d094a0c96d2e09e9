// A separate process for multi-process tests: warden-test-worker MODE ARGS...
// Modes register themselves (see worker_modes.hpp).
#include <iostream>
#include <string>
#include <vector>

#include "worker_modes.hpp"

namespace warden::test {

std::map<std::string, worker_mode>& worker_modes() {
  static std::map<std::string, worker_mode> modes;
  return modes;
}

}  // namespace warden::test

int main(int argc, char** argv) {
  auto& modes = warden::test::worker_modes();
  if (argc >= 2) {
    auto mode = modes.find(argv[1]);
    if (mode != modes.end()) return mode->second(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::cerr << "usage: warden-test-worker MODE ARGS...; modes:";
  for (auto& [name, mode] : modes) std::cerr << " " << name;
  std::cerr << "\n";
  return 2;
}
