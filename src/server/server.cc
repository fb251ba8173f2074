// `headroom serve`: cpp-httplib wiring. Everything that is HTTP and not a route lives here, once:
// authentication, limits, CORS, error documents, metrics, the access log and the web page.
#include "headroom/server.h"

#include <httplib.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "server/api.h"
#include "server/connection_pool.h"
#include "server/httplib_access.h"
#include "server/metrics.h"
#include "util/embedded_data.h"

namespace headroom {

namespace {

using server::ApiResponse;

// The routes metrics know by name; anything else is "other", so label values stay bounded.
const char* route_name(const std::string& path) {
  static const char* const k_routes[] = {"/v1/check", "/v1/plan",   "/v1/diagnose", "/v1/gpus", "/v1/models", "/v1/record",
                                         "/v1/history", "/healthz", "/metrics",     "/openapi.json", "/"};
  for (const char* r : k_routes)
    if (path == r) return r;
  if (path.starts_with("/web/")) return "/web/";
  return "other";
}

bool is_public(const std::string& path) {
  return path == "/" || path == "/healthz" || path == "/openapi.json" || path == "/favicon.ico" || path.starts_with("/web/");
}

std::string content_type_for(const std::string& path) {
  auto ends = [&](const char* e) { return path.ends_with(e); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".json")) return "application/json";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

std::optional<std::string_view> web_file(std::string_view path) {
  for (const auto* f = embedded::web_files(); f->path != nullptr; ++f)
    if (path == f->path) return std::string_view(f->data, f->size);
  return std::nullopt;
}

// Compares SHA-256 digests with CRYPTO_memcmp: the time taken says nothing of the token, not
// even its length.
bool token_matches(const std::string& given, const std::string& expected) {
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), b);
  return CRYPTO_memcmp(a, b, sizeof a) == 0;
}

server::Query query_of(const httplib::Request& req) { return server::Query(req.params.begin(), req.params.end()); }

server::BodyReader body_reader(const httplib::ContentReader& reader) {
  return [&reader](const std::function<bool(const char*, std::size_t)>& receive) {
    return reader([&](const char* data, std::size_t size) { return receive(data, size); });
  };
}

// A body whose announced length is over the route's limit is refused before it is read (httplib
// would skip it and hand the route an empty body).
std::optional<server::ApiError> over_limit(const httplib::Request& req, std::size_t limit, const char* what) {
  if (!req.has_header("Content-Length")) return std::nullopt;
  const std::string text = req.get_header_value("Content-Length");
  char* end = nullptr;
  unsigned long long length = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str() || length <= limit) return std::nullopt;
  return server::ApiError{413, "payload_too_large", std::string("expected ") + what + " of at most " + std::to_string(limit) + " bytes",
                          "body"};
}

thread_local std::chrono::steady_clock::time_point t_started;
thread_local std::string t_error_code;

}  // namespace

struct Server::Impl {
  ServerOptions options;
  httplib::Server http;
  server::HistoryCache history;
  server::ResponseCache cache;
  server::Metrics metrics;
  KnowledgeBase kb;
  server::DiagnoserPool diagnosers;
  server::ApiContext context;
  std::unique_ptr<server::ConnectionPool> pool;
  int port = 0;

  Impl(const ServerOptions& o, KnowledgeBase knowledge)
      : options(o),
        history(default_history_location(o.db), o.no_history, o.history_refresh_ms),
        cache(o.cache_entries, o.cache_bytes),
        kb(std::move(knowledge)),
        diagnosers(kb),
        context{options, history, cache, kb, diagnosers} {}

  void send(httplib::Response& res, const ApiResponse& r) {
    res.status = r.status;
    // A body not read to its end leaves bytes the next request would be parsed from.
    if (r.status == 408 || r.status == 413) res.set_header("Connection", "close");
    res.set_content(r.body, r.content_type);
    t_error_code = r.error_code;
  }

  void send_error(httplib::Response& res, int status, const std::string& code, const std::string& message,
                  const std::string& where = "") {
    send(res, server::error_response({status, code, message, where}));
  }

  void install_routes();
};

