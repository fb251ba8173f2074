// Opening files that headroom reads (config.json, safetensors headers, token files, logs named on
// the command line or below a server's --models-dir) so that nothing but a regular file is read:
// a FIFO, a socket or a device would block a thread until someone writes to it, or never end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "headroom/error.h"

namespace headroom::util {

// A regular file open for reading (O_RDONLY | O_NONBLOCK | O_CLOEXEC, then fstat). Move-only.
class RegularFile {
 public:
  // Errors: not_found; invalid_argument for a directory, a FIFO, a socket or a device ("expected a
  // regular file, found a FIFO (named pipe)"); io_error when it cannot be opened. Never blocks.
  static Result<RegularFile> open(const std::string& path);

  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  std::uint64_t size() const { return m_size; }
  // Reads up to `size` bytes; returns how many (0 at the end), or -1 with errno set.
  long read(char* data, std::size_t size);

 private:
  RegularFile(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  int m_fd = -1;
  std::uint64_t m_size = 0;
};

// What kind of file `path` is, in words ("a FIFO (named pipe)"); "" for a regular file.
std::string not_regular_kind(unsigned mode);

// Errors as RegularFile::open, for code that opens the file itself (std::ifstream): checks the
// file without opening it.
Result<void> check_regular_file(const std::string& path);

// Writes `content` to a temporary name beside `path` and renames it into place, creating the
// folder: readers never see half a file, and concurrent writers of the same path each leave a
// whole one. Errors: io_error naming the folder or file.
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace headroom::util
