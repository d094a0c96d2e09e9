// SharedText: an immutable string shared by reference count.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "io/shared_text.hpp"

namespace {

using warden::detail::SharedText;

TEST(SharedText, EmptyHoldsNothing) {
  SharedText empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.view(), "");
  EXPECT_EQ(empty.use_count(), 0u);
  SharedText from_empty_view{std::string_view()};
  EXPECT_EQ(from_empty_view.use_count(), 0u);
}

TEST(SharedText, KeepsTheTextItWasGiven) {
  std::string source = "redisson_lock__channel:{orders:42}";
  SharedText text{source};
  source.assign(source.size(), 'x');  // a copy, not a view of the source
  EXPECT_EQ(text.view(), "redisson_lock__channel:{orders:42}");
  EXPECT_EQ(text.size(), 34u);
  EXPECT_EQ(text.str(), "redisson_lock__channel:{orders:42}");
  EXPECT_EQ(text.view().data()[text.size()], '\0');
}

TEST(SharedText, CopiesShareTheCharactersAndCountHandles) {
  SharedText a{"abc"};
  EXPECT_EQ(a.use_count(), 1u);
  {
    SharedText b = a;
    EXPECT_TRUE(b.shares(a));
    EXPECT_EQ(b.view().data(), a.view().data());
    EXPECT_EQ(a.use_count(), 2u);
    SharedText c;
    c = b;
    EXPECT_EQ(a.use_count(), 3u);
  }
  EXPECT_EQ(a.use_count(), 1u);
}

TEST(SharedText, EqualTextIsEqualWithoutBeingShared) {
  SharedText a{"same"};
  SharedText b{"same"};
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.shares(b));
  EXPECT_NE(a, SharedText{"other"});
}

TEST(SharedText, MovesLeaveTheSourceEmpty) {
  SharedText a{"moving"};
  SharedText b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from handle is empty
  EXPECT_EQ(b.view(), "moving");
  EXPECT_EQ(b.use_count(), 1u);
  SharedText c{"replaced"};
  c = std::move(b);
  EXPECT_EQ(c.view(), "moving");
  EXPECT_EQ(c.use_count(), 1u);
}

TEST(SharedText, AssigningToItselfKeepsTheText) {
  SharedText a{"self"};
  SharedText& alias = a;
  a = alias;
  EXPECT_EQ(a.view(), "self");
  EXPECT_EQ(a.use_count(), 1u);
  a = std::move(alias);
  EXPECT_EQ(a.view(), "self");
  EXPECT_EQ(a.use_count(), 1u);
}

TEST(SharedText, AViewOfItKeysAMapWhoseValueHoldsIt) {
  // How the subscriber keys its channels: no second copy of the name.
  std::unordered_map<std::string_view, SharedText> map;
  for (int i = 0; i < 100; ++i) {
    SharedText text{"channel:" + std::to_string(i)};
    std::string_view key = text.view();
    map.emplace(key, std::move(text));
  }
  map.rehash(1024);  // nodes do not move, and the characters never do
  EXPECT_EQ(map.at("channel:7").view(), "channel:7");
  EXPECT_EQ(map.count("channel:99"), 1u);
}

TEST(SharedText, HandlesMayBeCopiedAndDroppedOnManyThreads) {
  SharedText text{"shared across threads"};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([text] {
      for (int i = 0; i < 10'000; ++i) {
        SharedText copy = text;
        ASSERT_EQ(copy.size(), 21u);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(text.use_count(), 1u);
}

}  // namespace
