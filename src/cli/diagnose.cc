// headroom diagnose [LOG ...]: names the failure in vLLM logs and computes the flags that fix it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/cli_common.h"
#include "cli/cli_parse.h"
#include "cli/commands.h"
#include "cli/target_options.h"
#include "headroom/diagnose.h"
#include "headroom/gpu.h"
#include "util/strings.h"
#include "util/terminal_text.h"

namespace headroom::cli {

namespace {

std::string number_text(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return util::fixed(v, 2);
}

// "It started" and "it stopped before it was ready" are different answers.
void print_no_failure(const Diagnosis& d) {
  const LoggedRun& r = d.run;
  if (outcome_of(d) == LogOutcome::started) {
    std::printf("no failure found: vLLM started (%s, line %lld)\n", std::string(to_string(r.stage)).c_str(),
                static_cast<long long>(r.stage_line));
    return;
  }
  if (r.stage == StartupStage::not_started)
    std::printf("no failure found, but the log ends before vLLM was ready: no startup line of vLLM in it "
                "(not a vLLM log, or cut before startup)\n");
  else
    std::printf("no failure found, but the log ends before vLLM was ready: the last startup step is %s (line %lld); "
                "the log was cut short or vLLM is still starting\n",
                std::string(to_string(r.stage)).c_str(), static_cast<long long>(r.stage_line));
}

// The class as the text report names it: a wrapper message names none.
std::string class_text(const Finding& f) {
  return f.unclassified ? "no class (" + f.error_class + ": the log does not show why the engine died)" : reported_class(f);
}

void print_text(const Diagnosis& d, bool color) {
  auto bold = [&](const std::string& s) { return color ? "\x1b[1m" + s + "\x1b[0m" : s; };
  auto red = [&](const std::string& s) { return color ? "\x1b[1;31m" + s + "\x1b[0m" : s; };
  // Log lines, paths, model names and what the rules quote from them came from outside: printed
  // through terminal_safe, so a log cannot move the cursor, set a title or forge a line.
  auto safe = [](const std::string& s, std::size_t max_bytes = 4096) { return util::terminal_safe(s, max_bytes); };
  std::printf("%s: %s lines\n", safe(d.source).c_str(), util::with_commas(d.lines).c_str());
  if (!d.primary) {
    print_no_failure(d);
    return;
  }
  const Finding& f = *d.primary;
  std::string cause = f.cause.empty() ? "" : " (cause: " + safe(f.cause) + ")";
  std::printf("%s %s%s%s in phase %s, line %lld%s\n", red("failure:").c_str(), bold(class_text(f)).c_str(), cause.c_str(),
              f.look_alike ? " (not an out-of-memory error)" : "", safe(f.phase).c_str(), static_cast<long long>(f.line),
              f.occurrences > 1 ? (" (" + std::to_string(f.occurrences) + " times)").c_str() : "");
  std::printf("  %s\n", safe(f.message).c_str());
  if (f.title_cut) std::printf("  the error line is cut short: the class is read from what is left of it\n");
  std::printf("  phase from: %s%s\n", f.phase_basis.c_str(),
              f.phase_confidence ? (" (confidence " + util::fixed(*f.phase_confidence, 2) + ")").c_str() : "");
  if (!f.facts.empty() || !f.text_facts.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : f.facts) parts.push_back(k + "=" + number_text(v));
    for (const auto& [k, v] : f.text_facts) parts.push_back(k + "=" + v);
    std::printf("  facts: %s\n", safe(util::join(parts, ", ")).c_str());
  }
  const LoggedRun& r = d.run;
  std::vector<std::string> run;
  if (!r.version_text.empty()) run.push_back("vLLM " + r.version_text);
  if (!r.model.empty()) run.push_back(r.model);
  if (r.total_gib) run.push_back("GPU " + util::fixed(*r.total_gib, 2) + " GiB");
  if (r.flags.gpu_memory_utilization) run.push_back("util " + util::fixed(*r.flags.gpu_memory_utilization, 2));
  if (r.flags.max_model_len) run.push_back("max_model_len " + std::to_string(*r.flags.max_model_len));
  if (r.flags.tensor_parallel_size) run.push_back("tp " + std::to_string(*r.flags.tensor_parallel_size));
  if (r.weights_gib) run.push_back("weights " + util::fixed(*r.weights_gib, 2) + " GiB");
  if (r.activation_peak_gib) run.push_back("activation " + util::fixed(*r.activation_peak_gib, 2) + " GiB");
  if (r.kv_cache_gib) run.push_back("KV " + util::fixed(*r.kv_cache_gib, 2) + " GiB");
  if (!run.empty()) std::printf("run: %s\n", safe(util::join(run, ", ")).c_str());
  if (!d.fixes.empty()) {
    std::printf("%s\n", bold("fixes:").c_str());
    int i = 0;
    for (const auto& s : d.fixes) {
      std::vector<std::string> ch;
      for (const auto& [flag, value] : s.changes) ch.push_back(flag == "ENV" ? value : (value.empty() ? flag : flag + " " + value));
      std::string what = ch.empty() ? s.action : util::join(ch, " ");
      if (what.empty()) continue;  // neither a flag nor an action: nothing the user can do with it
      std::printf("  %d. %s  (confidence %.2f, %s)\n", ++i, safe(what).c_str(),
                  s.confidence, s.basis.c_str());
      std::printf("     why: %s\n", safe(s.why).c_str());
      if (!s.command.empty()) std::printf("     %s\n", safe(s.command).c_str());
    }
  }
  if (!d.dead_ends.empty()) {
    std::printf("%s\n", bold("dead ends:").c_str());
    for (const auto& de : d.dead_ends) std::printf("  - %s: %s\n", safe(de.action).c_str(), safe(de.why_fails).c_str());
  }
  for (const auto& n : d.notes) std::printf("note: %s\n", safe(n).c_str());
  if (!d.findings.empty()) {
    std::printf("other findings:\n");
    for (const auto& o : d.findings)
      std::printf("  line %lld: %s (%s)%s: %s\n", static_cast<long long>(o.line), class_text(o).c_str(), safe(o.phase).c_str(),
                  o.occurrences > 1 ? (" x" + std::to_string(o.occurrences)).c_str() : "",
                  safe(o.message, 160).c_str());
  }
}

}  // namespace

