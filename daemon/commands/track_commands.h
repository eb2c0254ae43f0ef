#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "daemon/commands/detector_cli.h"
#include "detector/track/line_crossing.h"

namespace vigil {

struct TrackCommandOptions {
  DetectorCliOptions detector;
  std::string video;
  std::string out;
  double detectFps = 0;  // 0: every frame
  std::string tracker = "bytetrack";
  // `time` (the frames' timestamps, what the daemon does) or `frames` (one 30 fps reference
  // frame per tracked frame, whatever the rate: ByteTrack as published).
  std::string clock = "time";
  double lostAfterSeconds = 1.0;
  float newTrackScore = 0;  // ByteTrack's det_thresh; 0: the tracker's (bench sweeps only)
  // ByteTrackSettings::lostHeightRatio; below 0: the tracker's, 0: any height (bench only).
  float lostHeightRatio = -1;
  // --lines-out FILE --line [NAME=]x1,y1,x2,y2...: the tracks' crossings (line_commands.h).
  std::string linesOut;
  std::vector<std::string> lines;
  double lineBand = kDefaultLineBandPixels;
  // --detections-out FILE: every detection the tracker was given, MOTChallenge det.txt style
  // (id -1), to tell the tracker's boxes from the detector's.
  std::string detectionsOut;
  // --confirm-score S: write a track only from the frame the daemon's confirmation (presence.
  // confirm_score, PersonTracks) makes it a person; 0: every confirmed track, as before.
  float confirmScore = 0;
  // --regions auto|on|off: detect on regions around motion and tracks (video_regions.h).
  std::string regions = "auto";
};

// `vigil track VIDEO --out tracks.txt [--detect-fps F]`: the detector and the tracker on a
// video, every frame or frames 1, 1+N, 1+2N, ... (N = round(video fps / F)) with their real
// timestamps, written in MOTChallenge format. Returns 0, or 2 when the video or the model cannot
// be used.
void addTrackCommand(CLI::App& app, TrackCommandOptions& options);
int runTrackCommand(const TrackCommandOptions& options, std::ostream& out);

struct EvalTracksOptions {
  std::string groundTruth;
  std::string tracks;
  int stride = 0;               // 0: every ground-truth frame
  bool framesInTracks = false;  // only the frames the tracks file names
  bool json = false;
};

// `vigil eval-tracks --gt GT.json --tracks tracks.txt [--stride N | --frames-in-tracks]`: MOTA,
// MOTP, IDF1, IDP, IDR, ID switches, FP, FN, MT/ML and HOTA over the tracked frames
// (mot_metrics.h). Returns 0, or 2 when a file cannot be read (the message says where and why).
void addEvalTracksCommand(CLI::App& app, EvalTracksOptions& options);
int runEvalTracksCommand(const EvalTracksOptions& options, std::ostream& out);

}  // namespace vigil
