// Where log bytes come from: files (plain or gzip through zlib), standard input, memory, and the
// UTF-16 decoder that turns what Windows tools write (PowerShell's `>`) into the UTF-8 the
// scanner reads.
#include "diagnose/log_source.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>

#include "util/strings.h"

namespace headroom {

namespace {

class GzSource : public ByteSource {
 public:
  GzSource(gzFile file, std::string name, std::optional<std::uint64_t> size, int fd)
      : m_file(file), m_name(std::move(name)), m_size(size), m_fd(fd) {}
  ~GzSource() override { gzclose(m_file); }

  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    if (m_done) return std::size_t{0};
    int n = gzread(m_file, buffer, static_cast<unsigned>(std::min<std::size_t>(capacity, 1u << 30)));
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(m_file, &code);
      m_done = true;
      if (code == Z_ERRNO) return make_error(ErrorCode::io_error, std::strerror(errno), m_name);
      return make_error(ErrorCode::parse_error,
                        std::string("corrupt or truncated gzip data (") + (msg ? msg : "zlib error") + ") after " +
                            util::with_commas(static_cast<long long>(m_total)) + " bytes of log",
                        m_name);
    }
    if (n == 0) {
      // zlib reports a stream cut short as end of file plus a Z_BUF_ERROR.
      int code = 0;
      gzerror(m_file, &code);
      m_done = true;
      if (code == Z_BUF_ERROR)
        return make_error(ErrorCode::parse_error,
                          "truncated gzip data (unexpected end of file) after " +
                              util::with_commas(static_cast<long long>(m_total)) + " bytes of log",
                          m_name);
    }
    m_total += static_cast<std::uint64_t>(n);
    return static_cast<std::size_t>(n);
  }
  std::string name() const override { return m_name; }
  std::optional<std::uint64_t> position() const override {
    z_off_t off = gzoffset(m_file);
    if (off < 0) return std::nullopt;
    return static_cast<std::uint64_t>(off);
  }
  std::optional<std::uint64_t> size() const override { return m_size; }

 private:
  gzFile m_file;
  std::string m_name;
  std::optional<std::uint64_t> m_size;
  int m_fd;
  std::uint64_t m_total = 0;
  bool m_done = false;
};

class MemorySource : public ByteSource {
 public:
  MemorySource(std::string bytes, std::string name) : m_bytes(std::move(bytes)), m_name(std::move(name)) {}
  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    std::size_t n = std::min(capacity, m_bytes.size() - m_pos);
    std::memcpy(buffer, m_bytes.data() + m_pos, n);
    m_pos += n;
    return n;
  }
  std::string name() const override { return m_name; }
  std::optional<std::uint64_t> position() const override { return m_pos; }
  std::optional<std::uint64_t> size() const override { return m_bytes.size(); }

 private:
  std::string m_bytes;
  std::string m_name;
  std::size_t m_pos = 0;
};

// Decodes UTF-16 (little- or big-endian) from another source into UTF-8, a chunk at a time: an odd
// byte or a high surrogate at the end of a chunk waits for the next one. Unpaired surrogates
// become U+FFFD. Memory: one raw buffer of at most a third of the caller's capacity.
class Utf16Source : public ByteSource {
 public:
  Utf16Source(ByteSource& inner, std::string already_read, Utf16Order order)
      : m_inner(inner), m_raw(std::move(already_read)), m_big_endian(order == Utf16Order::big_endian) {}

