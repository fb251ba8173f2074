// `headroom serve`: the library's answers over HTTP (check, plan, diagnose, GPUs, models, run
// history) and the web page, with the limits and the authentication of a network service.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "headroom/error.h"

namespace headroom::hub {
struct HubSettings;
}

namespace headroom {

struct ServerOptions {
  std::string host = "127.0.0.1";  // --host; anything but loopback needs a bearer token
  int port = 8080;                 // --port; 0 picks a free port (see Server::port)
  int threads = 2;                 // connections served at once (each keeps its thread while open)
  int max_connections = 64;        // connections waiting or served; more are answered 503
  int max_client_connections = 16; // the same, from one client address
  std::string bearer_token;        // "" = no authentication (loopback only)
  std::size_t max_body_bytes = 1 << 20;            // JSON request bodies
  std::size_t max_log_bytes = std::size_t{256} << 20;  // /v1/diagnose and /v1/record logs (after gunzip)
  int read_timeout_s = 10;         // per read and write; a request's line and headers, in all
  int request_timeout_s = 60;      // reading one request body, in all
  std::optional<std::string> models_dir;  // local model folders allowed below this folder only
  std::string cors_origin;         // "" = no CORS headers
  bool live_gpus = false;          // GET /v1/gpus?live=1 and requests without "gpu" probe this host
  bool allow_record = false;       // POST /v1/record, GET /v1/history
  std::string db;                  // history location ("" = $HEADROOM_DB, else the default file)
  bool no_history = false;
  int history_refresh_ms = 2000;   // how long a read of the run history is reused
  std::size_t cache_entries = 4096;  // response cache bound (0 = no cache)
  std::size_t cache_bytes = std::size_t{64} << 20;
  bool access_log = true;          // one line per request on stderr (never headers or bodies)
  std::string hf_hub_cache;        // for GET /v1/models (default: as load_model finds it)
  // The Hugging Face Hub and headroom's Hub metadata cache for ids found nowhere local (nullptr:
  // catalogue and local Hugging Face cache only). The token in it never reaches an answer or a log.
  std::shared_ptr<const hub::HubSettings> hub;
};

// A running server. Routes and their documents: docs/serve.md and GET /openapi.json.
class Server {
 public:
  // Binds host:port. Errors: invalid_argument for options that are unsafe or inconsistent (a
  // non-loopback host without a token, a models folder that does not exist), unavailable when the
  // address cannot be bound.
  static Result<std::unique_ptr<Server>> create(const ServerOptions& options);
  ~Server();

  int port() const;
  // Serves until stop() (from another thread or a signal handler's thread).
  void run();
  void stop();

 private:
  Server() = default;
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback_host(const std::string& host);

}  // namespace headroom
