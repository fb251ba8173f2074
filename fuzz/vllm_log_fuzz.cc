// libFuzzer target: vLLM log bytes → the full diagnose pipeline (scanner, parser, diagnoser, fixes).
#include <cstddef>
#include <cstdint>
#include <string>

#include "headroom/diagnose.h"
#include "headroom/knowledge_base.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const headroom::KnowledgeBase kb = *headroom::KnowledgeBase::builtin();
  auto source = headroom::memory_source(std::string(reinterpret_cast<const char*>(data), size), "fuzz.log");
  (void)headroom::diagnose(*source, kb);
  return 0;
}
