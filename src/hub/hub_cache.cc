// headroom's Hub metadata cache: <dir>/<org>--<name>/<sha>.hub holds what was read of one commit
// (line 1: a JSON manifest with the file list and the config files; then one line per tensor:
// name, dtype, shape, bytes, tab-separated), and <dir>/<org>--<name>/refs/<revision> the sha a
// branch or tag last pointed at. Files are written to a temporary name and renamed, so readers
// never see half a file and concurrent writers of the same entry each leave a whole one.
#include <charconv>
#include <chrono>
#include <filesystem>

#include "headroom/hub.h"
#include "util/json_file.h"
#include "util/regular_file.h"
#include "util/strings.h"

namespace headroom::hub {

namespace fs = std::filesystem;

namespace {

constexpr int k_format = 1;
constexpr const char* k_ext = ".hub";

std::string repo_folder(const std::string& repo) {
  std::string f = util::to_lower(repo);
  if (auto slash = f.find('/'); slash != std::string::npos) f.replace(slash, 1, "--");
  return f;
}

// Revision names may hold '/' (refs/pr/1): kept as one file name.
std::string ref_file(const std::string& revision) {
  std::string out;
  for (char c : revision) out += (c == '/') ? std::string("%2F") : (c == '%') ? std::string("%25") : std::string(1, c);
  return out;
}

bool plain_text(std::string_view s) { return s.find_first_of("\t\n\r") == std::string_view::npos; }

Result<std::int64_t> to_int(std::string_view s, const std::string& where) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0)
    return make_error(ErrorCode::parse_error, "expected a non-negative integer, got '" + std::string(s.substr(0, 32)) + "'", where);
  return v;
}

// One tensor line: name, dtype, shape (comma-separated) and bytes, tab-separated. Read without
// allocating per field: DeepSeek-V3 has ~91,000 tensors and the cache must answer in milliseconds.
Result<TensorInfo> parse_tensor_line(std::string_view line, const std::string& where) {
  std::string_view fields[4];
  for (int i = 0; i < 4; ++i) {
    auto tab = line.find('\t');
    if ((i < 3) == (tab == std::string_view::npos))
      return make_error(ErrorCode::parse_error, "expected 4 tab-separated fields", where);
    fields[i] = line.substr(0, tab);
    line.remove_prefix(tab == std::string_view::npos ? line.size() : tab + 1);
  }
  TensorInfo t;
  t.name = fields[0];
  t.dtype = fields[1];
  for (std::string_view dims = fields[2]; !dims.empty();) {
    auto comma = dims.find(',');
    auto v = to_int(dims.substr(0, comma), where);
    if (!v) return tl::unexpected(v.error());
    t.shape.push_back(*v);
    dims.remove_prefix(comma == std::string_view::npos ? dims.size() : comma + 1);
  }
  auto bytes = to_int(fields[3], where);
  if (!bytes) return tl::unexpected(bytes.error());
  t.bytes = *bytes;
  return t;
}

Result<nlohmann::json> read_manifest(const fs::path& path, std::string* rest) {
  auto text = util::read_file(path.string());
  if (!text) return tl::unexpected(text.error());
  auto nl = text->find('\n');
  auto manifest = util::parse_json(std::string_view(*text).substr(0, nl), path.string());
  if (!manifest) return manifest;
  if (!manifest->is_object() || manifest->value("format", 0) != k_format)
    return make_error(ErrorCode::parse_error, "not a headroom Hub cache file of format " + std::to_string(k_format), path.string());
  if (rest != nullptr && nl != std::string::npos) *rest = text->substr(nl + 1);
  return manifest;
}

}  // namespace

Result<std::optional<HubSnapshot>> HubCache::load(const std::string& repo, const std::string& sha) const {
  fs::path path = fs::path(m_dir) / repo_folder(repo) / (sha + k_ext);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::optional<HubSnapshot>{};
  std::string rest;
  auto m = read_manifest(path, &rest);
  if (!m) return tl::unexpected(m.error());
  HubSnapshot snap;
  try {
    snap.repo = m->at("repo").get<std::string>();
    snap.sha = m->at("sha").get<std::string>();
    snap.fetched_unix_s = m->at("fetched_unix_s").get<std::int64_t>();
    snap.files = m->at("files").get<std::vector<std::string>>();
    snap.json_files = m->at("json_files").get<std::map<std::string, std::string>>();
    for (const auto& s : m->at("shards")) {
      ShardHeader h;
      h.file = s.at("file").get<std::string>();
      h.file_size = s.at("size").get<std::uint64_t>();
      h.tensors.resize(s.at("tensors").get<std::size_t>());
      snap.shards.push_back(std::move(h));
    }
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::parse_error, std::string("malformed manifest: ") + e.what(), path.string());
  }
  std::string_view body = rest;
  std::size_t line_no = 1;
  for (auto& shard : snap.shards) {
    for (auto& t : shard.tensors) {
      ++line_no;
      auto nl = body.find('\n');
      if (nl == std::string_view::npos) return make_error(ErrorCode::parse_error, "file cut short", path.string());
      auto parsed = parse_tensor_line(body.substr(0, nl), path.string() + ":" + std::to_string(line_no));
      if (!parsed) return tl::unexpected(parsed.error());
      t = std::move(*parsed);
      body.remove_prefix(nl + 1);
    }
  }
  if (snap.sha != sha) return make_error(ErrorCode::parse_error, "the file holds commit " + snap.sha, path.string());
  return std::optional<HubSnapshot>(std::move(snap));
}

