#include "util/word_match.h"

#include <algorithm>

#include "util/strings.h"

namespace headroom::util {

std::vector<std::string> word_matches(std::string_view query, const std::vector<std::string>& candidates, std::size_t max) {
  if (query.size() > k_max_word_query) return {};
  std::vector<std::string> words;
  for (auto& w : split(to_lower(query), ' '))
    if (!w.empty()) words.push_back(std::move(w));
  if (words.size() < 2) return {};
  std::vector<std::string> hits;
  for (const auto& c : candidates) {
    std::string lc = to_lower(c);
    if (std::all_of(words.begin(), words.end(), [&](const std::string& w) { return lc.find(w) != std::string::npos; }) &&
        std::none_of(hits.begin(), hits.end(), [&](const std::string& h) { return iequals(h, c); }))
      hits.push_back(c);
  }
  // The shortest names first: "Llama-3.1-8B" before "Llama-3.1-8B-Instruct-FP8".
  std::stable_sort(hits.begin(), hits.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  if (hits.size() > max) hits.resize(max);
  return hits;
}

std::vector<std::string> lower_words(std::string_view text, std::string_view separators) {
  std::vector<std::string> words;
  std::string word;
  for (char c : to_lower(text)) {
    if (separators.find(c) == std::string_view::npos) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

}  // namespace headroom::util
