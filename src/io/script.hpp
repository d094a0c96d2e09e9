// A Lua script embedded at build time (see cmake/embed_lua.cmake).
#pragma once

namespace warden::detail {

struct Script {
  const char* name;  // file name without .lua
  const char* body;  // the exact text sent with EVAL
  const char* sha1;  // SHA1 of body, for EVALSHA
};

}  // namespace warden::detail
