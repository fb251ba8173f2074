// "Did you mean" for names typed as words: "llama 3.1 8b" for meta-llama/Llama-3.1-8B-Instruct.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::util {

// Longest query word_matches looks at; a longer one has no suggestions.
inline constexpr std::size_t k_max_word_query = 256;

// Up to `max` candidates that contain every space-separated word of `query` (case-insensitive),
// shortest first. Empty for a query of fewer than two words (closest_matches covers those).
std::vector<std::string> word_matches(std::string_view query, const std::vector<std::string>& candidates, std::size_t max = 3);

// `text` lower-cased and cut at any character of `separators`, empty words dropped:
// lower_words("Qwen3-30B-A3B_AWQ", "-_") is {"qwen3", "30b", "a3b", "awq"}.
std::vector<std::string> lower_words(std::string_view text, std::string_view separators);

}  // namespace headroom::util
