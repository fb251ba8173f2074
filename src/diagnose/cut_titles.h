// Error lines cut short: a pasted log or an issue title whose error line stops inside the message
// ("torch.OutOfMemoryError: CUDA out of memo", "... max seq len (3276"). Each known title is the
// verbatim beginning of a message, exception name included, up to its first number. A line that
// ends inside one, past the point where it stops sharing its beginning with the titles of other
// messages, is read as that message; the diagnosis says the line was cut.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace headroom {

struct CutTitle {
  const char* title;   // verbatim beginning of the message
  const char* record;  // knowledge-base record of the whole message
  int pattern;         // the record's pattern the whole message matches (0: its regex)
};

const std::vector<CutTitle>& cut_titles();

// Characters of titles[i] a cut line must keep: one past the longest beginning it shares with a
// title of another (record, pattern), and at least 8 past the exception name's ": " (and 20 in all).
std::size_t unambiguous_length(const std::vector<CutTitle>& titles, std::size_t i);

// A regex for a line that ends inside titles[i] (at or past unambiguous_length), or just after
// the whole title with at most 24 more characters (a number cut short); trailing dots and spaces
// are allowed ("... CUDA out of memo..."). The caller checks that the whole message did not match.
std::string cut_title_regex(const std::vector<CutTitle>& titles, std::size_t i);

}  // namespace headroom
