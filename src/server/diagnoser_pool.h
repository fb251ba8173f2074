// LogDiagnosers for /api/diagnose, lent to one request at a time and kept for the next one. The
// first one compiles the patterns and the Hyperscan database (tens of milliseconds); the others are
// clones that share them and own only their scanner scratch space, so two requests never share
// scratch.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "headroom/diagnose.h"

namespace headroom::server {

class DiagnoserPool {
 public:
  // `kb` must outlive the pool. At most `keep` idle diagnosers are kept.
  explicit DiagnoserPool(const KnowledgeBase& kb, std::size_t keep = 8) : m_kb(kb), m_keep(keep) {}

  // A diagnoser for one request, returned to the pool when the lease ends.
  class Lease {
   public:
    Lease(DiagnoserPool* pool, std::unique_ptr<LogDiagnoser> d) : m_pool(pool), m_diagnoser(std::move(d)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (m_diagnoser) m_pool->give_back(std::move(m_diagnoser));
    }
    LogDiagnoser& operator*() const { return *m_diagnoser; }
    LogDiagnoser* operator->() const { return m_diagnoser.get(); }

   private:
    DiagnoserPool* m_pool;
    std::unique_ptr<LogDiagnoser> m_diagnoser;
  };

  // Errors: those of LogDiagnoser::create (a knowledge-base pattern that compiles nowhere).
  Result<Lease> acquire();

 private:
  void give_back(std::unique_ptr<LogDiagnoser> d);

  const KnowledgeBase& m_kb;
  std::size_t m_keep;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<LogDiagnoser>> m_idle;
  std::mutex m_build_mutex;                   // held while the prototype is compiled
  std::unique_ptr<const LogDiagnoser> m_prototype;  // the compiled one; clones come from it
};

}  // namespace headroom::server
