#include "run/log_follower.h"

#include <cstring>

namespace headroom::run {

LogFollower::LogFollower(FollowerLimits limits) : m_limits(limits) {}

void LogFollower::feed(StreamId stream, std::string_view bytes) {
  m_hash.update(bytes);
  m_bytes += static_cast<std::int64_t>(bytes.size());
  if (!m_binary && std::memchr(bytes.data(), '\0', bytes.size()) != nullptr) m_binary = true;
  Partial& p = m_partial[stream == StreamId::out ? 0 : 1];
  while (!bytes.empty()) {
    std::size_t end = bytes.find_first_of("\n\r");
    std::string_view piece = bytes.substr(0, end);
    if (!p.cutting) {
      std::size_t room = m_limits.max_line_bytes - p.text.size();
      if (piece.size() > room) {
        p.text.append(piece.substr(0, room));
        p.cutting = true;
      } else {
        p.text.append(piece);
      }
    }
    if (end == std::string_view::npos) break;
    end_line(p);
    bytes.remove_prefix(end + 1);
  }
}

void LogFollower::finish() {
  for (auto& p : m_partial)
    if (!p.text.empty() || p.cutting) end_line(p);
}

void LogFollower::end_line(Partial& p) {
  if (p.cutting) ++m_cut_lines;
  p.cutting = false;
  if (p.text.empty()) return;  // "\r\n", or an empty line: nothing for the parser
  ++m_lines;
  m_parser.feed(p.text);
  keep(std::move(p.text));
  p.text.clear();
}

void LogFollower::keep(std::string line) {
  if (!m_head_full) {
    if (m_head.size() + line.size() + 1 <= m_limits.head_bytes) {
      m_head.append(line).push_back('\n');
      return;
    }
    m_head_full = true;
  }
  m_tail_bytes += line.size() + 1;
  m_tail.push_back(std::move(line));
  while (m_tail_bytes > m_limits.tail_bytes && !m_tail.empty()) {
    m_tail_bytes -= m_tail.front().size() + 1;
    m_tail.pop_front();
  }
}

std::string LogFollower::kept_log() const {
  std::string out = m_head;
  out.reserve(m_head.size() + m_tail_bytes);
  for (const auto& line : m_tail) out.append(line).push_back('\n');
  return out;
}

std::string LogFollower::content_hash() const {
  util::Sha256 copy = m_hash;  // hex_digest finishes the hash: take it on a copy
  return copy.hex_digest();
}

}  // namespace headroom::run