Result<void> HubCache::store(const HubSnapshot& snap, const std::string& revision) const {
  // The index is not kept: its shards are, and DeepSeek-V3's is 7 MB of JSON to parse on each run.
  auto json_files = snap.json_files;
  json_files.erase("model.safetensors.index.json");
  nlohmann::json m = {{"format", k_format},         {"repo", snap.repo},   {"sha", snap.sha},
                      {"fetched_unix_s", snap.fetched_unix_s}, {"files", snap.files}, {"json_files", json_files}};
  m["shards"] = nlohmann::json::array();
  std::string lines;
  for (const auto& s : snap.shards) {
    m["shards"].push_back({{"file", s.file}, {"size", s.file_size}, {"tensors", s.tensors.size()}});
    for (const auto& t : s.tensors) {
      // A name or dtype with a tab or newline cannot be a line of this format: such a model is
      // simply not cached (it loads again from the Hub next time).
      if (!plain_text(t.name) || !plain_text(t.dtype)) return {};
      lines += t.name;
      lines += '\t';
      lines += t.dtype;
      lines += '\t';
      for (std::size_t i = 0; i < t.shape.size(); ++i) {
        if (i > 0) lines += ',';
        lines += std::to_string(t.shape[i]);
      }
      lines += '\t';
      lines += std::to_string(t.bytes);
      lines += '\n';
    }
  }
  fs::path folder = fs::path(m_dir) / repo_folder(snap.repo);
  auto written = util::write_file_atomically(folder / (snap.sha + k_ext), m.dump() + "\n" + lines);
  if (!written) return written;
  if (!revision.empty() && revision != snap.sha) return util::write_file_atomically(folder / "refs" / ref_file(revision), snap.sha + "\n");
  return {};
}

std::optional<std::string> HubCache::ref(const std::string& repo, const std::string& revision) const {
  auto text = util::read_file((fs::path(m_dir) / repo_folder(repo) / "refs" / ref_file(revision)).string());
  if (!text) return std::nullopt;
  std::string sha = util::trim(*text);
  return is_commit_sha(sha) ? std::optional<std::string>(sha) : std::nullopt;
}

std::vector<CachedRepo> HubCache::list() const {
  std::vector<CachedRepo> out;
  std::error_code ec;
  if (!fs::is_directory(m_dir, ec)) return out;
  for (const auto& repo_dir : fs::directory_iterator(m_dir, ec)) {
    if (!repo_dir.is_directory(ec)) continue;
    std::map<std::string, std::vector<std::string>> refs;
    for (const auto& r : fs::directory_iterator(repo_dir.path() / "refs", ec)) {
      auto sha = util::read_file(r.path().string());
      std::string name = r.path().filename().string();
      for (std::size_t p; (p = name.find("%2F")) != std::string::npos;) name.replace(p, 3, "/");
      for (std::size_t p; (p = name.find("%25")) != std::string::npos;) name.replace(p, 3, "%");
      if (sha) refs[util::trim(*sha)].push_back(name);
    }
    for (const auto& e : fs::directory_iterator(repo_dir.path(), ec)) {
      if (e.path().extension() != k_ext) continue;
      auto m = read_manifest(e.path(), nullptr);
      if (!m) continue;
      CachedRepo c;
      c.repo = m->value("repo", "");
      c.sha = m->value("sha", "");
      c.fetched_unix_s = m->value("fetched_unix_s", std::int64_t{0});
      c.shard_count = m->contains("shards") && (*m)["shards"].is_array() ? static_cast<int>((*m)["shards"].size()) : 0;
      c.bytes = fs::file_size(e.path(), ec);
      c.refs = refs[c.sha];
      std::sort(c.refs.begin(), c.refs.end());
      out.push_back(std::move(c));
    }
  }
  std::sort(out.begin(), out.end(), [](const CachedRepo& a, const CachedRepo& b) {
    return a.repo != b.repo ? util::to_lower(a.repo) < util::to_lower(b.repo) : a.fetched_unix_s > b.fetched_unix_s;
  });
  return out;
}

std::vector<std::string> HubCache::repo_ids() const {
  std::vector<std::string> ids;
  for (const auto& c : list())
    if (std::find(ids.begin(), ids.end(), c.repo) == ids.end()) ids.push_back(c.repo);
  return ids;
}

Result<int> HubCache::clear(const std::string& repo) const {
  std::error_code ec;
  if (!fs::is_directory(m_dir, ec)) return 0;
  int removed = 0;
  for (const auto& repo_dir : fs::directory_iterator(m_dir, ec)) {
    if (!repo_dir.is_directory(ec)) continue;
    if (!repo.empty() && repo_dir.path().filename().string() != repo_folder(repo)) continue;
    for (const auto& e : fs::directory_iterator(repo_dir.path(), ec))
      if (e.path().extension() == k_ext) ++removed;
    fs::remove_all(repo_dir.path(), ec);
    if (ec) return make_error(ErrorCode::io_error, "cannot remove: " + ec.message(), repo_dir.path().string());
  }
  return removed;
}

}  // namespace headroom::hub
