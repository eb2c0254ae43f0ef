#include "daemon/commands/track_commands.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <opencv2/videoio.hpp>
#include <ostream>
#include <unordered_map>
#include <variant>

#include "daemon/base/log.h"
#include "daemon/commands/line_commands.h"
#include "daemon/commands/progress_line.h"
#include "daemon/commands/video_regions.h"
#include "daemon/events/person_tracks.h"
#include "detector/track/byte_tracker.h"
#include "detector/track/mot_io.h"
#include "detector/track/mot_metrics.h"

namespace vigil {

namespace {

struct VideoTracker {
  std::variant<ByteTracker, IouTracker> tracker;
  const std::vector<Track>& update(double time, const std::vector<Detection>& persons) {
    return std::visit([&](auto& t) -> const std::vector<Track>& { return t.update(time, persons); },
                      tracker);
  }
};

// The IoU baseline; ByteTrack on the frame clock as published; on the time clock as the daemon
// runs it at presence's default min_score (new tracks from 0.5, personTrackingSettings).
VideoTracker makeTracker(const TrackCommandOptions& o) {
  if (o.tracker == "iou") return {IouTracker(0.5F, 0.3F, o.lostAfterSeconds)};
  ByteTrackSettings settings;
  if (o.clock == "time") {
    TrackingSettings daemon;
    daemon.lostAfter = std::chrono::milliseconds(std::llround(o.lostAfterSeconds * 1000));
    settings = personTrackingSettings(daemon, PresenceSettings{}).tracker;
  }
  settings.lostAfterSeconds = o.lostAfterSeconds;
  if (o.newTrackScore > 0) settings.newTrackScore = o.newTrackScore;
  if (o.lostHeightRatio >= 0) settings.lostHeightRatio = o.lostHeightRatio;
  return {ByteTracker(settings)};
}

}  // namespace

void addTrackCommand(CLI::App& app, TrackCommandOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "track", "Detect and track persons in a video; write the tracks in MOTChallenge format");
  addDetectorOptions(*cmd, options.detector);
  cmd->add_option("video", options.video, "Video file")->required();
  cmd->add_option("--out", options.out, "Where to write the tracks (MOTChallenge text)")
      ->required();
  cmd->add_option("--detect-fps", options.detectFps,
                  "Track every Nth frame, N = round(video fps / this), as the daemon's detect_fps "
                  "(default: every frame)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tracker", options.tracker, "bytetrack (Vigil's) or iou (the baseline)")
      ->check(CLI::IsMember({"bytetrack", "iou"}));
  cmd->add_option("--clock", options.clock,
                  "time: predict and expire by the frames' timestamps (the daemon); frames: one "
                  "30 fps frame per tracked frame (ByteTrack as published)")
      ->check(CLI::IsMember({"time", "frames"}));
  cmd->add_option("--lost-after", options.lostAfterSeconds,
                  "Seconds a track is kept unseen (on the frames clock: in 30 fps frames / 30)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--new-track-score", options.newTrackScore,
                  "Score a detection needs to start a track (ByteTrack's det_thresh; default: the "
                  "tracker's)")
      ->check(CLI::Range(0.0F, 1.0F));
  cmd->add_option("--lost-height-ratio", options.lostHeightRatio,
                  "A lost track is found again only by a box within this ratio of its height "
                  "(0 or at least 1; 0: any height; default: the tracker's)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            char* end = nullptr;
            const double ratio = std::strtod(value.c_str(), &end);
            const bool number = end != value.c_str() && *end == '\0';
            return number && (ratio == 0 || ratio >= 1) ? "" : "must be 0 or at least 1";
          },
          "0 or >= 1"));
  cmd->add_option("--lines-out", options.linesOut,
                  "Write the tracks' crossings of the --line lines here (one JSON object a line)")
      ->needs(cmd->add_option("--line", options.lines,
                              "[NAME=]x1,y1,x2,y2[,x3,y3...]: a directed line in pixels (repeat "
                              "for more); `in` is from its left-hand side to its right-hand side"));
  cmd->add_option("--detections-out", options.detectionsOut,
                  "Also write every detection the tracker was given (MOTChallenge det.txt: id -1, "
                  "the score), to tell the tracker's boxes from the detector's");
  cmd->add_option("--confirm-score", options.confirmScore,
                  "Write a track only once the median of its recent scores reaches this, as the "
                  "daemon's presence.confirm_score (default 0: every track)")
      ->check(CLI::Range(0.0F, 1.0F));
  cmd->add_option("--regions", options.regions,
                  "Detect on regions around motion and tracks at the video's own resolution "
                  "instead of the whole picture shrunk; auto: when the picture is at least twice "
                  "the model's input, as the daemon")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("--line-band", options.lineBand,
                  "Pixels clear of a line, on both sides, for a crossing to count (the hysteresis)")
      ->check(CLI::NonNegativeNumber);
}

