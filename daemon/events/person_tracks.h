#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "daemon/events/presence_tracker.h"
#include "daemon/settings/tracking_settings.h"
#include "detector/track/byte_tracker.h"
#include "detector/track/line_crossing.h"

namespace vigil {

// A zone as tracking sees it: a track enters after minFrames consecutive detected frames with
// its feet inside (Frigate's `inertia`), leaves at the first detected frame outside or when the
// track ends, and loiters once per visit when inside longer than loiterAfterSeconds.
struct TrackZone {
  std::string name;
  Polygon polygon;
  int minFrames = 1;
  std::optional<double> loiterAfterSeconds;  // nullopt: no loiter event
};

// A tracked person crossed a line (counted, past its band).
struct LineCrossingEvent {
  std::string line;
  CrossingDirection direction = CrossingDirection::kIn;
  std::uint64_t trackId = 0;
  double time = 0;  // the frame's time, on the caller's clock
  Box box;          // pixels, on that frame
  float score = 0;
};

struct PersonTrackingSettings {
  ByteTrackSettings tracker;
  StationarySettings stationary;
  float minScore = 0.5F;  // a track counts as a person once detected at this score
  // Above 0, a track becomes a person only once confirmed: the median of its last
  // kConfirmationScores detected scores (fewer padded with zeros to three) at least this.
  float confirmScore = 0;
};

// The scores the confirmation's median is taken over, at most (Frigate keeps 10 too).
inline constexpr std::size_t kConfirmationScores = 10;

// The confirmation: the median of `scores` (the newest at most kConfirmationScores; fewer than
// three padded with zeros, so a track needs two detections at the threshold and one is never
// enough) at least `threshold`. The median of an even count is the mean of its middle two.
bool confirmedByScores(std::span<const float> scores, float threshold);

// One track on its way to confirmation: its detected scores, the newest kConfirmationScores,
// until they confirm it (confirmedByScores); confirmed, it stays so and keeps none.
class ScoreConfirmation {
 public:
  // Adds a detected score; whether the track is confirmed now.
  bool observe(float score, float threshold);
  bool confirmed() const { return confirmed_; }

 private:
  std::vector<float> scores_;
  bool confirmed_ = false;
};

// The camera's settings as the tracker takes them: ByteTrack's tuned defaults with the camera's
// lost time, its stationary rule, and presence's min_score and confirm_score for what counts as
// a person.
PersonTrackingSettings personTrackingSettings(const TrackingSettings& tracking,
                                              const PresenceSettings& presence);

// A person as the daemon reports it: a confirmed track detected at minScore at least once and
// not yet expired (a frame that misses it does not make the count flicker).
struct TrackedPerson {
  std::uint64_t id = 0;
  Box box;  // pixels
  float score = 0;
  double firstSeen = 0;  // seconds, the caller's clock
  double lastSeen = 0;
  bool detected = false;  // detected on the last frame (else: predicted, briefly lost)
  bool stationary = false;
  std::vector<std::string> zones;  // the zones it has entered and not left
  // On the frame it is first reported, when that is its track's second frame: the detection the
  // track was started from, on the frame before, reported by no one
  // (reportedFirstOnItsSecondFrame). Its lines took it as their first observation; a tracks file
  // writes it too.
  std::optional<Box> start;
};

enum class ZoneEventType { kEnter, kLeave, kLoiter };

struct ZoneEvent {
  ZoneEventType type;
  std::string zone;
  std::uint64_t trackId = 0;
  double time = 0;           // the frame's time (a leave by expiry: the update that found it)
  double secondsInside = 0;  // since the enter (0 for the enter itself)
};

std::string_view zoneEventName(ZoneEventType type);

// One camera's persons over time: ByteTracker on its detections, then zone membership, loitering
// and stationarity per track.
//
// Not thread-safe: the control thread's result path owns one per camera.
class PersonTracks {
 public:
  // `masks`: a person whose feet stand inside one is not tracked (the camera's masks).
  // `lines`: checked already (config), in fractions of the frame; counted in the pixels of the
  // frames update() is given (scaled again when their size changes).
  PersonTracks(PersonTrackingSettings settings, std::vector<TrackZone> zones,
               std::vector<Polygon> masks = {}, const std::vector<LineSpec>& lines = {});

