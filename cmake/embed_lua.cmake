# Run as: cmake -DOUT_DIR=dir -DLUA_FILES=a.lua|b.lua -DPRELUDE_DIR=dir -P embed_lua.cmake
# Each script's text is its prelude pieces (PRELUDE_DIR/<name>.lua, in the
# order its first line "--@prelude <name>..." gives) followed by the script
# file itself; that whole text is what Redis runs and what the SHA1 names.
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in script mode
string(REPLACE "|" ";" files "${LUA_FILES}")
list(SORT files)
file(GLOB prelude_files "${PRELUDE_DIR}/*.lua")
list(SORT prelude_files)

function(check_delimiter text what)
  string(FIND "${text}" ")warden_lua\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${what} contains the raw-string delimiter")
  endif()
endfunction()

set(hpp "// Generated from lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n#pragma once\n\n#include <cstddef>\n\n#include \"io/script.hpp\"\n\nnamespace warden::detail::scripts {\n\n")
set(cpp "// Generated from lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n#include \"warden_scripts.hpp\"\n\nnamespace warden::detail::scripts {\n\n")

# The prelude pieces, for the test that checks how each script was assembled.
string(APPEND hpp "namespace prelude {\n")
string(APPEND cpp "namespace prelude {\n\n")
set(prelude_names "")
foreach(f IN LISTS prelude_files)
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  check_delimiter("${text}" "${f}")
  set(prelude_text_${name} "${text}")
  list(APPEND prelude_names ${name})
  string(APPEND hpp "extern const char* const ${name};\n")
  string(APPEND cpp "const char* const ${name} = R\"warden_lua(${text})warden_lua\";\n\n")
endforeach()
string(APPEND hpp "}  // namespace prelude\n\n")
string(APPEND cpp "}  // namespace prelude\n\n")

set(table "")
foreach(f IN LISTS files)
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" own)
  check_delimiter("${own}" "${f}")
  set(body "")
  set(uses "")
  if(own MATCHES "^--@prelude ([a-z_ ]+)\n")
    string(REPLACE " " ";" uses "${CMAKE_MATCH_1}")
    foreach(piece IN LISTS uses)
      if(NOT piece IN_LIST prelude_names)
        message(FATAL_ERROR "${f} asks for prelude '${piece}', which is not in ${PRELUDE_DIR}")
      endif()
      string(APPEND body "${prelude_text_${piece}}")
    endforeach()
  endif()
  string(APPEND body "${own}")
  string(SHA1 sha "${body}")
  string(REPLACE ";" " " uses_text "${uses}")
  string(APPEND hpp "extern const Script ${name};\n")
  string(APPEND cpp "const Script ${name}{\"${name}\", R\"warden_lua(${body})warden_lua\", \"${sha}\"};\n\n")
  string(APPEND table "    {&${name}, \"${uses_text}\"},\n")
endforeach()

list(LENGTH files count)
string(APPEND hpp "
// How each script was assembled: the names of the prelude pieces its text
// starts with, space-separated, in order (\"\" for none).
struct Assembly {
  const Script* script;
  const char* prelude;
};
extern const Assembly assemblies[${count}];
")
string(APPEND cpp "const Assembly assemblies[${count}] = {\n${table}};\n\n")
string(APPEND hpp "\n}  // namespace warden::detail::scripts\n")
string(APPEND cpp "}  // namespace warden::detail::scripts\n")
file(MAKE_DIRECTORY "${OUT_DIR}")
file(WRITE "${OUT_DIR}/warden_scripts.hpp" "${hpp}")
file(WRITE "${OUT_DIR}/warden_scripts.cpp" "${cpp}")
