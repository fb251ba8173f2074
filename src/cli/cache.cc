// headroom cache list|clear: headroom's Hub metadata cache (what was read of Hub models).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/hub.h"
#include "util/strings.h"

namespace headroom::cli {

namespace {

constexpr const char* k_cache_help = R"(usage: headroom cache list [--format text|json]
       headroom cache clear [REPO]

headroom's Hub metadata cache: the config files and safetensors headers read from the Hugging Face
Hub, one entry per repo and commit, under $XDG_CACHE_HOME/headroom/hub (default
~/.cache/headroom/hub). It holds no weights and no token.

  list      the cached repos: commit, the revisions that pointed at it, shards, size, when read
  clear     removes every entry, or those of REPO
)";

std::string date(std::int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

int run_list(const hub::HubCache& cache, Format format) {
  auto entries = cache.list();
  if (format == Format::json) {
    nlohmann::json j = {{"schema_version", 1}, {"cache_dir", cache.dir()}, {"entries", nlohmann::json::array()}};
    for (const auto& e : entries)
      j["entries"].push_back({{"repo", e.repo}, {"sha", e.sha}, {"refs", e.refs}, {"shards", e.shard_count},
                              {"bytes", e.bytes}, {"fetched_unix_s", e.fetched_unix_s}});
    std::printf("%s\n", j.dump(2).c_str());
    return k_exit_ok;
  }
  if (entries.empty()) {
    std::printf("headroom's Hub cache is empty (%s)\n", cache.dir().c_str());
    return k_exit_ok;
  }
  std::printf("headroom's Hub cache: %s\n\n", cache.dir().c_str());
  std::printf("%-44s  %-12s  %-12s  %6s  %9s  %s\n", "REPO", "COMMIT", "REVISIONS", "SHARDS", "KiB", "READ (UTC)");
  for (const auto& e : entries)
    std::printf("%-44s  %-12s  %-12s  %6d  %9.0f  %s\n", e.repo.c_str(), e.sha.substr(0, 12).c_str(),
                e.refs.empty() ? "-" : util::join(e.refs, ",").c_str(), e.shard_count, static_cast<double>(e.bytes) / 1024.0,
                date(e.fetched_unix_s).c_str());
  return k_exit_ok;
}

}  // namespace

int run_cache(const Args& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(k_cache_help, stdout);
      return k_exit_ok;
    }
  std::string action, repo, format_text = "text";
  CLI::App app{"headroom cache"};
  app.add_option("action", action);
  app.add_option("repo", repo);
  app.add_option("--format", format_text);
  if (auto rc = parse_or_exit(app, args, "cache")) return *rc;
  auto format = parse_format(format_text);
  if (!format) return print_error(format.error()), k_exit_usage;
  hub::HubCache cache(hub::settings_from_environment().cache_dir);
  if (action == "list") {
    if (!repo.empty()) return print_error("cache list takes no REPO (got '" + repo + "')"), k_exit_usage;
    return run_list(cache, *format);
  }
  if (action == "clear") {
    auto removed = cache.clear(repo);
    if (!removed) return print_error(removed.error()), k_exit_failure;
    std::printf("removed %d cached commit%s%s from %s\n", *removed, *removed == 1 ? "" : "s",
                repo.empty() ? "" : (" of " + repo).c_str(), cache.dir().c_str());
    return k_exit_ok;
  }
  print_error(action.empty() ? "cache: expected list or clear (see 'headroom cache --help')"
                             : "cache: unknown action '" + action + "': expected list or clear");
  return k_exit_usage;
}

}  // namespace headroom::cli
