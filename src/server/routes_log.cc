// POST /v1/diagnose (`headroom diagnose --format json`) and POST /v1/record (`headroom record
// --format json`): a vLLM log in the body, plain or gzip, at most options.max_log_bytes.
// diagnose streams the body through a pipe into the scanner, which runs while the body arrives;
// record keeps the body in an unlinked temporary file because it reads the log twice (hash, scan).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "headroom/diagnose.h"
#include "headroom/history.h"
#include "server/api.h"

namespace headroom::server {

namespace {

std::string dump(const nlohmann::json& j) { return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

std::string query_value(const Query& query, const std::string& key) {
  auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

ApiError too_large(std::size_t limit, const char* what) {
  return {413, "payload_too_large", std::string("expected ") + what + " of at most " + std::to_string(limit) + " bytes", "body"};
}

ApiError timed_out(int seconds) {
  return {408, "timeout", "the request body did not arrive within " + std::to_string(seconds) + " s", "body"};
}

// Writes all of `data` to `fd`; false when the reader has gone (EPIPE) or on an error.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Feeds the body to `sink` with the size limit and the deadline; the error says which one stopped it.
std::optional<ApiError> pump(const BodyReader& read, std::size_t limit, int timeout_s, const char* what,
                             const std::function<bool(const char*, std::size_t)>& sink) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::size_t total = 0;
  std::optional<ApiError> stopped;
  bool sink_stopped = false;
  bool complete = read([&](const char* data, std::size_t size) {
    total += size;
    if (total > limit) stopped = too_large(limit, what);
    else if (std::chrono::steady_clock::now() > deadline) stopped = timed_out(timeout_s);
    if (stopped) return false;
    sink_stopped = !sink(data, size);
    return !sink_stopped;
  });
  // The sink stops early only when its reader has an answer already (the scanner found binary
  // data); anything else that ends the body early is a broken request.
  if (!complete && !stopped && !sink_stopped)
    stopped = ApiError{400, "bad_request", std::string("expected ") + what + ", the body ended early or could not be read", "body"};
  return stopped;
}

// The log's name in documents and errors: the request body, never a server-side path.
ApiError body_error(const Error& e, const std::string& path) {
  ApiError out = from_library(e);
  if (out.where == path || out.where.empty()) out.where = "body";
  return out;
}

// A source that reads the pipe through open_log (which detects gzip) and names itself "request".
class RenamedSource : public ByteSource {
 public:
  explicit RenamedSource(std::unique_ptr<ByteSource> inner) : m_inner(std::move(inner)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override { return m_inner->read(buffer, capacity); }
  std::string name() const override { return "request"; }

 private:
  std::unique_ptr<ByteSource> m_inner;
};

}  // namespace

ApiResult<std::string> read_small_body(const BodyReader& read, std::size_t limit, int timeout_s) {
  std::string body;
  auto stopped = pump(read, limit, timeout_s, "a JSON body", [&](const char* data, std::size_t size) {
    body.append(data, size);
    return true;
  });
  if (stopped) return tl::unexpected(*stopped);
  return body;
}

ApiResponse api_diagnose(ApiContext& ctx, const BodyReader& read, const Query& query) {
  std::optional<int> gpus;
  if (std::string g = query_value(query, "gpus"); !g.empty()) {
    char* end = nullptr;
    long n = std::strtol(g.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 4096)
      return error_response({422, "invalid_argument", "expected a GPU count between 1 and 4096, got '" + g + "'", "gpus"});
    gpus = static_cast<int>(n);
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return error_response({500, "io_error", "cannot create a pipe", ""});
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  Result<Diagnosis> result = make_error(ErrorCode::internal, "diagnosis did not run");
  std::thread worker([&] {
    auto opened = open_log(path);
    // The scanner holds its own descriptor now; closing ours lets the writer see EPIPE if the
    // scanner stops early (binary data), instead of blocking on a full pipe.
    ::close(fds[0]);
    if (!opened) {
      result = tl::unexpected(opened.error());
      return;
    }
    RenamedSource source(std::move(*opened));
    auto engine = prediction_fix_engine();
    DiagnoseOptions options;
    options.fix.engine = engine.get();
    options.fix.gpus = gpus;
    auto diagnoser = ctx.diagnosers.acquire();
    if (!diagnoser) {
      result = tl::unexpected(diagnoser.error());
      return;
    }
    result = (*diagnoser)->diagnose(source, options);
  });
  auto stopped = pump(read, ctx.options.max_log_bytes, ctx.options.request_timeout_s, "a log",
                      [&](const char* data, std::size_t size) { return write_all(fds[1], data, size); });
  ::close(fds[1]);
  worker.join();
  if (stopped) return error_response(*stopped);
  if (!result) return error_response(body_error(result.error(), path));
  return json_response(dump(to_json(*result)));
}

ApiResponse api_record(ApiContext& ctx, const BodyReader& read, const Query& query) {
  std::optional<RunOutcome> outcome;
  std::string outcome_text = query_value(query, "outcome");
  if (outcome_text == "ok") outcome = RunOutcome::ok;
  else if (outcome_text == "failed") outcome = RunOutcome::failed;
  else if (!outcome_text.empty())
    return error_response({422, "invalid_argument", "expected ok or failed, got '" + outcome_text + "'", "outcome"});
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/headroom-record-XXXXXX";
  int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (fd < 0) return error_response({500, "io_error", "cannot create a temporary file", ""});
  ::unlink(tmpl.c_str());
  auto stopped = pump(read, ctx.options.max_log_bytes, ctx.options.request_timeout_s, "a log",
                      [&](const char* data, std::size_t size) { return write_all(fd, data, size); });
  if (stopped) {
    ::close(fd);
    return error_response(*stopped);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  auto record = record_from_log(path, ctx.kb, outcome);
  ::close(fd);
  if (!record) return error_response(body_error(record.error(), path));
  record->source = "headroom serve: POST /v1/record";
  auto store = open_history(ctx.history.location(), OpenMode::create);
  if (!store) return error_response(from_library(store.error()));
  auto added = (*store)->add(*record);
  if (!added) return error_response(from_library(added.error()));
  ctx.history.invalidate();
  const RunRecord& r = *record;
  nlohmann::json rows = nlohmann::json::array();
  rows.push_back({{"log", "request"}, {"id", added->id}, {"inserted", added->inserted}, {"outcome", to_string(r.outcome)},
                  {"failure_class", r.failure_class}, {"model", r.model}, {"gpu_name", r.gpu_name},
                  {"vllm_version", r.vllm_version}});
  return json_response(dump({{"schema_version", 1}, {"database", (*store)->description()}, {"records", rows}}));
}

}  // namespace headroom::server