// The run's context from the command line: --model, --gpu, and a vLLM command after "--".
Result<RunContext> read_context(const std::string& model, const std::string& gpu, const Args& vllm_args) {
  RunContext context;
  if (!vllm_args.empty()) {
    auto cmd = resolve_vllm_command(vllm_args, EntrypointOptions{});
    if (!cmd) return tl::unexpected(cmd.error());
    for (const auto& w : cmd->warnings) print_warning(w);
    context.model = cmd->model;
    context.flags = cmd->flags;
  }
  if (!model.empty()) context.model = model;
  if (!gpu.empty()) {
    auto spec = GpuCatalog::builtin().find(split_gpu_count(gpu).name);
    if (!spec) return make_error(spec.error().code, spec.error().message, "--gpu");
    context.gpu_total_gib = spec->total_gib();
    context.gpu_name = spec->name;
  }
  return context;
}

int run_diagnose(const Args& all_args) {
  // Everything after "--" is the vLLM command that produced the log.
  Args args, vllm_args;
  auto dashes = std::find(all_args.begin(), all_args.end(), "--");
  args.assign(all_args.begin(), dashes);
  if (dashes != all_args.end()) vllm_args.assign(dashes + 1, all_args.end());
  CLI::App app{"Names the failure in vLLM logs (plain or gzip; standard input when no LOG or '-'), the phase it "
               "happened in and its numbers, and computes the flags that fix it.",
               "headroom diagnose"};
  std::vector<std::string> logs;
  std::vector<std::string> kb_dirs;
  std::string format_text = "text";
  std::string color_text = "auto";
  int gpus = 0;
  app.add_option("LOG", logs, "vLLM log files ('-' = standard input)");
  app.add_option("--kb", kb_dirs, "extra knowledge-base directory of *.json records (also HEADROOM_KB_PATH)");
  app.add_option("--format", format_text, "text or json");
  app.add_option("--color", color_text, "auto, always or never");
  app.add_option("--gpus", gpus, "GPUs available, for tensor-parallel suggestions");
  std::string model, gpu;
  app.add_option("--model", model, "the model the log comes from, when the log does not name it (catalogue id, folder)");
  app.add_option("--gpu", gpu, "the GPU the log comes from (catalogue name), when the log does not give its memory");
  app.footer("After --, the vLLM command that produced the log (as `check` takes it): its flags fill what the log "
             "leaves out.\nexit: 0 no failure and vLLM started, 3 a failure found, 4 no failure but the log ends "
             "before vLLM was ready, 1 error, 2 bad usage");
  if (auto rc = parse_or_exit(app, args, "diagnose")) return *rc;
  auto context = read_context(model, gpu, vllm_args);
  if (!context) return print_error(context.error()), k_exit_usage;
  auto format = parse_format(format_text);
  if (!format) return print_error(format.error()), k_exit_usage;
  auto color = parse_color(color_text);
  if (!color) return print_error(color.error()), k_exit_usage;
  auto kb = KnowledgeBase::load(kb_dirs);
  if (!kb) return print_error(kb.error()), k_exit_failure;
  if (logs.empty()) logs.push_back("-");
  auto engine = prediction_fix_engine();
  bool tty = isatty(STDERR_FILENO) != 0;
  nlohmann::json all = nlohmann::json::array();
  bool failure_found = false;
  bool incomplete = false;
  int status = k_exit_ok;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    auto source = open_log(logs[i]);
    if (!source) {
      print_error(source.error());
      status = k_exit_failure;
      continue;
    }
    DiagnoseOptions options;
    options.context = *context;
    options.fix.engine = engine.get();
    if (gpus > 0) options.fix.gpus = gpus;
    auto last = std::chrono::steady_clock::now();
    bool shown = false;
    if (tty) {
      std::string name = (*source)->name();
      options.scan.progress = [&, name](std::uint64_t done, std::optional<std::uint64_t> total) {
        if (!total || *total < (64u << 20)) return;
        auto now = std::chrono::steady_clock::now();
        if (now - last < std::chrono::milliseconds(200)) return;
        last = now;
        shown = true;
        std::fprintf(stderr, "\rheadroom: reading %s %3d%% (%llu/%llu MiB)", name.c_str(),
                     static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(*total)),
                     static_cast<unsigned long long>(done >> 20), static_cast<unsigned long long>(*total >> 20));
      };
    }
    auto d = diagnose(**source, *kb, options);
    if (shown) std::fprintf(stderr, "\r\x1b[K");
    if (!d) {
      print_error(d.error());
      status = k_exit_failure;
      continue;
    }
    for (const auto& w : d->warnings) print_warning(d->source + ": " + w);
    if (d->bytes == 0) print_warning(d->source + ": the log is empty; nothing to diagnose");
    else if (outcome_of(*d) == LogOutcome::incomplete)
      print_warning(d->source + ": the log ends before vLLM was ready and shows no failure (exit 4)");
    failure_found = failure_found || d->primary.has_value();
    incomplete = incomplete || outcome_of(*d) == LogOutcome::incomplete;
    if (*format == Format::json) {
      all.push_back(to_json(*d));
    } else {
      if (i > 0) std::printf("\n");
      print_text(*d, use_color(*color));
    }
  }
  if (*format == Format::json) {
    if (all.size() == 1) std::printf("%s\n", all[0].dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    else std::printf("%s\n", nlohmann::json({{"schema_version", 1}, {"diagnoses", all}}).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  if (status != k_exit_ok) return status;
  if (failure_found) return k_exit_negative;
  return incomplete ? k_exit_inconclusive : k_exit_ok;
}

}  // namespace headroom::cli
