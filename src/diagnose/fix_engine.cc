// The engine step of fix planning (see fix_planner.cc). The prediction engine and the model
// loader are not in this build yet, so there is no engine-backed planner: plan_fixes falls back
// to the log arithmetic.
#include "headroom/diagnose.h"

namespace headroom {

std::unique_ptr<FixEngine> prediction_fix_engine() { return nullptr; }

}  // namespace headroom
