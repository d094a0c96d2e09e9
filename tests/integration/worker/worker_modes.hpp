// The modes of warden-test-worker. Each mode lives in its own file and
// registers itself, so that tests of different lock kinds add modes without
// touching each other's code.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace warden::test {

// A mode gets the arguments after its name and returns the exit code.
using worker_mode = std::function<int(const std::vector<std::string>& args)>;

std::map<std::string, worker_mode>& worker_modes();

struct register_worker_mode {
  register_worker_mode(const std::string& name, worker_mode mode) { worker_modes()[name] = std::move(mode); }
};

}  // namespace warden::test
