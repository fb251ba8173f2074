// Running a program without a shell and capturing what it prints.
#pragma once

#include <string>
#include <vector>

#include "headroom/error.h"

namespace headroom::util {

struct ProgramOutput {
  int exit_status = 0;  // the exit code, or 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// Runs `program` (searched on PATH when it has no '/') with `args`, waits for it and returns its
// exit status and output. Errors: not_found when the program does not exist; io_error when it
// cannot be started or read.
Result<ProgramOutput> run_program(const std::string& program, const std::vector<std::string>& args);

}  // namespace headroom::util
