#include "io/command.hpp"

#include <charconv>

#include "io/link_protocol.hpp"

namespace warden::detail {
namespace {

void append_count(std::string& out, char mark, std::size_t value) {
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out += mark;
  out.append(digits, end);
  out += "\r\n";
}

// The bulk strings of a well-formed command ("*N\r\n" then N of
// "$len\r\n<bytes>\r\n"), as views into `bytes`; empty if it is not one.
std::vector<std::string_view> arguments_of(std::string_view bytes) {
  std::vector<std::string_view> out;
  auto read_number = [&](std::size_t& at, char mark, std::size_t& value) {
    if (at >= bytes.size() || bytes[at] != mark) return false;
    auto line_end = bytes.find("\r\n", at);
    if (line_end == std::string_view::npos) return false;
    auto [end, error] = std::from_chars(bytes.data() + at + 1, bytes.data() + line_end, value);
    if (error != std::errc{} || end != bytes.data() + line_end) return false;
    at = line_end + 2;
    return true;
  };
  std::size_t at = 0, count = 0;
  if (!read_number(at, '*', count)) return {};
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t length = 0;
    if (!read_number(at, '$', length) || at + length + 2 > bytes.size()) return {};
    out.push_back(bytes.substr(at, length));
    at += length + 2;
  }
  return out;
}

}  // namespace

void append_bulk(std::string& out, std::string_view value) {
  append_count(out, '$', value.size());
  out.append(value);
  out += "\r\n";
}

Command::Command(const std::vector<std::string>& argv)
    : name_(argv.empty() ? std::string() : argv.front()), count_(argv.size()) {
  LinkProtocol::encode_command(argv, bytes_);
}

Command::Command(std::initializer_list<std::string_view> argv)
    : Command(std::vector<std::string>(argv.begin(), argv.end())) {}

void Command::start(std::string_view name, std::size_t count, std::size_t rest_size) {
  const std::string_view code = script_ == nullptr ? std::string_view() : with_body_ ? script_->body : script_->sha1;
  bytes_.clear();
  bytes_.reserve(32 + name.size() + code.size() + rest_size);
  append_count(bytes_, '*', count);
  append_bulk(bytes_, name);
  append_bulk(bytes_, code);
  rest_at_ = bytes_.size();
  name_ = name;
  count_ = count;
}

Command Command::evalsha(const Script& script, const std::vector<std::string>& keys,
                         const std::vector<std::string>& args) {
  std::size_t size = 16;
  for (const auto& key : keys) size += key.size() + 16;
  for (const auto& arg : args) size += arg.size() + 16;
  return evalsha(script, 1 + keys.size() + args.size(), size, [&](std::string& out) {
    append_bulk(out, std::to_string(keys.size()));
    for (const auto& key : keys) append_bulk(out, key);
    for (const auto& arg : args) append_bulk(out, arg);
  });
}

void Command::use_body() {
  if (script_ == nullptr || with_body_) return;
  std::string rest = bytes_.substr(rest_at_);
  with_body_ = true;
  start("EVAL", count_, rest.size());
  bytes_.append(rest);
}

bool Command::replace_argument(std::string_view from, std::string_view to) {
  auto arguments = arguments_of(bytes_);
  // A script call's keys are names a caller chose: one that happens to
  // read like `from` must stay the key it is. Only ARGV is looked at.
  std::size_t first = 1;
  if (script_ != nullptr && arguments.size() >= 3) {
    std::size_t keys = 0;
    auto [end, error] = std::from_chars(arguments[2].data(), arguments[2].data() + arguments[2].size(), keys);
    if (error != std::errc{} || end != arguments[2].data() + arguments[2].size()) return false;
    first = 3 + keys;
  }
  bool found = false;
  for (std::size_t i = first; i < arguments.size() && !found; ++i) found = arguments[i] == from;
  if (!found) return false;
  std::string out;
  out.reserve(bytes_.size() + arguments.size() * (to.size() + 16));
  append_count(out, '*', arguments.size());
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    append_bulk(out, i >= first && arguments[i] == from ? to : arguments[i]);
    if (i == 1 && script_ != nullptr) rest_at_ = out.size();
  }
  bytes_ = std::move(out);
  return true;
}

}  // namespace warden::detail