namespace {

// --lines-out: nullptr without it.
Expected<std::unique_ptr<TrackLineWriter>> lineWriterFor(const TrackCommandOptions& o,
                                                         std::ofstream& file) {
  if (o.linesOut.empty()) return nullptr;
  if (o.lines.empty()) {
    return makeError(ErrorCode::kInvalidArgument, "--lines-out needs at least one --line");
  }
  auto lines = parseLineArguments(o.lines, o.lineBand, 1);
  if (!lines) return tl::unexpected(lines.error());
  file.open(o.linesOut);
  if (!file) {
    return makeError(ErrorCode::kInvalidArgument, "--lines-out {}: cannot write there", o.linesOut);
  }
  return std::make_unique<TrackLineWriter>(std::move(*lines), file);
}

// --confirm-score: the tracks that are persons under the daemon's confirmation rule, each from
// the frame its scores confirm it (ScoreConfirmation, as PersonTracks applies it).
class ConfirmedTracks {
 public:
  explicit ConfirmedTracks(float threshold) : threshold_(threshold) {}

  const std::vector<Track>& filter(const std::vector<Track>& tracks) {
    if (threshold_ <= 0) return tracks;
    kept_.clear();
    for (const Track& t : tracks) {
      ScoreConfirmation& confirmation = tracks_[t.id];
      if (t.matched) confirmation.observe(t.score, threshold_);
      if (confirmation.confirmed()) kept_.push_back(t);
    }
    return kept_;
  }

 private:
  float threshold_;
  std::unordered_map<std::uint64_t, ScoreConfirmation> tracks_;
  std::vector<Track> kept_;
};

// `file` opened for writing at `path` (the command line's `option`), or false and why logged.
bool openOutput(const std::string& path, std::string_view option, std::ofstream& file) {
  file.open(path);
  if (!file) logger("track")->error("{} {}: cannot write there", option, path);
  return static_cast<bool>(file);
}

// `path` opened by FFmpeg, or why not.
Expected<void> openVideo(cv::VideoCapture& video, const std::string& path) {
  try {
    video.open(path, cv::CAP_FFMPEG);
  } catch (const cv::Exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: cannot open video: {}", path, e.what());
  }
  if (!video.isOpened()) {
    return makeError(ErrorCode::kInvalidData, "{}: not a video FFmpeg can open", path);
  }
  return {};
}

// The detector's options: persons only, down to the low-score detections ByteTrack's second
// association uses, as the daemon's detector.
DetectorOptions trackingDetectorOptions(const TrackCommandOptions& options) {
  DetectorOptions detectorOptions = toDetectorOptions(options.detector);
  if (!detectorOptions.minScore) detectorOptions.minScore = kTrackingLowScore;
  detectorOptions.classes = {"person"};
  return detectorOptions;
}

// Every how many of the video's frames one is tracked: --detect-fps against the video's rate.
int detectStride(double videoFps, double detectFps) {
  return detectFps > 0 && videoFps > 0
             ? std::max(1, static_cast<int>(std::lround(videoFps / detectFps)))
             : 1;
}

// What `vigil track` writes: --out, and with their options --lines-out and --detections-out.
struct TrackOutputs {
  std::ofstream mot;
  std::ofstream lines;
  std::unique_ptr<TrackLineWriter> lineWriter;  // writes to `lines`; nullptr: no --lines-out
  std::ofstream detections;
};

// The outputs opened, or false and why logged.
bool openTrackOutputs(const TrackCommandOptions& options, TrackOutputs& outputs) {
  if (!openOutput(options.out, "--out", outputs.mot)) return false;
  auto lineWriter = lineWriterFor(options, outputs.lines);
  if (!lineWriter) {
    logger("track")->error("{}", lineWriter.error().message);
    return false;
  }
  outputs.lineWriter = std::move(*lineWriter);
  return options.detectionsOut.empty() ||
         openOutput(options.detectionsOut, "--detections-out", outputs.detections);
}

// The run's summary on `out`: the frames, the regions, the line crossings.
void reportTracked(const TrackCommandOptions& options, int tracked, int stride, double videoFps,
                   const VideoRegions& regions, const TrackOutputs& outputs, std::ostream& out) {
  out << fmt::format(
      "{}: {} frame(s) tracked (every {} of a {:.2f} fps video), {} tracker, "
      "tracks in {}\n",
      options.video, tracked, stride, videoFps, options.tracker, options.out);
  if (const std::string s = regions.summary(); !s.empty()) out << s << '\n';
  if (outputs.lineWriter) {
    out << fmt::format("{} line crossing(s) in {}\n", outputs.lineWriter->crossings(),
                       options.linesOut);
  }
}

}  // namespace

