// An Asio line-protocol TCP server whose handlers serialise the updates of
// each account with a warden lock taken by co_await: no thread ever blocks in
// warden, and a session's holds belong to the session (a task_owner), not to
// whichever thread runs it.
//
// Protocol, one line each way:
//   DEPOSIT <account> <amount>  ->  OK <new balance> | BUSY (lock not had within 5 s)
//   BALANCE <account>           ->  OK <balance>
//   QUIT                        ->  (closes)
//
// The program serves on 127.0.0.1 (a free port), drives 8 clients of its own
// against itself (25 deposits each, to two accounts), prints the balances and
// exits: 0 when no deposit was lost. The ledger's read-modify-write spans a
// suspension (as a call to a real store would), so without the lock
// concurrent deposits would overwrite each other.
//
//   build/examples/account_server redis://127.0.0.1:6379
#include <warden/asio.hpp>
#include <warden/warden.hpp>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/streambuf.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <istream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using asio::awaitable;
using asio::use_awaitable;
using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;
using namespace std::chrono_literals;

namespace {

// Stands in for a store that several server processes share. Its reads and
// writes are separate round trips, hence the suspension between them.
class Ledger {
 public:
  awaitable<long> read(const std::string& account) {
    co_await pause();
    std::lock_guard<std::mutex> guard(mutex_);
    co_return balances_[account];
  }
  awaitable<void> write(const std::string& account, long balance) {
    co_await pause();
    std::lock_guard<std::mutex> guard(mutex_);
    balances_[account] = balance;
  }

