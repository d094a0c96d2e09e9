// A server's maxmemory and maxmemory-policy read from INFO memory and CONFIG
// GET answers (as Redis 7.0 gives them), and which settings may evict locks.
#include <gtest/gtest.h>

#include "topology/memory_settings.hpp"

namespace warden::detail {
namespace {

Reply config_answer(std::initializer_list<const char*> words) {
  Reply reply;
  reply.type = Reply::kind::array;
  for (const char* word : words) reply.elements.push_back(Reply::make_string(word));
  return reply;
}

TEST(MemorySettings, ReadFromInfoMemory) {
  auto info = Reply::make_string(
      "# Memory\r\nused_memory:1011808\r\nused_memory_human:988.09K\r\nmaxmemory:1048576\r\n"
      "maxmemory_human:1.00M\r\nmaxmemory_policy:volatile-lru\r\nallocator_frag_ratio:1.00\r\n");
  auto settings = memory_settings_from_info(info);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->maxmemory, 1048576u);
  EXPECT_EQ(settings->policy, "volatile-lru");
}

TEST(MemorySettings, InfoWithoutTheFieldsOrWithGarbageGivesNothing) {
  EXPECT_FALSE(memory_settings_from_info(Reply::make_string("# Memory\r\nused_memory:1\r\n")));
  EXPECT_FALSE(memory_settings_from_info(Reply::make_string("maxmemory:12x\r\nmaxmemory_policy:noeviction\r\n")));
  EXPECT_FALSE(memory_settings_from_info(Reply::make_string("maxmemory:12\r\nmaxmemory_policy:\r\n")));
  // maxmemory_human is not maxmemory.
  EXPECT_FALSE(memory_settings_from_info(Reply::make_string("maxmemory_human:0B\r\nmaxmemory_policy:noeviction\r\n")));
  EXPECT_FALSE(
      memory_settings_from_info(Reply::make_error("NOPERM this user has no permissions to run the 'info' command")));
  // The last line may end without CRLF.
  auto settings = memory_settings_from_info(Reply::make_string("maxmemory:0\r\nmaxmemory_policy:noeviction"));
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->policy, "noeviction");
}

TEST(MemorySettings, ReadFromConfigGet) {
  auto settings = memory_settings_from_config(
      config_answer({"maxmemory", "0", "maxmemory-samples", "5", "maxmemory-clients", "0", "maxmemory-policy",
                     "noeviction", "maxmemory-eviction-tenacity", "10"}));
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->maxmemory, 0u);
  EXPECT_EQ(settings->policy, "noeviction");
  EXPECT_FALSE(memory_settings_from_config(config_answer({"maxmemory", "0"})));
  EXPECT_FALSE(memory_settings_from_config(config_answer({})));
  EXPECT_FALSE(memory_settings_from_config(Reply::make_error("NOPERM no")));
}

TEST(MemorySettings, WhichSettingsMayEvictLocks) {
  EXPECT_TRUE(may_evict_locks({1, "volatile-lru"}));
  EXPECT_TRUE(may_evict_locks({1, "allkeys-random"}));
  EXPECT_TRUE(may_evict_locks({1, "volatile-ttl"}));
  EXPECT_FALSE(may_evict_locks({1, "noeviction"}));
  EXPECT_FALSE(may_evict_locks({0, "allkeys-lru"}));
}

}  // namespace
}  // namespace warden::detail
