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

}  // namespace headroom::util
