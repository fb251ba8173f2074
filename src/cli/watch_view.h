// The terminal view of `headroom watch`: a frame redrawn in place on a terminal, one line per
// sample otherwise (logs, pipes), and the same frame once for `--once`.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "headroom/watch.h"

namespace headroom::cli {

enum class ViewMode {
  live,   // redraw the frame in place (ANSI cursor movement); only on a terminal
  lines,  // one summary line per sample, alerts on indented lines below it
  frame,  // print the full frame once per sample, no cursor movement
};

enum class Colour { off, on };

class WatchView {
 public:
  WatchView(std::FILE* out, ViewMode mode, Colour colour, std::string url, bool local_server);

  void show(const watch::WatchSample& sample);
  // Ends the live view: shows the cursor again, leaving the last frame on screen.
  void finish();

 private:
  struct Line {
    std::string text;
    const char* colour = nullptr;  // ANSI SGR sequence or nullptr
  };
  std::vector<Line> frame(const watch::WatchSample& sample) const;
  std::string summary_line(const watch::WatchSample& sample) const;
  void warn_about(const watch::WatchSample& sample);

  std::FILE* m_out;
  ViewMode m_mode;
  Colour m_colour;
  std::string m_url;
  bool m_local;
  int m_lines_drawn = 0;
  int m_last_skipped_lines = 0;
  std::optional<watch::WatchSample> m_last_good;  // kept on screen while scrapes fail
};

}  // namespace headroom::cli
