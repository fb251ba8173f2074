// headroom serve [--host H] [--port P] [options]: the library's answers over HTTP and the web page.
#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <thread>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "headroom/hub.h"
#include "headroom/server.h"
#include "headroom/vllm_config.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::cli {

namespace {

constexpr const char* k_serve_help = R"(usage: headroom serve [--host H] [--port P] [options]

Answers check, plan and diagnose over HTTP with the documents of --format json, and serves a web
page at / for people. API: POST /v1/check, /v1/plan, /v1/diagnose; GET /v1/gpus, /v1/models?q=,
/healthz, /metrics, /openapi.json; with --allow-record POST /v1/record and GET /v1/history.
docs/serve.md has the details, a systemd unit and a Kubernetes Deployment.

network:
  --host H              address to listen on (default 127.0.0.1; anything but loopback needs --token-file)
  --port P              port (default 8080; 0 picks a free one, printed on stderr)
  --token-file FILE     bearer token clients must send (Authorization: Bearer TOKEN); first line of FILE
  --cors-origin ORIGIN  allow this browser origin (e.g. https://tools.example.com); default: no CORS
limits:
  --threads N           requests answered at once (default 8); a connection reaches a thread only
                        once its request line and headers have arrived
  --max-connections N   connections open or waiting; more are answered 503 (default 64)
  --max-client-connections N  the same, from one client address (default 16)
  --max-body-bytes N    JSON request bodies (default 1M; K/M/G suffixes as vLLM reads them)
  --max-log-bytes N     logs for /v1/diagnose and /v1/record, after gunzip (default 256M)
  --read-timeout S      seconds per read or write, and for a request's line and headers in all (default 10)
  --request-timeout S   seconds to receive one request body (default 60)
models and GPUs:
  --models-dir DIR      allow local model folders below DIR (default: none; catalogue and Hugging
                        Face ids only)
  --live-gpus           let requests without "gpu" use this host's GPUs, and GET /v1/gpus?live=1
  --offline             never ask the Hugging Face Hub (HF_HUB_OFFLINE=1 too); ids then come from the
                        local caches and the catalogue (default: the Hub, HF_ENDPOINT, HF_TOKEN)
  --hub-connect-timeout S  fall back to the catalogue when the Hub answers no connection in S s (default 1)
run history:
  --db URL              SQLite file or postgresql:// URL (default: $HEADROOM_DB, else
                        $XDG_DATA_HOME/headroom/history.db; read by check and plan, never created
                        except by /v1/record)
  --no-history          ignore the run history
  --allow-record        accept POST /v1/record and GET /v1/history
  --history-refresh-ms N  reuse a read of the history this long (default 2000)
other:
  --cache-entries N     answers of check and plan kept (default 4096; 0 = none)
  --no-access-log       no line per request on stderr
exit: 0 after SIGINT or SIGTERM, 1 when it cannot listen, 2 bad usage
)";

Result<std::string> read_token(const std::string& path) {
  auto text = util::read_file(path);
  if (!text) return tl::unexpected(text.error());
  std::string token = util::trim(text->substr(0, text->find('\n')));
  if (token.empty()) return make_error(ErrorCode::invalid_argument, "expected a token on the first line, found none", path);
  return token;
}

}  // namespace

int run_serve(const Args& args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h") return std::fputs(k_serve_help, stdout), k_exit_ok;
  ServerOptions o;
  o.threads = 8;
  std::string token_file, max_body = "1M", max_log = "256M", models_dir;
  bool no_access_log = false;
  CLI::App app{"headroom serve"};
  app.add_option("--host", o.host);
  app.add_option("--port", o.port)->check(CLI::Range(0, 65535));
  app.add_option("--token-file", token_file);
  app.add_option("--cors-origin", o.cors_origin);
  app.add_option("--threads", o.threads)->check(CLI::Range(1, 1024));
  app.add_option("--max-connections", o.max_connections)->check(CLI::Range(1, 100000));
  app.add_option("--max-client-connections", o.max_client_connections)->check(CLI::Range(1, 100000));
  app.add_option("--max-body-bytes", max_body);
  app.add_option("--max-log-bytes", max_log);
  app.add_option("--read-timeout", o.read_timeout_s)->check(CLI::Range(1, 3600));
  app.add_option("--request-timeout", o.request_timeout_s)->check(CLI::Range(1, 86400));
  app.add_option("--models-dir", models_dir);
  app.add_flag("--live-gpus", o.live_gpus);
  bool offline = false;
  double hub_connect_timeout_s = 1.0;
  app.add_flag("--offline", offline);
  app.add_option("--hub-connect-timeout", hub_connect_timeout_s)->check(CLI::Range(0.01, 600.0));
  app.add_option("--db", o.db);
  app.add_flag("--no-history", o.no_history);
  app.add_flag("--allow-record", o.allow_record);
  app.add_option("--history-refresh-ms", o.history_refresh_ms)->check(CLI::Range(0, 86400000));
  app.add_option("--cache-entries", o.cache_entries);
  app.add_flag("--no-access-log", no_access_log);
  if (auto rc = parse_or_exit(app, args, "serve")) return *rc;
  o.access_log = !no_access_log;
  {
    auto hub = std::make_shared<hub::HubSettings>(hub::settings_from_environment());
    hub->offline = hub->offline || offline;
    hub->connect_timeout_s = hub_connect_timeout_s;
    o.hub = std::move(hub);
  }
  if (!models_dir.empty()) o.models_dir = models_dir;
  for (auto [text, flag, out] : {std::tuple{&max_body, "--max-body-bytes", &o.max_body_bytes},
                                 std::tuple{&max_log, "--max-log-bytes", &o.max_log_bytes}}) {
    auto bytes = parse_human_bytes(*text);
    if (!bytes || *bytes <= 0) {
      print_error(Error{ErrorCode::invalid_argument, "expected a positive size (1M, 256M, 1048576), got '" + *text + "'", flag});
      return k_exit_usage;
    }
    *out = static_cast<std::size_t>(*bytes);
  }
  if (!token_file.empty()) {
    auto token = read_token(token_file);
    if (!token) return print_error(token.error()), k_exit_usage;
    o.bearer_token = *token;
  }

  // SIGINT and SIGTERM go to one thread that stops the server; every other thread blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = Server::create(o);
  if (!server) return print_error(server.error()), exit_code_for(server.error());
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    std::fprintf(stderr, "headroom serve: stopping (signal %d)\n", sig);
    (*server)->stop();
  });
  std::string shown_host = o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host;
  std::fprintf(stderr, "headroom serve: listening on http://%s:%d (%d threads%s%s)\n", shown_host.c_str(), (*server)->port(),
               o.threads, o.bearer_token.empty() ? "" : ", bearer token required", o.allow_record ? ", recording runs" : "");
  (*server)->run();
  // run() returns after stop(); when it returned for another reason, wake the waiter.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return k_exit_ok;
}

}  // namespace headroom::cli
