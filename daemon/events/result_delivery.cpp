#include "daemon/events/result_delivery.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

namespace vigil {

namespace {

// On the control thread.
void deliverResult(FrameResult& result, ResultPath& path, const BackendStatus& status) {
  if (result.backend == "auto") result.backend = status.inUse().name;
  path.onResult(result);
}

}  // namespace

InferenceWorker::ResultHandler deliverResults(boost::asio::io_context& control, ResultPath& path,
                                              const BackendStatus& status) {
  return [&control, &path, &status](FrameResult&& result) {
    boost::asio::post(control, [&path, &status, r = std::move(result)]() mutable {
      deliverResult(r, path, status);
    });
  };
}

}  // namespace vigil