  // One frame's person detections (every score the tracker uses, down to its lowScore) at
  // `time`, boxes in pixels of a width x height frame. Appends the frame's zone events.
  void update(double time, int width, int height, const std::vector<Detection>& persons,
              std::vector<ZoneEvent>& events);

  // No frame since the last update: tracks lost longer than the lost time end (leave events),
  // as a frame without persons at `time` would end them.
  void expire(double time, std::vector<ZoneEvent>& events);
  double lostAfterSeconds() const { return settings_.tracker.lostAfterSeconds; }
  // Every visit ends now (leave events at `time`): the camera stops or restarts. The last call
  // on this object.
  void endAll(double time, std::vector<ZoneEvent>& events);

  const std::vector<TrackedPerson>& persons() const { return persons_; }
  // Every track the tracker keeps (confirmed or not, seen or lost: boxes and predictions).
  const std::vector<Track>& tracks() const { return tracker_.tracks(); }
  // Tracks that became persons (confirmed, scored at minScore), since construction.
  std::uint64_t personsStarted() const { return personsStarted_; }
  // How long each person track that ended in the last update() was seen (last - first seen).
  const std::vector<double>& endedDurations() const { return endedDurations_; }
  // The line crossings counted in the last update(), in the order of the lines.
  const std::vector<LineCrossingEvent>& crossings() const { return crossings_; }

 private:
  struct Visit {
    int framesInside = 0;
    bool entered = false;
    double enteredAt = 0;
    bool loitered = false;
  };
  struct State {
    std::uint64_t id = 0;
    bool person = false;    // detected at minScore once (and confirmed, with confirmScore)
    bool reported = false;  // counted in personsStarted_
    double firstSeen = 0;
    double lastSeen = 0;
    double anchorTime = 0;
    float anchorX = 0, anchorY = 0;
    bool stationary = false;
    std::vector<Visit> visits;               // one per zone
    std::vector<LineTrackState> lineStates;  // one per line
    ScoreConfirmation confirmation;          // with confirmScore
  };

  // Whether a track detected on this frame is a person from now on.
  bool becomesPerson(State& s, const Track& t) const;

  State& stateOf(const Track& track);
  void updateStationary(State& s, const Track& t, double time);
  void updateZones(State& s, const Track& t, double time, int width, int height,
                   std::vector<ZoneEvent>& events);
  void updateLines(State& s, const Track& t, double time);
  // The lines in pixels of width x height frames: made again when the size changes (each
  // track's place with respect to the lines starts again).
  void fitLines(int width, int height);
  void endTracks(double time, std::vector<ZoneEvent>& events);
  // A track ends: it leaves the zones it entered, and its duration is noted.
  void leaveZones(const State& s, double time, std::vector<ZoneEvent>& events);

  PersonTrackingSettings settings_;
  std::vector<TrackZone> zones_;
  std::vector<Polygon> masks_;
  std::vector<LineSpec> lineSpecs_;  // as configured, fractions of the frame
  std::vector<std::pair<std::string, CountingLine>> lines_;  // name, line in pixels of:
  int linesWidth_ = 0;
  int linesHeight_ = 0;
  ByteTracker tracker_;
  std::vector<Detection> unmasked_;  // reused
  std::vector<State> states_;        // by id, as the tracker's
  std::vector<TrackedPerson> persons_;
  std::uint64_t personsStarted_ = 0;
  std::vector<double> endedDurations_;
  std::vector<LineCrossingEvent> crossings_;
};

}  // namespace vigil
