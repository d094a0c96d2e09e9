#include "io/reply_reader.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <new>

#include "io/reply.hpp"

namespace warden::detail {
namespace {

// Room taken up front for an array's elements: a count sent by a broken or
// hostile server must not make the client allocate gigabytes before a
// single element has arrived. Longer arrays grow as elements come.
constexpr int reserved_elements_at_most = 4096;

// hiredis calls these from C: nothing may throw through it. A null result
// makes the reader fail with "Out of memory", which fails the link.
//
// Where a child goes: hiredis builds an array's elements in order and
// finishes each (with its own elements) before starting the next, so a
// child is always appended at the end of its parent's vector, and growing
// that vector never moves a value still being built (the ones being built
// are the last element at each level).
Reply* place(const redisReadTask* task, Reply::kind type) noexcept {
  try {
    Reply* out = nullptr;
    if (task->parent == nullptr) {
      out = new Reply;
    } else {
      auto* parent = static_cast<Reply*>(task->parent->obj);
      if (parent == nullptr || parent->type != Reply::kind::array ||
          static_cast<std::size_t>(task->idx) != parent->elements.size()) {
        return nullptr;
      }
      out = &parent->elements.emplace_back();
    }
    out->type = type;
    return out;
  } catch (...) {
    return nullptr;
  }
}

// A value that could not be completed: a root is nobody's yet (the reader
// keeps only what we return), a child stays in its parent, freed with it.
void drop(const redisReadTask* task, Reply* value) noexcept {
  if (task->parent == nullptr) delete value;
}

void* on_string(const redisReadTask* task, char* text, std::size_t length) {
  Reply::kind type = Reply::kind::string;
  if (task->type == REDIS_REPLY_ERROR) type = Reply::kind::error;
  if (task->type == REDIS_REPLY_STATUS) type = Reply::kind::status;
  Reply* out = place(task, type);
  if (out == nullptr) return nullptr;
  try {
    out->str.assign(text, length);
  } catch (...) {
    drop(task, out);
    return nullptr;
  }
  return out;
}

void* on_array(const redisReadTask* task, int elements) {
  Reply* out = place(task, Reply::kind::array);
  if (out == nullptr) return nullptr;
  try {
    out->elements.reserve(static_cast<std::size_t>(std::clamp(elements, 0, reserved_elements_at_most)));
  } catch (...) {
    drop(task, out);
    return nullptr;
  }
  return out;
}

void* on_integer(const redisReadTask* task, long long value) {
  Reply* out = place(task, Reply::kind::integer);
  if (out != nullptr) out->integer = value;
  return out;
}

void* on_nil(const redisReadTask* task) { return place(task, Reply::kind::nil); }

// Only roots reach here (the reader frees the reply it is building, or one
// it was never asked for); children belong to them.
void on_free(void* reply) { delete static_cast<Reply*>(reply); }

redisReplyObjectFunctions functions{on_string, on_array, on_integer, on_nil, on_free};

}  // namespace

void ReaderDeleter::operator()(redisReader* reader) const noexcept { redisReaderFree(reader); }

ReaderPtr make_reply_reader() {
  ReaderPtr reader(redisReaderCreateWithFunctions(&functions));
  if (!reader) throw std::bad_alloc();
  return reader;
}

std::unique_ptr<Reply> take_reply(void* raw) noexcept { return std::unique_ptr<Reply>(static_cast<Reply*>(raw)); }

}  // namespace warden::detail
