// The top-level members of a JSON object's text, found without parsing their values: lets the
// built-in catalogues find one line by id, or leave their documentation members unread, at a
// fraction of what parsing every line costs.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace headroom::util {

struct JsonMember {
  std::string_view name;   // between the quotes, escapes left as written
  std::string_view value;  // the value's text, to give to parse_json when needed
};

// The members of the object `text` in order. Strings (with their escapes) and brackets are
// matched to find where each value ends; the values themselves are not checked. nullopt when
// `text` is not an object of that shape (an unclosed string or bracket, a missing ':' or ',').
// Linear in the size of `text`, with no recursion. With `leading` set, stops after that many
// members and returns them without reading (or checking) the rest of the object.
std::optional<std::vector<JsonMember>> object_members(std::string_view text,
                                                      std::size_t leading = std::string_view::npos);

}  // namespace headroom::util