  Result<std::size_t> read(char* buffer, std::size_t capacity) override {
    // Each 2-byte unit gives at most 3 bytes of UTF-8 (a surrogate pair: 4 bytes for 4 bytes).
    std::size_t want = std::max<std::size_t>(capacity / 3, 4) & ~std::size_t{1};
    while (!m_eof && m_raw.size() < want) {
      std::size_t had = m_raw.size();
      m_raw.resize(want);
      auto got = m_inner.read(m_raw.data() + had, want - had);
      if (!got) {
        m_raw.resize(had);
        return tl::unexpected(got.error());
      }
      m_raw.resize(had + *got);
      if (*got == 0) m_eof = true;
    }
    std::size_t out = 0, i = 0;
    while (i + 1 < m_raw.size() && out + 4 <= capacity) {
      std::uint32_t unit = this->unit(i);
      std::uint32_t code = unit;
      std::size_t used = 2;
      if (unit >= 0xD800 && unit <= 0xDBFF) {
        if (i + 3 >= m_raw.size() && !m_eof) break;  // the low surrogate is in the next chunk
        std::uint32_t low = i + 3 < m_raw.size() ? this->unit(i + 2) : 0;
        if (low >= 0xDC00 && low <= 0xDFFF) {
          code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
          used = 4;
        } else {
          code = 0xFFFD;
        }
      } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
        code = 0xFFFD;
      }
      out += encode_utf8(code, buffer + out);
      i += used;
    }
    if (m_eof && i + 1 >= m_raw.size()) i = m_raw.size();  // a lone trailing byte is dropped
    m_raw.erase(0, i);
    return out;
  }
  std::string name() const override { return m_inner.name(); }
  std::optional<std::uint64_t> position() const override { return m_inner.position(); }
  std::optional<std::uint64_t> size() const override { return m_inner.size(); }

 private:
  std::uint32_t unit(std::size_t i) const {
    auto a = static_cast<unsigned char>(m_raw[i]), b = static_cast<unsigned char>(m_raw[i + 1]);
    return m_big_endian ? (static_cast<std::uint32_t>(a) << 8 | b) : (static_cast<std::uint32_t>(b) << 8 | a);
  }
  static std::size_t encode_utf8(std::uint32_t c, char* out) {
    if (c < 0x80) {
      out[0] = static_cast<char>(c);
      return 1;
    }
    if (c < 0x800) {
      out[0] = static_cast<char>(0xC0 | (c >> 6));
      out[1] = static_cast<char>(0x80 | (c & 0x3F));
      return 2;
    }
    if (c < 0x10000) {
      out[0] = static_cast<char>(0xE0 | (c >> 12));
      out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out[2] = static_cast<char>(0x80 | (c & 0x3F));
      return 3;
    }
    out[0] = static_cast<char>(0xF0 | (c >> 18));
    out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[3] = static_cast<char>(0x80 | (c & 0x3F));
    return 4;
  }

  ByteSource& m_inner;
  std::string m_raw;  // bytes read and not yet decoded
  bool m_big_endian;
  bool m_eof = false;
};

}  // namespace

std::optional<Utf16Order> utf16_order(std::string_view head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0xFF && static_cast<unsigned char>(head[1]) == 0xFE)
    return Utf16Order::little_endian;
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0xFE && static_cast<unsigned char>(head[1]) == 0xFF)
    return Utf16Order::big_endian;
  // Without a byte-order mark (PowerShell 7's `Out-File -Encoding unicode` keeps it, a few tools
  // drop it): ASCII text in UTF-16 has a NUL in every other byte, and a log starts with ASCII.
  std::size_t n = std::min<std::size_t>(head.size(), 64) & ~std::size_t{1};
  if (n < 8) return std::nullopt;
  bool le = true, be = true;
  for (std::size_t i = 0; i < n; i += 2) {
    auto a = static_cast<unsigned char>(head[i]), b = static_cast<unsigned char>(head[i + 1]);
    le = le && a != 0 && a < 0x80 && b == 0;
    be = be && b != 0 && b < 0x80 && a == 0;
  }
  if (le) return Utf16Order::little_endian;
  if (be) return Utf16Order::big_endian;
  return std::nullopt;
}

std::unique_ptr<ByteSource> utf16_decoder(ByteSource& inner, std::string already_read, Utf16Order order) {
  bool bom = already_read.size() >= 2 && ((static_cast<unsigned char>(already_read[0]) == 0xFF && static_cast<unsigned char>(already_read[1]) == 0xFE) ||
                                          (static_cast<unsigned char>(already_read[0]) == 0xFE && static_cast<unsigned char>(already_read[1]) == 0xFF));
  if (bom) already_read.erase(0, 2);
  return std::make_unique<Utf16Source>(inner, std::move(already_read), order);
}

Result<std::unique_ptr<ByteSource>> open_log(const std::string& path) {
  int fd = 0;
  std::optional<std::uint64_t> size;
  if (path == "-") {
    fd = dup(0);
  } else {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0)
      return make_error(ErrorCode::not_found, "expected a log file, found nothing at this path", path);
    if (S_ISDIR(st.st_mode)) return make_error(ErrorCode::invalid_argument, "expected a log file, got a directory", path);
    if (S_ISREG(st.st_mode)) size = static_cast<std::uint64_t>(st.st_size);
    fd = ::open(path.c_str(), O_RDONLY);
  }
  if (fd < 0) return make_error(ErrorCode::io_error, std::strerror(errno), path);
  gzFile file = gzdopen(fd, "rb");
  if (!file) {
    ::close(fd);
    return make_error(ErrorCode::io_error, "cannot read", path);
  }
  gzbuffer(file, 1 << 20);
  return std::unique_ptr<ByteSource>(new GzSource(file, path == "-" ? "<stdin>" : path, size, fd));
}

std::unique_ptr<ByteSource> memory_source(std::string bytes, std::string name) {
  return std::make_unique<MemorySource>(std::move(bytes), std::move(name));
}

}  // namespace headroom
