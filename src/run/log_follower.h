// LogFollower: vLLM's output read as it streams past `headroom run`, in bounded memory. Lines go to
// the startup-log parser (VllmLogParser) as they complete; the first lines (model, flags, version)
// and the last ones (a traceback) are kept for diagnose should vLLM fail; nothing else is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "headroom/vllm_log.h"
#include "run/process_host.h"
#include "util/sha256.h"

namespace headroom::run {

struct FollowerLimits {
  std::size_t max_line_bytes = 64 << 10;  // longer lines are cut to this (vLLM's longest, the config line, is ~4 KiB)
  std::size_t head_bytes = 1 << 20;       // the first lines kept for diagnose
  std::size_t tail_bytes = 4 << 20;       // the last lines kept for diagnose
};

class LogFollower {
 public:
  explicit LogFollower(FollowerLimits limits = {});

  // Feeds bytes of one stream. Streams are split into lines separately (a line never mixes stdout
  // and stderr); '\r' ends a line too, so a progress bar's redraws are lines of their own.
  void feed(StreamId stream, std::string_view bytes);
  // Ends the partial lines (the child exited).
  void finish();

  const LoggedRun& run() const { return m_parser.run(); }
  // vLLM has finished starting: "init engine ... took", "Starting vLLM API server", or later.
  bool ready() const { return run().stage >= StartupStage::engine_ready; }
  // vLLM serves requests ("Application startup complete"): nothing after this is parsed.
  bool serving() const { return run().stage >= StartupStage::serving; }

  // The kept lines, head then tail, one per line: what diagnose reads when vLLM fails.
  std::string kept_log() const;
  // SHA-256 of every byte fed so far (hex): the recording's content hash.
  std::string content_hash() const;

  std::int64_t lines() const { return m_lines; }
  std::int64_t bytes() const { return m_bytes; }
  std::int64_t cut_lines() const { return m_cut_lines; }  // lines longer than max_line_bytes
  bool binary_seen() const { return m_binary; }           // NUL bytes in the output

 private:
  struct Partial {
    std::string text;
    bool cutting = false;  // past max_line_bytes: the rest of the line is skipped
  };
  void end_line(Partial& p);
  void keep(std::string line);

  FollowerLimits m_limits;
  VllmLogParser m_parser;
  Partial m_partial[2];
  std::string m_head;
  bool m_head_full = false;
  std::deque<std::string> m_tail;
  std::size_t m_tail_bytes = 0;
  util::Sha256 m_hash;
  std::int64_t m_lines = 0, m_bytes = 0, m_cut_lines = 0;
  bool m_binary = false;
};

}  // namespace headroom::run
