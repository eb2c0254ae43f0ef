#include "daemon/mqtt/connection_problem.h"

#include "daemon/base/log.h"

namespace vigil {

void ConnectionProblem::report(const std::string& reason, bool retrying) {
  last_ = reason;
  if (reason == lastLogged_) return;
  lastLogged_ = reason;
  logger("mqtt")->warn("{} for {}{}", reason, url_, retrying ? "; retrying" : "");
}

}  // namespace vigil