void Server::Impl::install_routes() {
  using httplib::Request, httplib::Response, httplib::ContentReader;
  auto& h = http;
  h.Get("/healthz", [](const Request&, Response& res) { res.set_content("{\"status\":\"ok\"}\n", "application/json"); });
  h.Get("/metrics", [this](const Request&, Response& res) {
    res.set_content(metrics.render(cache.stats(), pool->open_connections()), "text/plain; version=0.0.4; charset=utf-8");
  });
  auto serve_file = [this](const std::string& name, Response& res) {
    auto file = web_file(name);
    if (!file) return send_error(res, 404, "not_found", "no such file", "/web/" + name);
    res.set_content(std::string(*file), content_type_for(name));
    res.set_header("Cache-Control", "no-cache");
  };
  h.Get("/", [serve_file](const Request&, Response& res) { serve_file("index.html", res); });
  h.Get("/openapi.json", [serve_file](const Request&, Response& res) { serve_file("openapi.json", res); });
  h.Get(R"(/web/([A-Za-z0-9_.-]+))", [serve_file](const Request& req, Response& res) { serve_file(req.matches[1], res); });

  auto json_route = [this](server::ApiResponse (*api)(server::ApiContext&, std::string_view)) {
    return [this, api](const Request& req, Response& res, const ContentReader& reader) {
      if (auto e = over_limit(req, options.max_body_bytes, "a JSON body")) return send(res, server::error_response(*e));
      auto body = server::read_small_body(body_reader(reader), options.max_body_bytes, options.request_timeout_s);
      if (!body) return send(res, server::error_response(body.error()));
      send(res, api(context, *body));
    };
  };
  h.Post("/v1/check", json_route(&server::api_check));
  h.Post("/v1/plan", json_route(&server::api_plan));
  h.Post("/v1/diagnose", [this](const Request& req, Response& res, const ContentReader& reader) {
    if (auto e = over_limit(req, options.max_log_bytes, "a log")) return send(res, server::error_response(*e));
    send(res, server::api_diagnose(context, body_reader(reader), query_of(req)));
  });
  h.Get("/v1/gpus", [this](const Request& req, Response& res) { send(res, server::api_gpus(context, query_of(req))); });
  h.Get("/v1/models", [this](const Request& req, Response& res) { send(res, server::api_models(context, query_of(req))); });
  if (options.allow_record) {
    h.Post("/v1/record", [this](const Request& req, Response& res, const ContentReader& reader) {
      if (auto e = over_limit(req, options.max_log_bytes, "a log")) return send(res, server::error_response(*e));
      send(res, server::api_record(context, body_reader(reader), query_of(req)));
    });
    h.Get("/v1/history", [this](const Request&, Response& res) { send(res, server::api_history(context)); });
  } else {
    auto refused = [this](const Request&, Response& res) {
      send_error(res, 404, "not_found", "this server does not keep a run history (start it with --allow-record)");
    };
    h.Post("/v1/record", refused);
    h.Get("/v1/history", refused);
  }
  if (!options.cors_origin.empty())
    h.Options(R"(/.*)", [](const Request&, Response& res) { res.status = 204; });
}