 private:
  static awaitable<void> pause() {
    asio::steady_timer timer(co_await asio::this_coro::executor, 1ms);
    co_await timer.async_wait(use_awaitable);
  }
  std::mutex mutex_;  // the map's structure only; it does not serialise deposits
  std::map<std::string, long> balances_;
};

// DEPOSIT: the account's lock, taken for this session's owner, bounded by a
// 5 s deadline racing it (a lost race cancels the wait and leaves nothing
// behind in Redis), released whatever happens.
awaitable<std::string> deposit(warden::Client& client, Ledger& ledger, const warden::task_owner& session,
                               const std::string& account, long amount) {
  warden::Lock lock = client.get_lock("account:" + account);
  asio::steady_timer deadline(co_await asio::this_coro::executor, 5s);
  auto first = co_await (warden::async_lock(lock, session, use_awaitable) || deadline.async_wait(use_awaitable));
  if (first.index() == 1) co_return "BUSY";
  std::string reply;
  try {
    long balance = co_await ledger.read(account) + amount;
    co_await ledger.write(account, balance);
    reply = "OK " + std::to_string(balance);
  } catch (const std::exception& error) {
    reply = std::string("ERR ") + error.what();
  }
  co_await warden::async_unlock(lock, session, use_awaitable);
  co_return reply;
}

// One connection, one task: its own owner, on its own strand (the deadline's
// and the wait's completions never run at once).
awaitable<void> session(tcp::socket socket, warden::Client& client, Ledger& ledger) {
  warden::task_owner owner;
  asio::streambuf input;
  try {
    for (;;) {
      std::size_t n = co_await asio::async_read_until(socket, input, '\n', use_awaitable);
      std::string line(asio::buffers_begin(input.data()), asio::buffers_begin(input.data()) + static_cast<long>(n));
      input.consume(n);
      std::istringstream words(line);
      std::string verb, account;
      long amount = 0;
      words >> verb >> account >> amount;
      std::string reply;
      if (verb == "DEPOSIT" && !account.empty()) {
        reply = co_await deposit(client, ledger, owner, account, amount);
      } else if (verb == "BALANCE" && !account.empty()) {
        reply = "OK " + std::to_string(co_await ledger.read(account));
      } else if (verb == "QUIT") {
        break;
      } else {
        reply = "ERR unknown command";
      }
      reply += '\n';
      co_await asio::async_write(socket, asio::buffer(reply), use_awaitable);
    }
  } catch (const std::exception&) {
    // the peer went away
  }
}

awaitable<void> listen(tcp::acceptor& acceptor, warden::Client& client, Ledger& ledger) {
  for (;;) {
    auto strand = asio::make_strand(acceptor.get_executor());
    tcp::socket socket = co_await acceptor.async_accept(strand, use_awaitable);
    asio::co_spawn(strand, session(std::move(socket), client, ledger), asio::detached);
  }
}

// A client of the server: sends its lines one by one and reads each reply.
awaitable<std::vector<std::string>> talk(tcp::endpoint server, std::vector<std::string> lines) {
  tcp::socket socket(co_await asio::this_coro::executor);
  co_await socket.async_connect(server, use_awaitable);
  std::vector<std::string> replies;
  asio::streambuf input;
  for (auto& line : lines) {
    std::string out = line + "\n";
    co_await asio::async_write(socket, asio::buffer(out), use_awaitable);
    if (line == "QUIT") break;
    std::size_t n = co_await asio::async_read_until(socket, input, '\n', use_awaitable);
    replies.emplace_back(asio::buffers_begin(input.data()),
                         asio::buffers_begin(input.data()) + static_cast<long>(n - 1));
    input.consume(n);
  }
  co_return replies;
}

struct Outcome {
  bool ok = false;
};

constexpr int clients = 8;
constexpr int deposits = 25;

// Runs the clients at once, then reads the balances, checks them and stops
// the server.
awaitable<void> drive(asio::io_context& io, tcp::acceptor& acceptor, Outcome& outcome) {
  auto executor = co_await asio::this_coro::executor;
  int running = clients;
  int failed = 0;
  int busy = 0;
  asio::steady_timer all_done(executor, asio::steady_timer::time_point::max());
  for (int c = 0; c < clients; ++c) {
    std::vector<std::string> lines;
    for (int d = 0; d < deposits; ++d) lines.push_back(d % 2 == 0 ? "DEPOSIT alice 1" : "DEPOSIT bob 1");
    lines.push_back("QUIT");
    // The completions run on this coroutine's strand, one at a time.
    asio::co_spawn(executor, talk(acceptor.local_endpoint(), std::move(lines)),
                   [&](std::exception_ptr error, std::vector<std::string> replies) {
                     if (error || replies.size() != static_cast<std::size_t>(deposits)) ++failed;
                     for (auto& reply : replies) busy += reply == "BUSY" ? 1 : 0;
                     if (--running == 0) all_done.cancel();
                   });
  }
  try {
    co_await all_done.async_wait(use_awaitable);
  } catch (const std::system_error&) {
    // cancelled: every client has finished
  }
  std::vector<std::string> query{"BALANCE alice", "BALANCE bob", "QUIT"};
  auto balances = co_await talk(acceptor.local_endpoint(), std::move(query));
  std::cout << "alice: " << balances.at(0) << ", bob: " << balances.at(1) << " after " << clients * deposits
            << " deposits by " << clients << " clients (" << busy << " busy, " << failed << " failed)" << std::endl;
  const std::string expected_alice = "OK " + std::to_string(clients * ((deposits + 1) / 2));
  const std::string expected_bob = "OK " + std::to_string(clients * (deposits / 2));
  outcome.ok = failed == 0 && busy == 0 && balances.at(0) == expected_alice && balances.at(1) == expected_bob;
  acceptor.close();
  io.stop();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    warden::Client client(warden::Config::from_url(url));
    Ledger ledger;
    asio::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    asio::co_spawn(io, listen(acceptor, client, ledger), asio::detached);

    Outcome outcome;
    asio::co_spawn(asio::make_strand(io), drive(io, acceptor, outcome), asio::detached);

    std::thread second([&] { io.run(); });  // two threads run the server and its clients
    io.run();
    second.join();
    if (!outcome.ok) {
      std::cerr << "deposits were lost" << std::endl;
      return 1;
    }
    std::cout << "no deposit lost" << std::endl;
    client.close();
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
