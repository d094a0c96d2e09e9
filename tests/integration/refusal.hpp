// Checking a refusal: the call fails with the expected warden::errc, its
// message names the lock, and Redis is left exactly as it was.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include <warden/error.hpp>

#include "redis_probe.hpp"

namespace warden::test {

// Every key in the server with its DUMP, to compare before and after.
inline std::map<std::string, std::string> snapshot(RedisProbe& probe) {
  std::map<std::string, std::string> all;
  for (auto& key : probe.keys("*")) all[key] = probe.command({"DUMP", key}).str;
  return all;
}

template <class Call>
void expect_refusal(RedisProbe& probe, errc code, const std::string& lock_name, Call call) {
  auto before = snapshot(probe);
  try {
    call();
    ADD_FAILURE() << "expected " << make_error_code(code).message();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code) << error.what();
    EXPECT_NE(std::string(error.what()).find(lock_name), std::string::npos) << error.what();
  }
  EXPECT_EQ(snapshot(probe), before) << "a refused call changed Redis";
}

}  // namespace warden::test
