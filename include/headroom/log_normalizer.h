// LogNormalizer: turns log lines as people paste them back into the lines vLLM printed, as a
// stream in bounded memory: colour escapes (real ESC and their textual forms), the prefixes that
// containers, process managers and log collectors put in front of each line, lines wrapped at a
// terminal's width, and lines that a viewer glued together. Each output line keeps the number of
// the input line it starts on. Lines exported by log collectors as JSON objects (Docker's json-file
// driver and Fluent Bit's "log", journalctl -o json's "MESSAGE", Loki's "line", Google Cloud
// Logging's "textPayload" or "jsonPayload.message", and "message"/"msg" of most others) are read as
// the text they carry; Docker's pieces of one long line (a "log" without its final newline) are
// joined first.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// One normalised line: its text and the input lines (1-based, inclusive) it came from.
struct NormalizedLine {
  std::int64_t first_line = 0;
  std::int64_t last_line = 0;
  std::string_view text;  // valid only during the callback
};

class LogNormalizer {
 public:
  using Emit = std::function<void(const NormalizedLine&)>;

  // A joined line never grows past `max_line_bytes`: the text so far is emitted and joining starts
  // again, so memory stays bounded whatever the input.
  explicit LogNormalizer(Emit emit, std::size_t max_line_bytes = 1 << 20);

  // Feeds the next input line (without its newline). Output lines come out in order, possibly one
  // line late: a line is held until the next one shows whether it continues it.
  void feed(std::int64_t line_number, std::string_view raw);

  // Emits the line still held. Call once after the last line.
  void finish();

 private:
  void feed_record(std::int64_t line_number, std::string_view raw);
  void feed_line(std::int64_t line_number, std::string_view raw);
  void finish_partial();
  void feed_piece(std::int64_t line_number, std::string_view rest, std::string tags, std::size_t width);
  void flush();

  Emit m_emit;
  std::size_t m_max_line_bytes;
  // The paragraph being joined: its segments' text, the prefix tags of its first line, and the
  // display width of each input line in it (the terminal width shows in these).
  std::string m_text;
  std::string m_header;  // vLLM's own header of the first line ("ERROR 03-20 23:26:06 [core.py:340] ")
  std::string m_tags;    // the non-timestamp prefixes of the first line, to tell streams apart
  std::vector<std::size_t> m_segment_starts;  // offsets in m_text where each joined segment starts
  std::vector<std::size_t> m_widths;          // display width of each input line of the paragraph
  std::int64_t m_first = 0;
  std::int64_t m_last = 0;
  std::size_t m_wrap_width = 0;  // a terminal width seen in an earlier paragraph (0: none yet)
  std::string m_scratch;
  // A structured record's text whose end has not come yet (Docker splits lines over 16 KiB).
  std::string m_partial;
  std::int64_t m_partial_line = 0;
};

// Removes ANSI escape sequences from `line`: ESC-introduced CSI/OSC sequences, their textual
// forms (`#033[`, `\x1b[`, `\033[`, `\e[`, `\u001b[`, `^[[`) and the remains of a pasted colour
// code whose ESC was lost (`[1;36m`, `[0m`).
std::string strip_ansi(std::string_view line);

// The number of leading bytes of `line` (already free of colour codes) that are prefixes added
// around vLLM's output: timestamps, `[pod/name/container]`, docker compose `name  | `, systemd
// journal `Mon DD HH:MM:SS host unit[pid]: `, Ray `(raylet)` and `(pid=N, ip=A)`, vLLM's
// `(EngineCore_DP0 pid=N)`, `(VllmWorker rank=N pid=N)`, torch's `[rank0]:`, bracketed levels.
// `tags`, when not null, receives the non-timestamp prefixes (to tell interleaved streams apart).
std::size_t log_prefix_length(std::string_view line, std::string* tags = nullptr);

}  // namespace headroom
