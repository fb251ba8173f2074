// PhaseTable: where in vLLM's startup or serving a traceback frame runs, from
// data/vllm_phase_frames.json (vLLM functions and files, across versions, mapped to the taxonomy's
// phases, with how specific each phase is when one runs inside another).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "headroom/error.h"

namespace headroom {

class PhaseTable {
 public:
  // Parses the table. Errors name the field (origin: the file).
  static Result<PhaseTable> parse(std::string_view json_text, const std::string& origin);

  // The table compiled into the binary (data/vllm_phase_frames.json).
  static const PhaseTable& builtin();

  // The phase of a traceback frame: "" when the path is not vLLM's (or torch's graph code), the
  // function is not listed, or it is shared by several phases.
  std::string_view frame_phase(std::string_view path, std::string_view function) const;

  // The phase of a vLLM function named without its file ("while processing method X").
  std::string_view function_phase(std::string_view function) const;

  // Whether a log header's source file ("serving_chat.py") logs only while requests are served.
  bool serving_logger(std::string_view file) const;
  const std::vector<std::string>& serving_loggers() const { return m_loggers; }

  // Source lines that tracebacks print under frames ("with torch.cuda.graph(", "capture_end()"),
  // with their phase.
  const std::vector<std::pair<std::string, std::string>>& code_lines() const { return m_code; }

  // How specific a phase is (higher: runs inside lower ones); 0 for phases the table does not rank.
  int rank(std::string_view phase) const;

 private:
  struct Entry {
    std::string function;
    std::string file;   // "" = any vLLM file
    std::string phase;  // "" = shared
  };
  std::vector<Entry> m_functions;
  std::vector<std::pair<std::string, std::string>> m_files;  // path fragment, phase
  std::vector<std::pair<std::string, std::string>> m_code;  // source fragment, phase
  std::vector<std::string> m_vllm_paths;
  std::vector<std::string> m_loggers;
  std::map<std::string, int, std::less<>> m_rank;
};

}  // namespace headroom
