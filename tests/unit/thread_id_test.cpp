#include <gtest/gtest.h>

#include <set>
#include <thread>

#include <warden/thread_id.hpp>

namespace warden {
namespace {

constexpr thread_id top_half = thread_id{1} << 63;

TEST(ThreadId, OwnerIdsAreFreshAndNeverAThreadsId) {
  std::set<thread_id> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = new_owner_id();
    EXPECT_GE(id, top_half);
    EXPECT_TRUE(seen.insert(id).second) << "owner id handed out twice";
  }
  EXPECT_LT(current_thread_id(), top_half);
  EXPECT_NE(current_thread_id(), 0u);
  thread_id other = 0;
  std::thread([&] { other = current_thread_id(); }).join();
  EXPECT_LT(other, top_half);
  EXPECT_NE(other, current_thread_id());
}

}  // namespace
}  // namespace warden
