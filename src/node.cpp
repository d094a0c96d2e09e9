#include "node.hpp"

namespace warden::detail {
namespace {

ConnectionOptions subscriber_options(const ConnectionOptions& options) {
  ConnectionOptions out = options;
  out.subscriber = true;
  return out;
}

std::vector<std::string> eval_argv(const char* command, const char* script, const std::vector<std::string>& keys,
                                   const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back(command);
  argv.emplace_back(script);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

Node::Node(EventLoop& loop, const ConnectionOptions& options)
    : commands_(loop, options), pubsub_(loop, subscriber_options(options)) {}

void Node::start() {
  commands_.start();
  pubsub_.start();
}

void Node::close() {
  pubsub_.close();
  commands_.close();
}

void Node::run_script(const Script& script, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args, clock::time_point deadline, bool idempotent,
                      Connection::Handler handler) {
  auto argv = eval_argv("EVALSHA", script.sha1, keys, args);
  // Kept for the fallback: the same call with the body in place of the SHA1.
  auto retry = argv;
  commands_.send(std::move(argv), deadline, idempotent,
                 [this, &script, retry = std::move(retry), deadline, idempotent,
                  handler = std::move(handler)](Response&& response) mutable {
                   if (!response.error && response.reply.is_error() && response.reply.str.rfind("NOSCRIPT", 0) == 0) {
                     retry[0] = "EVAL";
                     retry[1] = script.body;
                     commands_.send(std::move(retry), deadline, idempotent, std::move(handler));
                     return;
                   }
                   handler(std::move(response));
                 });
}

}  // namespace warden::detail
