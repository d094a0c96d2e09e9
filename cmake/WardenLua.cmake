# warden_embed_lua(<out-var> <lua files>...)
# Generates generated/warden_scripts.{hpp,cpp}: one detail::Script per file,
# holding its text and SHA1. A script whose first line is
# "--@prelude <name>..." is sent with lua/prelude/<name>.lua prepended, in
# that order (see lua/README.md). The SHA1 is computed when the build runs,
# from the exact bytes sent to Redis, so EVALSHA always names the embedded text.
set(WARDEN_LUA_GENERATOR ${CMAKE_CURRENT_LIST_DIR}/embed_lua.cmake)

function(warden_embed_lua out_var)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(outputs ${out_dir}/warden_scripts.hpp ${out_dir}/warden_scripts.cpp)
  list(GET ARGN 0 first)
  get_filename_component(lua_dir "${first}" DIRECTORY)
  file(GLOB prelude_files CONFIGURE_DEPENDS ${lua_dir}/prelude/*.lua)
  string(REPLACE ";" "|" file_list "${ARGN}")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} "-DOUT_DIR=${out_dir}" "-DLUA_FILES=${file_list}" "-DPRELUDE_DIR=${lua_dir}/prelude"
            -P ${WARDEN_LUA_GENERATOR}
    DEPENDS ${ARGN} ${prelude_files} ${WARDEN_LUA_GENERATOR}
    COMMENT "Embedding Lua scripts"
    VERBATIM)
  set(${out_var} ${outputs} PARENT_SCOPE)
endfunction()
