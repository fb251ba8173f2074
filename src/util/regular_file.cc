#include "util/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>

namespace headroom::util {

std::string not_regular_kind(unsigned mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "something that is not a file";
}

namespace {

tl::unexpected<Error> refused(const std::string& kind, const std::string& path) {
  return make_error(ErrorCode::invalid_argument,
                    "expected a regular file, found " + kind + "; headroom reads only regular files", path);
}

Result<struct stat> stat_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return make_error(ErrorCode::not_found, "no such file", path);
    return make_error(ErrorCode::io_error, std::string("cannot open: ") + std::strerror(errno), path);
  }
  return st;
}

}  // namespace

Result<void> check_regular_file(const std::string& path) {
  auto st = stat_of(path);
  if (!st) return tl::unexpected(st.error());
  if (std::string kind = not_regular_kind(st->st_mode); !kind.empty()) return refused(kind, path);
  return {};
}

Result<RegularFile> RegularFile::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. fstat then looks at
  // what was opened, so a file swapped between a check and the open cannot slip through.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return make_error(ErrorCode::not_found, "no such file", path);
    if (auto kind = check_regular_file(path); !kind) return tl::unexpected(kind.error());
    return make_error(ErrorCode::io_error, std::string("cannot open: ") + std::strerror(err), path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(ErrorCode::io_error, std::string("cannot read: ") + std::strerror(err), path);
  }
  if (std::string kind = not_regular_kind(st.st_mode); !kind.empty()) {
    ::close(fd);
    return refused(kind, path);
  }
  return RegularFile(fd, static_cast<std::uint64_t>(st.st_size));
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_size(other.m_size) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = std::exchange(other.m_fd, -1);
    m_size = other.m_size;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (m_fd >= 0) ::close(m_fd);
}

long RegularFile::read(char* data, std::size_t size) {
  for (;;) {
    ssize_t n = ::read(m_fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    return static_cast<long>(n);
  }
}

namespace fs = std::filesystem;

Result<void> write_file_atomically(const fs::path& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return make_error(ErrorCode::io_error, "cannot create the folder: " + ec.message(), path.parent_path().string());
  std::random_device rd;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return make_error(ErrorCode::io_error, "cannot write the file", tmp.string());
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return make_error(ErrorCode::io_error, "cannot rename the temporary file into place", path.string());
  }
  return {};
}

}  // namespace headroom::util
