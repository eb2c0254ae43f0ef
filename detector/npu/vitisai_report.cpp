#include "detector/npu/vitisai_report.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vigil {

namespace {

// The report file name the EP is told to write (XLNX_ONNX_EP_REPORT_FILE).
constexpr const char* kReportName = "vitisai_ep_report.json";

std::string readReportText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

VitisAiReportFiles::VitisAiReportFiles(std::filesystem::path cacheDir, std::string cacheKey)
    : cacheDir_(std::move(cacheDir)),
      keyDir_(cacheDir_ / cacheKey),
      cacheKey_(std::move(cacheKey)) {}

void VitisAiReportFiles::prepareForSession() const {
  std::error_code ec;
  std::filesystem::remove(keyDir_ / kReportName, ec);
  std::filesystem::remove(cacheDir_ / kReportName, ec);
  ::setenv("XLNX_ONNX_EP_REPORT_FILE", kReportName, 1);
}

std::filesystem::path VitisAiReportFiles::contextCopy() const {
  return cacheDir_ / (cacheKey_ + ".ctx." + kReportName);
}

void VitisAiReportFiles::keepForContext() const {
  std::error_code ec;
  std::filesystem::copy_file(keyDir_ / kReportName, contextCopy(),
                             std::filesystem::copy_options::overwrite_existing, ec);
}

Expected<VitisAiReport> VitisAiReportFiles::read(const std::filesystem::path& kept) const {
  std::filesystem::path report = keyDir_ / kReportName;
  std::error_code ec;
  if (!std::filesystem::exists(report, ec)) report = cacheDir_ / kReportName;
  if (!std::filesystem::exists(report, ec) && !kept.empty()) report = kept;
  if (!std::filesystem::exists(report, ec)) {
    return makeError(ErrorCode::kNotOnNpu,
                     "the Vitis AI EP wrote no operator report ({} under {}): where the nodes "
                     "run cannot be verified",
                     kReportName, cacheDir_.string());
  }
  auto counts = parseVitisAiReport(readReportText(report), report.string());
  if (!counts) return tl::unexpected(counts.error());
  return VitisAiReport{report, *counts};
}

}  // namespace vigil
