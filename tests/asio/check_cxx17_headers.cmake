# Compiles every public header of include/warden, on its own, as C++17
# (-pedantic-errors), except the C++20 layer (asio.hpp, coro.hpp): the core's
# interface stays C++17 whatever the C++20 layer adds. Run by ctest as
# asio.CoreHeadersStayCxx17 with -DCXX, -DSOURCE_DIR, -DBINARY_DIR.
cmake_policy(VERSION 3.16)
file(GLOB headers RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/warden/*.hpp)
set(cxx20_only warden/asio.hpp warden/coro.hpp)
set(checked 0)
foreach(header IN LISTS headers)
  if(header IN_LIST cxx20_only)
    continue()
  endif()
  execute_process(
    COMMAND ${CXX} -std=c++17 -pedantic-errors -fsyntax-only -x c++ -I${SOURCE_DIR}/include
            -I${BINARY_DIR}/include -
    INPUT_FILE ${SOURCE_DIR}/include/${header}
    RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${header} does not compile as C++17:\n${errors}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
message(STATUS "${checked} public headers compile as C++17")
