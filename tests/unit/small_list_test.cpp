// SmallList: a vector that keeps its first element in place.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "io/small_list.hpp"

namespace {

using warden::detail::SmallList;

struct Item {
  std::uint64_t id = 0;
  void* who = nullptr;
  bool flag = false;
};

std::vector<std::uint64_t> ids(const SmallList<Item>& list) {
  std::vector<std::uint64_t> out;
  for (const Item& item : list) out.push_back(item.id);
  return out;
}

SmallList<Item> list_of(std::initializer_list<std::uint64_t> values) {
  SmallList<Item> list;
  for (auto id : values) list.push_back(Item{id});
  return list;
}

TEST(SmallList, StartsEmptyAndInPlace) {
  SmallList<Item> list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(list.size(), 0u);
  EXPECT_TRUE(list.inline_storage());
  EXPECT_EQ(list.begin(), list.end());
}

TEST(SmallList, OneElementStaysInPlace) {
  SmallList<Item> list;
  int someone = 0;
  Item& added = list.push_back(Item{7, &someone, true});
  EXPECT_TRUE(list.inline_storage());
  EXPECT_EQ(&added, &list[0]);
  EXPECT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, 7u);
  EXPECT_EQ(list[0].who, &someone);
  EXPECT_TRUE(list[0].flag);
  // Within the object itself: nothing on the heap.
  auto* object = reinterpret_cast<const char*>(&list);
  auto* element = reinterpret_cast<const char*>(&list[0]);
  EXPECT_GE(element, object);
  EXPECT_LT(element, object + sizeof(list));
}

TEST(SmallList, GrowsOntoTheHeapKeepingOrder) {
  auto list = list_of({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_FALSE(list.inline_storage());
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(list.back().id, 10u);
}

TEST(SmallList, EraseKeepsTheOrderOfTheOthers) {
  auto list = list_of({1, 2, 3, 4});
  list.erase(list.begin() + 1);
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{1, 3, 4}));
  list.erase(list.end() - 1);
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{1, 3}));
  list.erase(list.begin());
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{3}));
}

TEST(SmallList, BackToOneOrNoneMovesBackInPlace) {
  auto list = list_of({1, 2, 3});
  list.erase(list.begin());
  EXPECT_FALSE(list.inline_storage());
  list.erase(list.begin());
  EXPECT_TRUE(list.inline_storage());
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{3}));
  list.erase(list.begin());
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.inline_storage());
  // And it grows again from there.
  list.push_back(Item{4});
  list.push_back(Item{5});
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{4, 5}));
}

TEST(SmallList, ErasingTheOnlyElementOfTwoLeavesTheOtherInPlace) {
  auto list = list_of({1, 2});
  list.erase(list.end() - 1);
  EXPECT_TRUE(list.inline_storage());
  EXPECT_EQ(ids(list), (std::vector<std::uint64_t>{1}));
}

TEST(SmallList, CopiesAndMovesCarryTheElements) {
  for (auto source : {list_of({}), list_of({1}), list_of({1, 2, 3})}) {
    SmallList<Item> copy = source;
    EXPECT_EQ(ids(copy), ids(source));
    SmallList<Item> assigned = list_of({9, 9, 9, 9});
    assigned = source;
    EXPECT_EQ(ids(assigned), ids(source));
    SmallList<Item> moved = std::move(copy);
    EXPECT_EQ(ids(moved), ids(source));
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    SmallList<Item> move_assigned = list_of({8});
    move_assigned = std::move(moved);
    EXPECT_EQ(ids(move_assigned), ids(source));
  }
}

TEST(SmallList, ClearGivesTheStorageBack) {
  auto list = list_of({1, 2, 3});
  list.clear();
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.inline_storage());
}

}  // namespace
