#pragma once

#include "daemon/events/result_path.h"
#include "daemon/pipeline/backend_status.h"
#include "daemon/pipeline/inference_worker.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace vigil {

// The inference worker's result handler: called on the inference thread, it posts each result
// to the control thread (`control`), where a result of the `auto` backend is named after the
// side that really ran it (BackendStatus::inUse: the NPU or the CPU it fell back to, so that
// events and stage histograms name that, not "auto") and handed to ResultPath::onResult.
// Borrows all three, which outlive the worker.
InferenceWorker::ResultHandler deliverResults(boost::asio::io_context& control, ResultPath& path,
                                              const BackendStatus& status);

}  // namespace vigil
