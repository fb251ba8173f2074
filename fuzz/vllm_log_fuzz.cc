// libFuzzer target: vLLM log bytes → the full diagnose pipeline (normaliser, scanner, parser,
// diagnoser, fixes). The knowledge base, the diagnoser's patterns and the Hyperscan database are
// built once per process.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "headroom/diagnose.h"
#include "headroom/knowledge_base.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const headroom::KnowledgeBase kb = *headroom::KnowledgeBase::builtin();
  static const std::unique_ptr<headroom::LogDiagnoser> diagnoser = [] {
    auto created = headroom::LogDiagnoser::create(kb);
    if (!created) std::abort();
    return std::move(*created);
  }();
  auto source = headroom::memory_source(std::string(reinterpret_cast<const char*>(data), size), "fuzz.log");
  (void)diagnoser->diagnose(*source);
  return 0;
}
