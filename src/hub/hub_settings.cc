// Hub settings from the environment, as huggingface_hub reads them (constants.py): HF_ENDPOINT,
// HF_HUB_OFFLINE, HF_TOKEN / HUGGING_FACE_HUB_TOKEN / the token file, and headroom's cache folder.
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "headroom/hub.h"
#include "util/json_file.h"
#include "util/strings.h"

namespace headroom::hub {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string home_path(const std::string& rest) {
  std::string home = env("HOME");
  return home.empty() ? rest : (fs::path(home) / rest).string();
}

// huggingface_hub's _is_true: "1", "ON", "YES", "TRUE" in any case.
bool env_true(const char* name) {
  std::string v = util::to_lower(util::trim(env(name)));
  return v == "1" || v == "on" || v == "yes" || v == "true";
}

std::string token_from_environment() {
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    if (std::string t = util::trim(env(name)); !t.empty()) return t;
  }
  std::string path = env("HF_TOKEN_PATH");
  if (path.empty()) {
    std::string hf_home = env("HF_HOME");
    path = hf_home.empty() ? home_path(".cache/huggingface/token") : (fs::path(hf_home) / "token").string();
  }
  auto text = util::read_file(path);
  return text ? util::trim(*text) : std::string();
}

}  // namespace

HubSettings settings_from_environment() {
  HubSettings s;
  if (std::string e = util::trim(env("HF_ENDPOINT")); !e.empty()) {
    while (e.ends_with('/')) e.pop_back();
    s.endpoint = e;
  }
  s.offline = env_true("HF_HUB_OFFLINE");
  s.token = token_from_environment();
  std::string xdg = env("XDG_CACHE_HOME");
  s.cache_dir = xdg.empty() ? home_path(".cache/headroom/hub") : (fs::path(xdg) / "headroom" / "hub").string();
  // Seconds from 0 to a day; anything else keeps the default.
  if (std::string r = util::trim(env("HEADROOM_HUB_RETRY_AFTER_S")); !r.empty()) {
    char* end = nullptr;
    const double v = std::strtod(r.c_str(), &end);
    if (end != r.c_str() && *end == '\0' && v >= 0 && v <= 86400) s.no_network_memo_s = v;
  }
  return s;
}

bool is_repo_id(std::string_view ref) {
  auto slash = ref.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == ref.size()) return false;
  if (ref.find('/', slash + 1) != std::string_view::npos || ref.size() > 96) return false;
  if (ref.find("..") != std::string_view::npos || ref.find("--") != std::string_view::npos) return false;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    char c = ref[i];
    if (i == slash) continue;
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  auto name = ref.substr(slash + 1);
  return ref.front() != '.' && name.front() != '.' && ref.back() != '.';
}

namespace {

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::optional<RepoAddress> parse_repo_address(std::string_view text) {
  std::string_view t = text;
  for (std::string_view scheme : {"https://", "http://"}) {
    if (t.starts_with(scheme)) {
      t.remove_prefix(scheme.size());
      break;
    }
  }
  if (t.starts_with("www.")) t.remove_prefix(4);
  bool host = false;
  for (std::string_view h : {"huggingface.co/", "hf.co/"}) {
    if (t.starts_with(h)) {
      t.remove_prefix(h.size());
      host = true;
      break;
    }
  }
  if (!host) return std::nullopt;
  if (auto cut = t.find_first_of("?#"); cut != std::string_view::npos) t = t.substr(0, cut);
  std::vector<std::string_view> parts;
  while (!t.empty()) {
    auto slash = t.find('/');
    auto part = t.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    t.remove_prefix(slash + 1);
  }
  if (parts.size() < 2 || parts[0] == "datasets" || parts[0] == "spaces") return std::nullopt;
  RepoAddress a;
  a.repo = std::string(parts[0]) + "/" + std::string(parts[1]);
  if (!is_repo_id(a.repo)) return std::nullopt;
  if (parts.size() >= 4 && (parts[2] == "tree" || parts[2] == "blob" || parts[2] == "resolve")) a.revision = percent_decode(parts[3]);
  return a;
}

bool is_commit_sha(std::string_view revision) {
  if (revision.size() != 40) return false;
  for (char c : revision) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace headroom::hub
