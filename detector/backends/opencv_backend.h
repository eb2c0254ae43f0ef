#pragma once

#include <memory>

#include "detector/backend.h"

namespace vigil {

// The reference backend: OpenCV DNN (DNN_BACKEND_OPENCV, DNN_TARGET_CPU) running every stage of
// the manifest in order, a stage's outputs feeding the next stage's inputs by name.
// OpenCV's thread count is process-wide (cv::setNumThreads); options.threads sets it.
Expected<std::unique_ptr<InferenceBackend>> createOpenCvBackend(const ModelManifest& manifest,
                                                                const BackendOptions& options);

}  // namespace vigil
