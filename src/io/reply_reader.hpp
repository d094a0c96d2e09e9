// A hiredis reader that parses RESP straight into Reply values.
//
// hiredis stays the parser; only the objects it builds are ours. Its own
// objects cost one allocation per element (a renewal batch's answer is an
// array of a hundred integers) and then had to be copied into Reply and
// freed. Here an array's elements are Reply values in its own vector.
#pragma once

#include <memory>

struct redisReader;

namespace warden::detail {

struct Reply;

struct ReaderDeleter {
  void operator()(redisReader* reader) const noexcept;
};
using ReaderPtr = std::unique_ptr<redisReader, ReaderDeleter>;

// A reader whose redisReaderGetReply() hands out a `Reply*` made with `new`:
// the caller owns it (take_reply() wraps it).
ReaderPtr make_reply_reader();

std::unique_ptr<Reply> take_reply(void* raw) noexcept;

}  // namespace warden::detail
