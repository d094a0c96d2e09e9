// warden — distributed locks on Redis.
// WARDEN_API: what libwarden exports.
#pragma once

// warden is compiled with hidden symbol visibility (-fvisibility=hidden), so
// a shared libwarden exports only what is marked here: the public classes and
// functions of include/warden, never the internals in src/. Consumers see the
// same marks, which keeps a consumer built with -fvisibility=hidden linking
// against the shared library. The mark is the same for the static library;
// there it only matters when a consumer links static warden into a shared
// object of its own, which then exports warden's public API too.
#if defined(__GNUC__) || defined(__clang__)
#define WARDEN_API __attribute__((visibility("default")))
#else
#define WARDEN_API
#endif
