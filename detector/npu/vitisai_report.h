#pragma once

#include <filesystem>
#include <string>

#include "detector/npu/vitisai_plan.h"
#include "foundation/error.h"

namespace vigil {

// The Vitis AI EP's operator report (parseVitisAiReport) as files: the EP writes it as a session
// is made, under the name XLNX_ONNX_EP_REPORT_FILE gives it, into the compiled model's cache
// directory (some EP versions: the cache root). A session loaded from an EP-context model writes
// none, so `vigil npu compile` keeps a copy beside that model. No ONNX Runtime in here.
struct VitisAiReport {
  std::filesystem::path file;  // the report read
  NpuNodeCounts counts;
};

class VitisAiReportFiles {
 public:
  // `cacheDir`: the plan's cache root; `cacheKey`: the compiled model's directory in it.
  VitisAiReportFiles(std::filesystem::path cacheDir, std::string cacheKey);

  // Before a session is made: names the report for the EP (XLNX_ONNX_EP_REPORT_FILE, in this
  // process's environment) and removes any report an earlier session left, which must not pass
  // for this one's.
  void prepareForSession() const;

  // The copy `vigil npu compile` keeps beside the EP-context model:
  // <cacheDir>/<cacheKey>.ctx.vitisai_ep_report.json.
  std::filesystem::path contextCopy() const;
  // Copies the report the session wrote to contextCopy(); best effort (read() says when the
  // copy is missing).
  void keepForContext() const;

  // The report the last session wrote, else `kept` when not empty. kNotOnNpu when there is none
  // (where the nodes run cannot be verified); kInvalidData when it is not a report.
  Expected<VitisAiReport> read(const std::filesystem::path& kept) const;

 private:
  std::filesystem::path cacheDir_;
  std::filesystem::path keyDir_;  // <cacheDir>/<cacheKey>
  std::string cacheKey_;
};

}  // namespace vigil
