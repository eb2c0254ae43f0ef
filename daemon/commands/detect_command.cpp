#include "daemon/commands/detect_command.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>
#include <ostream>

#include "daemon/base/log.h"
#include "daemon/commands/media_inputs.h"
#include "daemon/commands/progress_line.h"
#include "daemon/commands/video_regions.h"
#include "detector/annotate.h"

namespace vigil {

void addDetectCommand(CLI::App& app, DetectCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand("detect", "Detect persons in images, directories or videos");
  addDetectorOptions(*cmd, options.detector);
  cmd->add_option("--annotate", options.annotateDir, "Write images with boxes drawn into DIR");
  cmd->add_flag("--json", options.json, "Print one JSON object per image or frame");
  cmd->add_option("--regions", options.regions,
                  "A video's frames on regions around motion and the last frame's persons at the "
                  "video's own resolution; auto: when the picture is at least twice the model's "
                  "input, as the daemon")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("paths", options.paths, "Images, directories of images, or video files")
      ->required();
}

namespace {

class DetectRun {
 public:
  DetectRun(const DetectCommandOptions& options, Detector& detector, std::ostream& out)
      : options_(options), detector_(detector), out_(out), log_(logger("detect")) {}

  void process(const MediaItem& item) {
    if (item.kind == MediaKind::kImage) {
      auto image = readImage(item.path);
      if (!image) return fail(image.error().message);
      processFrame(item, 0, *image);
    } else {
      processVideo(item);
    }
  }

  int finish() const {
    log_->info("{} image(s)/frame(s) processed, {} person(s) found, {} input(s) failed", frames_,
               persons_, failures_);
    return failures_ == 0 ? 0 : 2;
  }

  void fail(const std::string& message) {
    log_->error("{}", message);
    ++failures_;
  }

 private:
  void processVideo(const MediaItem& item) {
    cv::VideoCapture video;
    try {
      video.open(item.path.string(), cv::CAP_FFMPEG);
    } catch (const cv::Exception& e) {
      return fail(fmt::format("{}: cannot open video: {}", item.path.string(), e.what()));
    }
    if (!video.isOpened()) {
      return fail(
          fmt::format("{}: not an image or a video that FFmpeg can open", item.path.string()));
    }
    int index = 0;
    cv::Mat frame;
    VideoRegions regions(*regionsModeNamed(options_.regions));  // checked by CLI11
    const double fps = video.get(cv::CAP_PROP_FPS);
    while (video.read(frame)) {
      const double time = fps > 0 ? index / fps : index;
      if (auto ok = regions.detect(detector_, frame, time, result_); !ok) {
        fail(fmt::format("{} frame {}: {}", item.path.string(), index++, ok.error().message));
        continue;
      }
      regions.regions().setPersons(result_.detections);  // where the next frame looks again
      report(item, index++, frame);
    }
    if (const std::string s = regions.summary(); !s.empty()) {
      log_->info("{}: {}", item.path.string(), s);
    }
    if (index == 0) fail(fmt::format("{}: video has no decodable frames", item.path.string()));
  }

  void processFrame(const MediaItem& item, int index, const cv::Mat& image) {
    if (auto ok = detector_.detect(image, result_); !ok) {
      return fail(fmt::format("{} frame {}: {}", item.path.string(), index, ok.error().message));
    }
    report(item, index, image);
  }

  // What was found in one image or frame (result_): counted, printed, drawn.
  void report(const MediaItem& item, int index, const cv::Mat& image) {
    ++frames_;
    int persons = 0;
    for (const Detection& d : result_.detections) persons += d.classId == 0 ? 1 : 0;
    persons_ += persons;
    if (options_.json) {
      printJson(item, index);
    } else {
      std::string scores;
      for (const Detection& d : result_.detections) {
        scores += fmt::format("{}{} {:.2f}", scores.empty() ? "" : ", ",
                              detector_.className(d.classId), d.score);
      }
      out_ << fmt::format("{}{}: {} detection(s){}{}{} in {:.1f} ms\n", item.path.string(),
                          item.kind == MediaKind::kVideo ? fmt::format(" frame {}", index) : "",
                          result_.detections.size(), scores.empty() ? "" : " (", scores,
                          scores.empty() ? "" : ")",
                          result_.timings.preprocessMs + result_.timings.inferenceMs +
                              result_.timings.postprocessMs);
    }
    if (!options_.annotateDir.empty()) annotate(item, index, image);
  }

  void printJson(const MediaItem& item, int index) {
    nlohmann::json detections = nlohmann::json::array();
    for (const Detection& d : result_.detections) {
      detections.push_back({{"class", detector_.className(d.classId)},
                            {"score", d.score},
                            {"bbox", {d.box.x, d.box.y, d.box.width, d.box.height}}});
    }
    nlohmann::json line = {
        {"source", item.path.string()},
        {"frame", index},
        {"width", result_.width},
        {"height", result_.height},
        {"detections", detections},
        {"timing_ms",
         {{"preprocess", result_.timings.preprocessMs},
          {"inference", result_.timings.inferenceMs},
          {"postprocess", result_.timings.postprocessMs}}},
    };
    out_ << line.dump() << '\n';
  }

  void annotate(const MediaItem& item, int index, const cv::Mat& image) {
    image.copyTo(canvas_);
    drawDetections(canvas_, result_.detections, detector_.manifest().postprocess.classNames);
    std::string name = item.kind == MediaKind::kVideo
                           ? fmt::format("{}_{:06d}.jpg", item.path.stem().string(), index)
                           : item.path.stem().string() + ".jpg";
    std::filesystem::path target = std::filesystem::path(options_.annotateDir) / name;
    try {
      if (!cv::imwrite(target.string(), canvas_)) {
        fail(fmt::format("{}: cannot write annotated image", target.string()));
      }
    } catch (const cv::Exception& e) {
      fail(fmt::format("{}: cannot write annotated image: {}", target.string(), e.what()));
    }
  }

  const DetectCommandOptions& options_;
  Detector& detector_;
  std::ostream& out_;
  std::shared_ptr<spdlog::logger> log_;
  DetectionResult result_;
  cv::Mat canvas_;
  int frames_ = 0;
  int persons_ = 0;
  int failures_ = 0;
};

}  // namespace

int runDetectCommand(const DetectCommandOptions& options, std::ostream& out) {
  auto log = logger("detect");
  auto detector = createDetectorLogged(toDetectorOptions(options.detector));
  if (!detector) {
    log->error("{}", detector.error().message);
    return 2;
  }
  if (!options.annotateDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.annotateDir, ec);
    if (ec) {
      log->error("{}: cannot create directory: {}", options.annotateDir, ec.message());
      return 2;
    }
  }
  DetectRun run(options, **detector, out);
  std::vector<MediaItem> all;
  for (const std::string& path : options.paths) {
    auto items = expandMediaPath(path);
    if (!items) {
      run.fail(items.error().message);
      continue;
    }
    all.insert(all.end(), items->begin(), items->end());
  }
  ProgressLine progress("detect", "file(s)", all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    progress.update(i);
    run.process(all[i]);
  }
  progress.done();
  return run.finish();
}

}  // namespace vigil
