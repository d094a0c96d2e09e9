# clang++ -std=c++20 compiles the C++20 layer: <warden/asio.hpp> with
# use_awaitable and awaitable_operators (asio_clang_check.cpp), <warden/coro.hpp>,
# and the Asio example. Syntax only: the gcc build links and runs them. Run
# by ctest as asio.ClangCompilesTheCxx20Layer with -DCXX (clang++),
# -DSOURCE_DIR, -DBINARY_DIR, -DASIO_DIR.
cmake_policy(VERSION 3.16)
set(sources ${SOURCE_DIR}/tests/asio/asio_clang_check.cpp)
if(EXISTS ${SOURCE_DIR}/examples/asio/account_server.cpp)
  list(APPEND sources ${SOURCE_DIR}/examples/asio/account_server.cpp)
endif()
# Asio before 1.24 enables co_await under clang only with libc++'s
# <experimental/coroutine>; with libstdc++ (Debian's default) it must be told
# that clang has C++20 coroutines and <coroutine> (docs/asio.md says so too).
set(coroutine_flags -DASIO_HAS_CO_AWAIT=1 -DASIO_HAS_STD_COROUTINE=1)
foreach(source IN LISTS sources)
  execute_process(
    COMMAND ${CXX} -std=c++20 -Wall -Wextra -Wpedantic ${coroutine_flags} -fsyntax-only -I${SOURCE_DIR}/include
            -I${BINARY_DIR}/include -I${ASIO_DIR} ${source}
    RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "clang++ -std=c++20 fails on ${source}:\n${errors}")
  endif()
  if(errors MATCHES "warning:")
    message(FATAL_ERROR "clang++ -std=c++20 warns on ${source}:\n${errors}")
  endif()
endforeach()
message(STATUS "clang++ -std=c++20 compiles: ${sources}")
