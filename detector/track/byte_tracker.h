#pragma once

#include <cstdint>
#include <vector>

#include "detector/box.h"
#include "detector/track/box_kalman.h"
#include "detector/track/linear_assignment.h"

namespace vigil {

// ByteTrack's settings (Zhang et al., "ByteTrack: Multi-Object Tracking by Associating Every
// Detection Box", ECCV 2022), with time in seconds instead of frames.
struct ByteTrackSettings {
  float highScore = 0.5F;      // track_thresh: first association, and new tracks above it
  float lowScore = 0.1F;       // detections below this are ignored altogether
  float newTrackScore = 0.6F;  // det_thresh: a new track needs this score
  // A track is established once detected at this score (det_thresh, where ByteTrack as published
  // starts its tracks). Only established tracks take low-score detections (the second
  // association): a track started below it (newTrackScore lowered, as presence's min_score does)
  // lives on high scores alone until then, so a weak false detection that flickers around the
  // high score (a tree, a person behind glass nobody counts) is not carried on by the scores
  // under it.
  float establishedScore = 0.6F;
  // IoU at least this for a pair to be associated: high-score detections with every track,
  // low-score ones with the tracks left, and the rest with tracks seen once so far.
  float matchIou = 0.2F;           // match_thresh 0.8 as a distance
  float lowMatchIou = 0.5F;        // ByteTrack's second association: distance 0.5
  float tentativeMatchIou = 0.3F;  // unconfirmed tracks: distance 0.7
  // ByteTrack's MOT17 setting: the first association's IoU weighted by the detection's score.
  bool fuseScore = true;
  // The last association: the high-score detections and the tracks (confirmed or not) every
  // other association left, by the IoU of their boxes grown by this fraction of their width and
  // height on each side (the buffered IoU of C-BIoU: Yang et al., WACV 2023), at least matchIou.
  // A walker moves half their width or more between detections at 5 a second, and a track seen
  // once has no velocity yet: its prediction and the person's next box then barely overlap, and
  // the person got a second track or none (bench/tracking.md, "Buffered IoU"). 0: off.
  float bufferScale = 0.2F;
  // A lost track's box stops changing height from its second frame unseen on (ByteTrack's lost
  // tracks do: the filter's height velocity is zeroed), and only a box within this ratio of that
  // height, taller or shorter, finds it again. A person unseen for under a second is about as
  // tall as when last seen; a box of another height on the same spot is mostly someone else: a
  // walker passing in front of the person the track was on (nearer the camera, so taller), or a
  // person walking past a sitting one. On the clips and their variants, of the lost tracks found
  // again by a box over 1.2 times taller or shorter, 12 were the same person and 22 someone else;
  // within 1.2, 48 and 15 (scripts/track-refinds.py; bench/tracking.md, "A lost track's
  // height"). 0: any height.
  float lostHeightRatio = 1.2F;
  // A track not seen for this long is gone (track_buffer 30 frames at 30 fps).
  double lostAfterSeconds = 1.0;
};

// One track as the tracker reports it.
struct Track {
  std::uint64_t id = 0;  // from 1, never reused by one tracker
  Box box;               // the filter's box after this frame's update (or its prediction)
  Box startBox;          // the detection it was started from
  float score = 0;       // the score of its last detection
  double firstSeen = 0;  // seconds, on the caller's clock
  double lastSeen = 0;
  int hits = 0;                   // frames it was detected in
  bool confirmed = false;         // seen on two frames (or on the tracker's first)
  bool confirmedAtStart = false;  // started on the tracker's first frame, so confirmed at once
  bool established = false;       // detected at establishedScore once
  bool matched = false;           // detected on the last frame
};

// A track started after the tracker's first frame is confirmed, and so first reported, on its
// second frame (the one right after its start: an unconfirmed track that is not matched there
// is dropped). The detection it was started from (startBox, on the frame before) was never
// reported. Whoever records a track's observations (a tracks file, a line's steps) takes that one
// first when this is true, so that a person who crossed a line between the first two frames of
// their track is counted: at 5 detections a second a walker moves some 40 pixels between them.
inline bool reportedFirstOnItsSecondFrame(const Track& t) {
  return t.confirmed && t.matched && t.hits == 2 && !t.confirmedAtStart;
}

// Multi-object tracking by ByteTrack's association: a Kalman filter per track (BoxKalman),
// high-score detections associated with every track first, then the low-score ones with the
// tracks left over, new tracks only from high scores, lost tracks kept for lostAfterSeconds.
// Prediction and expiry run on the frames' capture times, so an irregular detection rate (motion
// gating) predicts and expires by time, not by frame count.
//
// Not thread-safe: one tracker per camera, called by one thread. update() allocates only while
// its buffers grow.
class ByteTracker {
 public:
  explicit ByteTracker(ByteTrackSettings settings = {});

  // One frame's detections (one class) at `time` (seconds, increasing). Returns every track
  // alive after the frame (confirmed or not, matched or lost), by id; the confirmed and
  // matched ones are what a frame's output is.
  const std::vector<Track>& update(double time, const std::vector<Detection>& detections);

  const std::vector<Track>& tracks() const { return tracks_; }
  std::uint64_t tracksStarted() const { return nextId_ - 1; }
  const ByteTrackSettings& settings() const { return settings_; }

 private:
  struct State {
    Track track;
    BoxKalman filter;
    bool tracking = false;  // matched on the previous frame (not lost)
  };
  using Matches = std::vector<std::pair<std::size_t, std::size_t>>;

  // Moves every track's box to its filter's prediction at `time` (a lost track's height held),
  // none matched yet.
  void predictTo(double time);
  // The detections' indices into high_ (highScore and above) and low_ (above lowScore); the
  // rest are not associated at all.
  void splitByScore(const std::vector<Detection>& detections);
  // Associates `pool` (indices into states_) with `dets` (indices into detections).
  void associate(std::vector<std::size_t>& pool, std::vector<std::size_t>& dets,
                 const std::vector<Detection>& detections, float minIou, bool fuse, double time,
                 float buffer = 0);
  void startTracks(const std::vector<std::size_t>& dets, const std::vector<Detection>& detections,
                   double time);

  ByteTrackSettings settings_;
  std::vector<State> states_;
  std::vector<Track> tracks_;
  std::uint64_t nextId_ = 1;
  bool first_ = true;
  double lastTime_ = 0;
  // Reused buffers.
  CostMatrix costs_;
  AssignmentScratch scratch_;
  Matches matches_;
  std::vector<std::size_t> high_, low_, confirmedPool_, tentativePool_, leftover_;
  std::vector<char> poolTaken_, detTaken_;
};

// The baseline: greedy IoU matching of high-score detections to each track's last box, no motion
// model; a track ends when unmatched for lostAfterSeconds. Reported like ByteTracker (tracks
// confirmed on their second frame).
class IouTracker {
 public:
  IouTracker(float minScore = 0.5F, float minIou = 0.3F, double lostAfterSeconds = 1.0);
  const std::vector<Track>& update(double time, const std::vector<Detection>& detections);

 private:
  float minScore_;
  float minIou_;
  double lostAfterSeconds_;
  std::vector<Track> tracks_;
  std::uint64_t nextId_ = 1;
};

}  // namespace vigil
