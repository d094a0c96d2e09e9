// warden-bench without Asio: the coroutine scenarios are not built.
#include "coro_scenario.hpp"

namespace warden_bench {

bool coro_scenarios_built() { return false; }

coro_result run_coro_scenario(warden::Client&, const std::string& name, const std::string& description, unsigned,
                              const std::vector<std::string>&, double) {
  coro_result result;
  result.name = name;
  result.description = description;
  result.first_error = "not built (standalone Asio was not found)";
  return result;
}

}  // namespace warden_bench
