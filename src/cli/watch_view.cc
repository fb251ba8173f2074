#include "cli/watch_view.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <ctime>

#include "cli/cli_common.h"
#include "util/strings.h"
#include "util/terminal_text.h"

namespace headroom::cli {

namespace {

constexpr const char* k_red = "\x1b[31m";
constexpr const char* k_yellow = "\x1b[33m";
constexpr const char* k_green = "\x1b[32m";
constexpr const char* k_bold = "\x1b[1m";
constexpr const char* k_dim = "\x1b[2m";

std::string clock_time(double unix_time_s) {
  std::time_t t = static_cast<std::time_t>(unix_time_s);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
  return buf;
}

std::string or_dash(const std::optional<double>& v, const char* format) {
  if (!v || std::isnan(*v)) return "-";
  return fmt::format(fmt::runtime(format), *v);
}

std::string count(const std::optional<double>& v) {
  if (!v || std::isnan(*v)) return "-";
  return util::with_commas(std::llround(*v));
}

std::string ms(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  return fmt::format("{:.0f} ms", *seconds * 1000);
}

std::string secs(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  return *seconds < 1 ? fmt::format("{:.0f} ms", *seconds * 1000) : fmt::format("{:.2f} s", *seconds);
}

std::string bar(double fraction, int width) {
  int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
  return "[" + std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.') + "]";
}

std::string basis_note(const watch::DerivedFigures& d) {
  if (d.quantile_basis == watch::QuantileBasis::since_start) return "since the server started";
  if (d.quantile_basis == watch::QuantileBasis::window) return fmt::format("over {:.0f} s", d.window_s);
  return "";
}

int terminal_width(std::FILE* out) {
  winsize ws{};
  if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 100;
}

// Wraps `text` at spaces to `width` columns, continuation lines indented by `indent`; spacing
// inside a line is kept (the frame aligns its columns with spaces).
std::vector<std::string> wrap(std::string text, std::size_t width, std::size_t indent) {
  std::vector<std::string> out;
  while (text.size() > width && width > indent + 10) {
    std::size_t cut = text.rfind(' ', width);
    if (cut == std::string::npos || cut <= indent) cut = width;
    out.push_back(text.substr(0, cut));
    std::size_t next = text.find_first_not_of(' ', cut);
    text = std::string(indent, ' ') + (next == std::string::npos ? "" : text.substr(next));
  }
  out.push_back(text);
  return out;
}

}  // namespace

WatchView::WatchView(std::FILE* out, ViewMode mode, Colour colour, std::string url, bool local_server)
    : m_out(out), m_mode(mode), m_colour(colour), m_url(std::move(url)), m_local(local_server) {}

std::vector<WatchView::Line> WatchView::frame(const watch::WatchSample& sample) const {
  std::vector<Line> lines;
  const watch::WatchSample& shown = sample.ok || !m_last_good ? sample : *m_last_good;
  lines.push_back({"headroom watch  " + m_url + "  " + clock_time(sample.unix_time_s), k_bold});
  if (!sample.ok && sample.error) {
    lines.push_back({fmt::format("  scrape failed ({} in a row): {}", sample.consecutive_failures, sample.error->message), k_red});
    lines.push_back({fmt::format("  retrying in {:g} s{}", sample.next_delay_s, m_last_good ? "; figures below are from the last good scrape" : ""), k_red});
  }
  if (!shown.snapshot) return lines;
  const watch::VllmSnapshot& s = *shown.snapshot;
  const watch::DerivedFigures& d = shown.derived;
  std::string models = s.model_names.empty() ? "-" : util::join(s.model_names, ", ");
  lines.push_back({fmt::format("  model         {} ({} engine{})", models, s.engines, s.engines == 1 ? "" : "s")});
  std::string kv = "  KV cache      -";
  if (s.kv_cache_usage) kv = fmt::format("  KV cache      {:5.1f}% {}", *s.kv_cache_usage * 100, bar(*s.kv_cache_usage, 20));
  if (s.cache_config && s.cache_config->num_gpu_blocks)
    kv += fmt::format("  {} blocks of {} tokens", util::with_commas(*s.cache_config->num_gpu_blocks), s.cache_config->block_size.value_or(16));
  lines.push_back({kv});
  std::string requests = fmt::format("  requests      {} running  {} waiting", count(s.requests_running), count(s.requests_waiting));
  if (s.requests_swapped) requests += fmt::format("  {} swapped", count(s.requests_swapped));
  lines.push_back({requests});
  lines.push_back({fmt::format("  preemptions   {}/s  ({} since start)", or_dash(d.preemptions_per_s, "{:.2f}"), count(s.preemptions_total))});
  std::string prompt = or_dash(d.prompt_tokens_per_s, "{:.0f}");
  std::string generation = or_dash(d.generation_tokens_per_s, "{:.0f}");
  std::string note = d.samples >= 2 ? fmt::format("over {:.0f} s", d.window_s) : "needs two scrapes";
  if (d.samples < 2 && s.avg_prompt_throughput_tokens_per_s) {  // V0 servers publish their own averages
    prompt = or_dash(s.avg_prompt_throughput_tokens_per_s, "{:.0f}");
    generation = or_dash(s.avg_generation_throughput_tokens_per_s, "{:.0f}");
    note = "server's own average";
  }
  lines.push_back({fmt::format("  throughput    prompt {} tok/s  generation {} tok/s  ({})", prompt, generation, note)});
  lines.push_back({fmt::format("  TTFT          p50 {}  p99 {}  ({})", secs(d.ttft_p50_s), secs(d.ttft_p99_s), basis_note(d))});
  lines.push_back({fmt::format("  TPOT          p50 {}  p99 {}", ms(d.tpot_p50_s), ms(d.tpot_p99_s))});
  if (d.prefix_cache_hit_rate)
    lines.push_back({fmt::format("  prefix cache  {:.1f}% of queried tokens hit", *d.prefix_cache_hit_rate * 100)});
  if (!shown.gpus.empty()) {
    for (const auto& g : shown.gpus)
      lines.push_back({fmt::format("  GPU {}         {:.1f} / {:.1f} GiB  {}", g.index, to_gib(g.used_bytes), to_gib(g.total_bytes), g.name)});
  } else {
    lines.push_back({m_local ? "  GPU memory    not probed" : "  GPU memory    not probed (remote server)", k_dim});
  }
  if (shown.kv_check) {
    const auto& k = *shown.kv_check;
    std::string text = k.live_blocks
                           ? fmt::format("  prediction    {} KV blocks predicted, {} live", util::with_commas(k.predicted_blocks), util::with_commas(*k.live_blocks))
                           : fmt::format("  prediction    {} KV blocks predicted; the server does not export vllm:cache_config_info", util::with_commas(k.predicted_blocks));
    lines.push_back({text, k.mismatch ? k_yellow : nullptr});
  }
  if (shown.skipped_lines > 0)
    lines.push_back({fmt::format("  page          {} malformed line{} skipped", shown.skipped_lines, shown.skipped_lines == 1 ? "" : "s"), k_yellow});
  if (shown.alerts.empty()) {
    lines.push_back({"  alerts        none", k_green});
  } else {
    for (const auto& a : shown.alerts) {
      const char* colour = a.severity == watch::Severity::critical ? k_red : k_yellow;
      lines.push_back({fmt::format("  {:<13} {}", std::string(to_string(a.severity)), a.summary), colour});
      lines.push_back({"                → " + a.action});
    }
  }
  return lines;
}

std::string WatchView::summary_line(const watch::WatchSample& sample) const {
  std::string t = clock_time(sample.unix_time_s);
  if (!sample.ok) return t + " scrape failed";
  const auto& s = *sample.snapshot;
  const auto& d = sample.derived;
  std::string kv = s.kv_cache_usage ? fmt::format("{:.1f}%", *s.kv_cache_usage * 100) : "-";
  std::string alerts;
  for (const auto& a : sample.alerts) alerts += (alerts.empty() ? "" : ",") + a.id;
  return fmt::format("{} kv={} running={} waiting={} preempt/s={} prompt_tok/s={} gen_tok/s={} ttft_p50={} ttft_p99={} "
                     "tpot_p50={} tpot_p99={} alerts={}",
                     t, kv, count(s.requests_running), count(s.requests_waiting), or_dash(d.preemptions_per_s, "{:.2f}"),
                     or_dash(d.prompt_tokens_per_s, "{:.0f}"), or_dash(d.generation_tokens_per_s, "{:.0f}"),
                     secs(d.ttft_p50_s), secs(d.ttft_p99_s), ms(d.tpot_p50_s), ms(d.tpot_p99_s), alerts.empty() ? "none" : alerts);
}

void WatchView::warn_about(const watch::WatchSample& sample) {
  if (!sample.ok && sample.error) {
    print_warning(fmt::format("scrape failed ({} in a row): {}; retrying in {:g} s", sample.consecutive_failures,
                              util::terminal_safe(sample.error->to_string()), sample.next_delay_s));
    return;
  }
  if (sample.skipped_lines > 0 && sample.skipped_lines != m_last_skipped_lines && !sample.page_problems.empty())
    print_warning(fmt::format("{} malformed line{} skipped; first: {}", sample.skipped_lines, sample.skipped_lines == 1 ? "" : "s",
                              util::terminal_safe(sample.page_problems.front().to_string())));
  m_last_skipped_lines = sample.skipped_lines;
}

void WatchView::show(const watch::WatchSample& sample) {
  if (m_mode != ViewMode::live) warn_about(sample);
  if (m_mode == ViewMode::lines) {
    if (!sample.ok) return;  // the warning on stderr says it
    std::fprintf(m_out, "%s\n", util::terminal_safe(summary_line(sample)).c_str());
    for (const auto& a : sample.alerts)
      std::fprintf(m_out, "  %s\n",
                   util::terminal_safe(std::string(to_string(a.severity)) + " " + a.id + ": " + a.summary + "; action: " + a.action)
                       .c_str());
    std::fflush(m_out);
    return;
  }
  bool colour = m_colour == Colour::on;
  std::size_t width = m_mode == ViewMode::live ? static_cast<std::size_t>(terminal_width(m_out)) - 1 : 100;
  std::string out;
  if (m_mode == ViewMode::live) {
    if (m_lines_drawn == 0) out += "\x1b[?25l";  // hide the cursor while redrawing
    else out += fmt::format("\x1b[{}F\x1b[J", m_lines_drawn);  // back to the frame's first line, clear below
  }
  int drawn = 0;
  for (const auto& line : frame(sample)) {
    // Model names, GPU names, errors and alert texts come from the server and the page it sent.
    for (const auto& part : wrap(util::terminal_safe(line.text), width, 18)) {
      std::string text = part.size() > width ? part.substr(0, width) : part;
      if (colour && line.colour != nullptr) out += std::string(line.colour) + text + "\x1b[0m\n";
      else out += text + "\n";
      ++drawn;
    }
  }
  std::fputs(out.c_str(), m_out);
  std::fflush(m_out);
  m_lines_drawn = drawn;
  if (sample.ok) m_last_good = sample;
}

void WatchView::finish() {
  if (m_mode == ViewMode::live && m_lines_drawn > 0) {
    std::fputs("\x1b[?25h", m_out);
    std::fflush(m_out);
  }
}

}  // namespace headroom::cli
