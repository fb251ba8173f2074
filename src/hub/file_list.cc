// The Hub's answer to /api/models/{repo}/revision/{rev}: the commit sha and the revision's files.
#include "headroom/hub.h"
#include "util/json_file.h"

namespace headroom::hub {

Result<FileList> parse_file_list(std::string_view json_text, const std::string& origin) {
  auto j = util::parse_json(json_text, origin);
  if (!j) return tl::unexpected(j.error());
  if (!j->is_object()) return make_error(ErrorCode::parse_error, "expected a JSON object from the Hub's model API", origin);
  FileList list;
  if (auto id = j->find("id"); id != j->end() && id->is_string()) list.repo = id->get<std::string>();
  auto sha = j->find("sha");
  if (sha == j->end() || !sha->is_string() || !is_commit_sha(sha->get_ref<const std::string&>()))
    return make_error(ErrorCode::parse_error, "expected a 40-hex commit \"sha\" in the Hub's answer", origin);
  list.sha = sha->get<std::string>();
  auto siblings = j->find("siblings");
  if (siblings == j->end() || !siblings->is_array())
    return make_error(ErrorCode::parse_error, "expected an array \"siblings\" (the revision's files) in the Hub's answer", origin);
  list.files.reserve(siblings->size());
  for (const auto& s : *siblings) {
    auto name = s.is_object() ? s.find("rfilename") : s.end();
    if (!s.is_object() || name == s.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
      return make_error(ErrorCode::parse_error, "expected {\"rfilename\": NAME} entries in \"siblings\"", origin);
    list.files.push_back(name->get<std::string>());
  }
  return list;
}

}  // namespace headroom::hub
