// headroom's optional parts (the libcurl HTTP transports, the PostgreSQL history store) are
// shared objects built beside the binary and loaded at their first use, so that a command that
// does not use them does not load libcurl, libpqxx and the libraries those bring.
#pragma once

#include <string>
#include <vector>

#include "headroom/error.h"

namespace headroom::plugin {

// The folders searched for a plugin, in order: $HEADROOM_PLUGIN_DIR when set; the folder of the
// object that holds this library (the headroom binary, or a shared object that links the library,
// such as a Python extension); the folder of the running executable; the build folder the library
// was built in.
std::vector<std::string> search_dirs();

// The address of the function `entry` in the plugin file `file` ("headroom_curl.so"), loaded the
// first time it is asked for and kept loaded. Thread-safe. Errors: unavailable, saying where it
// looked, or why the file found could not be loaded (a missing library, an undefined symbol).
Result<void*> entry_point(const std::string& file, const char* entry);

}  // namespace headroom::plugin
