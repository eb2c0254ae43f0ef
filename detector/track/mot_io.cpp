#include "detector/track/mot_io.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace vigil {

namespace {

Expected<std::string> readWhole(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return makeError(ErrorCode::kNotFound, "{}: cannot open", file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Expected<GroundTruth> groundTruthOf(const nlohmann::json& j, const std::string& where) {
  GroundTruth gt;
  std::map<std::int64_t, int> frameOfImage;
  std::set<int> frames;
  for (const auto& image : j.at("images")) {
    const int frame = image.at("frame_index").get<int>();
    if (frame < 1)
      return makeError(ErrorCode::kInvalidData, "{}: frame_index {} (from 1)", where, frame);
    frameOfImage[image.at("id").get<std::int64_t>()] = frame;
    frames.insert(frame);
  }
  for (const auto& a : j.at("annotations")) {
    const auto image = a.at("image_id").get<std::int64_t>();
    auto it = frameOfImage.find(image);
    if (it == frameOfImage.end()) {
      return makeError(ErrorCode::kInvalidData,
                       "{}: annotation {} names image {}, which is not listed", where,
                       a.value("id", std::int64_t{-1}), image);
    }
    const auto& b = a.at("bbox");
    if (!b.is_array() || b.size() != 4) {
      return makeError(ErrorCode::kInvalidData, "{}: annotation {}: bbox is not [x, y, w, h]",
                       where, a.value("id", std::int64_t{-1}));
    }
    MotBox box;
    box.id = a.at("track_id").get<std::uint64_t>();
    box.box = Box{b[0].get<float>(), b[1].get<float>(), b[2].get<float>(), b[3].get<float>()};
    box.ignore = a.value("iscrowd", 0) == 1;
    gt.boxes[it->second].push_back(box);
  }
  gt.frames.assign(frames.begin(), frames.end());
  return gt;
}

}  // namespace

Expected<GroundTruth> readGroundTruthJson(const std::filesystem::path& file) {
  auto text = readWhole(file);
  if (!text) return tl::unexpected(text.error());
  try {
    return groundTruthOf(nlohmann::json::parse(*text), file.string());
  } catch (const nlohmann::json::exception& e) {
    return makeError(ErrorCode::kInvalidData, "{}: not the ground truth format: {}", file.string(),
                     e.what());
  }
}

Expected<MotSequence> readMotText(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return makeError(ErrorCode::kNotFound, "{}: cannot open", file.string());
  MotSequence out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    double v[6];
    std::size_t at = 0;
    for (int i = 0; i < 6; ++i) {
      const std::size_t end = line.find(',', at);
      const std::string field = line.substr(at, end == std::string::npos ? end : end - at);
      try {
        v[i] = std::stod(field);
      } catch (const std::exception&) {
        return makeError(ErrorCode::kInvalidData,
                         "{}:{}: field {} is '{}', not a number (frame,id,x,y,w,h,score,...)",
                         file.string(), number, i + 1, field);
      }
      if (end == std::string::npos && i < 5) {
        return makeError(ErrorCode::kInvalidData, "{}:{}: {} fields, expected at least 6",
                         file.string(), number, i + 1);
      }
      at = end + 1;
    }
    if (v[0] < 1 || v[1] < 0) {
      return makeError(ErrorCode::kInvalidData, "{}:{}: frame {} or id {} out of range",
                       file.string(), number, v[0], v[1]);
    }
    out[static_cast<int>(v[0])].push_back(
        MotBox{static_cast<std::uint64_t>(v[1]),
               Box{static_cast<float>(v[2]), static_cast<float>(v[3]), static_cast<float>(v[4]),
                   static_cast<float>(v[5])},
               false});
  }
  return out;
}

namespace {

// One MOTChallenge row: `id` -1 for a detection (det.txt), else a track's.
void writeMotRow(std::ostream& out, std::uint64_t frame, std::int64_t id, const Box& box,
                 float score) {
  out << fmt::format("{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},-1,-1,-1\n", frame, id, box.x + 1,
                     box.y + 1, box.width, box.height, score);
}

}  // namespace

void writeMotLine(std::ostream& out, std::uint64_t frame, std::uint64_t id, const Box& box,
                  float score) {
  writeMotRow(out, frame, static_cast<std::int64_t>(id), box, score);
}

void writeMotLines(std::ostream& out, int frame, int previousFrame,
                   const std::vector<Track>& tracks) {
  for (const Track& t : tracks) {
    if (reportedFirstOnItsSecondFrame(t) && previousFrame > 0) {
      writeMotLine(out, static_cast<std::uint64_t>(previousFrame), t.id, t.startBox, t.score);
    }
    if (t.confirmed && t.matched) {
      writeMotLine(out, static_cast<std::uint64_t>(frame), t.id, t.box, t.score);
    }
  }
}

void writeMotDetections(std::ostream& out, int frame, const std::vector<Detection>& detections) {
  for (const Detection& d : detections) {
    writeMotRow(out, static_cast<std::uint64_t>(frame), -1, d.box, d.score);
  }
}

Expected<TrackJudging> readTrackJudging(const std::filesystem::path& groundTruth,
                                        const std::filesystem::path& tracks, int stride,
                                        bool framesInTracks) {
  auto truth = readGroundTruthJson(groundTruth);
  if (!truth) return tl::unexpected(truth.error());
  auto boxes = readMotText(tracks);
  if (!boxes) return tl::unexpected(boxes.error());
  TrackJudging judging{std::move(*truth), std::move(*boxes), {}};
  for (int f : judging.truth.frames) {
    if (framesInTracks ? judging.tracks.contains(f) : stride <= 1 || (f - 1) % stride == 0) {
      judging.frames.push_back(f);
    }
  }
  return judging;
}

}  // namespace vigil
