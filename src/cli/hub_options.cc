#include "cli/hub_options.h"

#include <unistd.h>

#include <cstdio>

#include "util/strings.h"

namespace headroom::cli {

void add_hub_options(CLI::App& app, HubOptions& o, RevisionOption revision) {
  app.add_flag("--offline", o.offline);
  app.add_flag("--quiet", o.quiet);  // not -q: that is vLLM's --quantization
  app.add_option("--hub-timeout", o.timeout_s);
  app.add_option("--hub-connect-timeout", o.connect_timeout_s);
  if (revision == RevisionOption::include) app.add_option("--revision", o.revision);
  // vLLM flags about the tokenizer and remote code change nothing headroom reads: accepted, ignored.
  app.add_option("--tokenizer");
  app.add_flag("--trust-remote-code");
}

const std::vector<std::string>& hub_value_flags() {
  static const std::vector<std::string> k = {"--hub-timeout", "--hub-connect-timeout"};
  return k;
}

const std::vector<std::string>& hub_bool_flags() {
  static const std::vector<std::string> k = {"--offline", "--quiet"};
  return k;
}

namespace {

std::string human_bytes(std::uint64_t b) {
  if (b < 1024 * 1024) return util::fixed(static_cast<double>(b) / 1024.0, 0) + " KiB";
  return util::fixed(static_cast<double>(b) / (1024.0 * 1024.0), 1) + " MiB";
}

}  // namespace

Result<ModelSpec> load_model_with_hub(const std::string& model_ref, const HubOptions& o) {
  hub::HubSettings settings = hub::settings_from_environment();
  if (o.offline) settings.offline = true;
  if (!o.revision.empty()) settings.revision = o.revision;
  if (o.timeout_s) {
    if (*o.timeout_s <= 0) return make_error(ErrorCode::invalid_argument, "expected a positive number of seconds", "--hub-timeout");
    settings.total_timeout_s = *o.timeout_s;
  }
  if (o.connect_timeout_s) {
    if (*o.connect_timeout_s <= 0)
      return make_error(ErrorCode::invalid_argument, "expected a positive number of seconds", "--hub-connect-timeout");
    settings.connect_timeout_s = *o.connect_timeout_s;
  }
  const bool progress = !o.quiet && isatty(STDOUT_FILENO) != 0 && isatty(STDERR_FILENO) != 0;
  bool drawn = false;
  if (progress) {
    settings.on_progress = [&drawn, &model_ref](const hub::FetchProgress& p) {
      std::fprintf(stderr, "\r\033[Kreading %s from the Hub: %d/%d files, %s", model_ref.c_str(), p.files_done,
                   p.files_total, human_bytes(p.bytes).c_str());
      std::fflush(stderr);
      drawn = true;
    };
  }
  ModelLoadOptions load;
  load.hub = &settings;
  load.on_note = [&](const std::string& note) {
    if (drawn) std::fputs("\r\033[K", stderr), drawn = false;
    if (!o.quiet) std::fprintf(stderr, "headroom: note: %s\n", note.c_str());
  };
  auto model = load_model(model_ref, load);
  if (drawn) std::fputs("\r\033[K", stderr);
  return model;
}

}  // namespace headroom::cli
