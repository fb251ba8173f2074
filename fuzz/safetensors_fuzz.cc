// libFuzzer target: bytes of a .safetensors file → read_safetensors_header. The file is a memfd
// (a regular file in memory, opened by its /proc/self/fd path): writing a file on disk per input
// cost more than the parse (open, truncate and close were most of the time).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "headroom/model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("headroom-fuzz.safetensors", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0) return 0;
  for (std::size_t done = 0; done < size;) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) return 0;
    done += static_cast<std::size_t>(n);
  }
  (void)headroom::read_safetensors_header(path);
  return 0;
}