int runTrackCommand(const TrackCommandOptions& options, std::ostream& out) {
  auto log = logger("track");
  auto detector = createDetectorLogged(trackingDetectorOptions(options));
  if (!detector) {
    log->error("{}", detector.error().message);
    return 2;
  }
  cv::VideoCapture video;
  if (auto opened = openVideo(video, options.video); !opened) {
    log->error("{}", opened.error().message);
    return 2;
  }
  const double videoFps = video.get(cv::CAP_PROP_FPS);
  const int stride = detectStride(videoFps, options.detectFps);
  TrackOutputs outputs;
  if (!openTrackOutputs(options, outputs)) return 2;
  VideoTracker tracker = makeTracker(options);
  ConfirmedTracks confirmed(options.confirmScore);
  VideoRegions regions(*regionsModeNamed(options.regions));  // checked by CLI11
  DetectionResult result;
  cv::Mat frame;
  int tracked = 0;
  int previousIndex = 0;  // the frame tracked before this one
  const double frames = video.get(cv::CAP_PROP_FRAME_COUNT);
  ProgressLine progress("track", "frames", frames > 0 ? static_cast<std::size_t>(frames) : 0);
  for (int index = 1; video.read(frame); ++index) {
    progress.update(static_cast<std::size_t>(index));
    if ((index - 1) % stride != 0) continue;
    double time = video.get(cv::CAP_PROP_POS_MSEC) / 1000.0;
    if (options.clock == "frames") time = tracked / BoxKalman::kReferenceFps;
    if (auto ok = regions.detect(**detector, frame, time, result); !ok) {
      log->error("{} frame {}: {}", options.video, index, ok.error().message);
      return 2;
    }
    if (outputs.detections.is_open()) {
      writeMotDetections(outputs.detections, index, result.detections);
    }
    const std::vector<Track>& allTracks = tracker.update(time, result.detections);
    regions.regions().setTracks(allTracks);  // where the next frame looks again
    const std::vector<Track>& tracks = confirmed.filter(allTracks);
    writeMotLines(outputs.mot, index, previousIndex, tracks);
    if (outputs.lineWriter) outputs.lineWriter->observe(index, time, tracks);
    previousIndex = index;
    ++tracked;
  }
  progress.done();
  if (tracked == 0) {
    log->error("{}: no decodable frames", options.video);
    return 2;
  }
  reportTracked(options, tracked, stride, videoFps, regions, outputs, out);
  return outputs.mot && (!outputs.lineWriter || outputs.lines) ? 0 : 2;
}

void addEvalTracksCommand(CLI::App& app, EvalTracksOptions& options) {
  CLI::App* cmd = app.add_subcommand("eval-tracks",
                                     "Score tracks against ground truth: CLEAR MOT, IDF1 and HOTA");
  cmd->add_option("--gt", options.groundTruth, "Ground truth (*.person.json)")->required();
  cmd->add_option("--tracks", options.tracks, "Tracks in MOTChallenge text (vigil track --out)")
      ->required();
  cmd->add_option("--stride", options.stride,
                  "Score frames 1, 1+N, 1+2N, ... only: the ones `vigil track --detect-fps` "
                  "tracked (default: every ground-truth frame)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--frames-in-tracks", options.framesInTracks,
                "Score only the frames the tracks file has a line for: `vigil run --tracks-out`, "
                "whose frames follow the daemon's timing (a frame it tracked nobody on is not "
                "scored)")
      ->excludes("--stride");
  cmd->add_flag("--json", options.json, "One JSON object on the last line");
}

int runEvalTracksCommand(const EvalTracksOptions& options, std::ostream& out) {
  auto log = logger("track");
  auto judging =
      readTrackJudging(options.groundTruth, options.tracks, options.stride, options.framesInTracks);
  if (!judging) {
    log->error("{}", judging.error().message);
    return 2;
  }
  const MotScores s = evaluateTracks(judging->truth.boxes, judging->tracks, judging->frames);
  out << fmt::format(
      "{} frames, {} ground-truth boxes in {} tracks\n"
      "MOTA {:.3f}  MOTP {:.3f}  IDF1 {:.3f}  IDP {:.3f}  IDR {:.3f}  HOTA {:.3f} (DetA {:.3f} "
      "AssA {:.3f})\n"
      "ID switches {}  FP {}  FN {}  MT {}  PT {}  ML {}\n",
      s.frames, s.gtBoxes, s.gtTracks, s.mota, s.motp, s.idf1, s.idp, s.idr, s.hota, s.detA, s.assA,
      s.idSwitches, s.fp, s.fn, s.mostlyTracked, s.partlyTracked, s.mostlyLost);
  if (options.json) {
    out << nlohmann::json{{"frames", s.frames},
                          {"gt_boxes", s.gtBoxes},
                          {"gt_tracks", s.gtTracks},
                          {"MOTA", s.mota},
                          {"MOTP", s.motp},
                          {"IDF1", s.idf1},
                          {"IDP", s.idp},
                          {"IDR", s.idr},
                          {"HOTA", s.hota},
                          {"DetA", s.detA},
                          {"AssA", s.assA},
                          {"LocA", s.locA},
                          {"IDSW", s.idSwitches},
                          {"FP", s.fp},
                          {"FN", s.fn},
                          {"MT", s.mostlyTracked},
                          {"PT", s.partlyTracked},
                          {"ML", s.mostlyLost}}
               .dump()
        << '\n';
  }
  return 0;
}

}  // namespace vigil