Result<std::unique_ptr<Server>> Server::create(const ServerOptions& o) {
  if (!is_loopback_host(o.host) && o.bearer_token.empty())
    return make_error(ErrorCode::invalid_argument,
                      "'" + o.host + "' is not a loopback address: a server others can reach needs a bearer token "
                      "(--token-file FILE)",
                      "--host");
  if (o.threads < 1 || o.max_connections < 1)
    return make_error(ErrorCode::invalid_argument, "expected at least one thread and one connection", "--threads");
  if (o.models_dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(*o.models_dir, ec))
      return make_error(ErrorCode::invalid_argument, "expected a folder of models, found none", *o.models_dir);
  }
  auto kb = KnowledgeBase::load({});
  if (!kb) return tl::unexpected(kb.error());
  // A client that goes away mid-answer, or a log scanner that stops reading its pipe, must not
  // kill the process.
  std::signal(SIGPIPE, SIG_IGN);

  std::unique_ptr<Server> s(new Server);
  s->m_impl = std::make_unique<Impl>(o, std::move(*kb));
  Impl& impl = *s->m_impl;
  auto& h = impl.http;
  server::PoolOptions pool;
  pool.threads = o.threads;
  pool.max_connections = o.max_connections;
  pool.max_client_connections = o.max_client_connections;
  pool.head_timeout = std::chrono::seconds(o.read_timeout_s);
  pool.request_timeout = std::chrono::seconds(o.request_timeout_s);
  pool.head.whole_body_bytes = o.max_body_bytes;  // JSON bodies arrive whole before a worker reads them
  impl.pool = std::make_unique<server::ConnectionPool>(
      pool, [&impl](int fd) { server::httplib_access::process_and_close(impl.http, fd); },
      [&impl](int status, const std::string& code) { impl.metrics.observe("other", status, 0.0, code); });
  h.set_read_timeout(o.read_timeout_s, 0);
  h.set_write_timeout(o.read_timeout_s, 0);
  // One request per connection: every request's head passes the reception (connection_pool.h)
  // before a worker reads it; a kept-alive connection would let httplib read the next head itself.
  h.set_keep_alive_max_count(1);
  h.set_tcp_nodelay(true);
  // httplib refuses larger bodies by their Content-Length (413) before a route reads them; the
  // routes bound what they read themselves (JSON bodies: max_body_bytes).
  h.set_payload_max_length(std::max(o.max_body_bytes, o.max_log_bytes));

  h.set_pre_routing_handler([&impl](const httplib::Request& req, httplib::Response& res) {
    t_started = std::chrono::steady_clock::now();
    t_error_code.clear();
    if (!impl.options.cors_origin.empty()) {
      res.set_header("Access-Control-Allow-Origin", impl.options.cors_origin);
      res.set_header("Vary", "Origin");
      if (req.method == "OPTIONS") {
        res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, Content-Encoding");
        res.set_header("Access-Control-Max-Age", "600");
      }
    }
    if (!impl.options.bearer_token.empty() && !is_public(req.path) && req.method != "OPTIONS") {
      const std::string auth = req.get_header_value("Authorization");
      if (!auth.starts_with("Bearer ") || !token_matches(auth.substr(7), impl.options.bearer_token)) {
        res.set_header("WWW-Authenticate", "Bearer");
        impl.send_error(res, 401, "unauthorized", "expected the header 'Authorization: Bearer TOKEN' with this server's token");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  h.set_error_handler(httplib::Server::HandlerWithResponse([&impl](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 413)
      impl.send_error(res, 413, "payload_too_large", "the body is larger than this server accepts", "body");
    else if (res.status == 404)
      impl.send_error(res, 404, "not_found", "no such route: " + req.method + " " + req.path + " (GET /openapi.json lists them)");
    else
      impl.send_error(res, res.status, res.status == 415 ? "unsupported_media_type" : "bad_request", "the request is not valid HTTP");
    return httplib::Server::HandlerResponse::Handled;
  }));
  h.set_exception_handler([&impl](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    // Never the exception's text: it may quote internals. The access log says which route.
    impl.send_error(res, 500, "internal", "the server failed to answer this request");
  });
  h.set_logger([&impl](const httplib::Request& req, const httplib::Response& res) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_started).count();
    impl.metrics.observe(route_name(req.path), res.status, seconds, t_error_code);
    if (impl.options.access_log)
      std::fprintf(stderr, "headroom serve: %s %s %s %d %.1f ms\n", req.remote_addr.c_str(), req.method.c_str(),
                   route_name(req.path), res.status, seconds * 1e3);
  });
  impl.install_routes();

  if (o.port == 0) {
    impl.port = h.bind_to_any_port(o.host);
    if (impl.port <= 0) return make_error(ErrorCode::unavailable, "cannot listen on this address", o.host);
  } else {
    if (!h.bind_to_port(o.host, o.port))
      return make_error(ErrorCode::unavailable, "cannot listen on this address (in use, or not an address of this host)",
                        o.host + ":" + std::to_string(o.port));
    impl.port = o.port;
  }
  return s;
}

Server::~Server() = default;

int Server::port() const { return m_impl->port; }

void Server::run() {
  auto& listen = server::httplib_access::listen_socket(m_impl->http);
  m_impl->pool->run(listen.load());
  listen = INVALID_SOCKET;  // closed by the pool
}

void Server::stop() { m_impl->pool->stop(); }

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

}  // namespace headroom
