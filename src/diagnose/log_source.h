// Decoding of logs that are not UTF-8: UTF-16 as Windows tools write it (PowerShell's `>`
// writes UTF-16LE with the byte-order mark FF FE).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "headroom/diagnose.h"

namespace headroom {

enum class Utf16Order { little_endian, big_endian };

// The byte order of a log's first bytes when they are UTF-16: a byte-order mark (FF FE, FE FF),
// or ASCII with a NUL in every other byte. nullopt for anything else (UTF-8, ASCII, binary).
std::optional<Utf16Order> utf16_order(std::string_view head);

// A source that reads UTF-16 from `inner` (which must outlive it) and yields UTF-8.
// `already_read` holds the bytes taken from `inner` before (a byte-order mark there is dropped).
std::unique_ptr<ByteSource> utf16_decoder(ByteSource& inner, std::string already_read, Utf16Order order);

}  // namespace headroom
