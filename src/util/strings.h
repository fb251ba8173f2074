// Small string helpers that know nothing of vLLM or GPUs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::util {

std::string to_lower(std::string_view s);
std::string trim(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

// Levenshtein distance, case-insensitive.
std::size_t edit_distance(std::string_view a, std::string_view b);

// Up to `max` candidates closest to `query` (by edit distance, then by substring match), for
// "did you mean" messages. Candidates farther than a third of their length are dropped.
std::vector<std::string> closest_matches(std::string_view query, const std::vector<std::string>& candidates,
                                         std::size_t max = 3);

// "a, b or c" style list for messages.
std::string or_list(const std::vector<std::string>& items);

// Formats a number with a fixed count of decimals.
std::string fixed(double value, int decimals);

// Python-style repr of a float as vLLM prints it through round(x, 2): "5.0", "15.72".
std::string py_round2(double value);

// A number as a log prints it ("1,234.5": commas are dropped). `whole`: the text must be only the
// number; otherwise a leading number is read ("12.5 GiB"). Never infinite or NaN: no number in a
// log is, and strtod would read "INFO" as infinity.
std::optional<double> parse_log_number(std::string_view text, bool whole = true);

// Thousands separators as Python's f"{n:,}".
std::string with_commas(long long n);

// A word as a POSIX shell takes it back: as it is when it holds only letters, digits and
// . _ - / : , + = ; else in single quotes, a quote inside as '\'' (a JSON value of
// --limit-mm-per-prompt or --mm-processor-kwargs).
std::string shell_word(std::string_view word);

}  // namespace headroom::util
