// Compiled Hyperscan databases kept on disk between runs. Compiling the log signatures is most of
// what a short `headroom diagnose` costs (perf: hs_compile_multi was 78 % of a 0.54 s run on a
// one-line log); loading a compiled database takes milliseconds.
//
// Where: $HEADROOM_PATTERN_CACHE when set (a folder; "0" turns the cache off), else
// $XDG_CACHE_HOME/headroom/patterns, else ~/.cache/headroom/patterns. One file per set of
// patterns, named by a SHA-256 of Hyperscan's version, the flags and the patterns. A file that is
// cut short, altered or compiled for another CPU is not used (its own checksum, then Hyperscan's
// checks), and the patterns are compiled again and the file rewritten.
#pragma once

#include <hs/hs.h>

#include <string>
#include <vector>

namespace headroom::pattern_cache {

// The database compiled before for `patterns`, each with `flags`, in block mode; nullptr when
// there is none that can be used. The caller frees it with hs_free_database.
hs_database_t* load(const std::vector<std::string>& patterns, unsigned flags);

// Keeps `db`, compiled from `patterns` with `flags`, for the next run. Failures are silent: the
// cache only saves time.
void store(const std::vector<std::string>& patterns, unsigned flags, const hs_database_t* db);

// The file `patterns` and `flags` are kept in; "" when the cache is off or has no folder.
std::string path_for(const std::vector<std::string>& patterns, unsigned flags);

}  // namespace headroom::pattern_cache
