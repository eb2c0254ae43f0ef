// `vigil run --tracks-out` (TrackRecorder), on its own: one MOTChallenge file per camera, frames
// numbered from the source's index + 1, only detected persons, a track's start on the camera's
// previous tracked frame, and a file that cannot be written said once.
#include "daemon/events/track_recorder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/log_capture.h"
#include "tests/occurrences.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

TrackedPerson recordedPerson(std::uint64_t id, Box box, bool detected = true) {
  TrackedPerson p;
  p.id = id;
  p.box = box;
  p.score = 0.9F;
  p.detected = detected;
  return p;
}

std::string fileText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(TrackRecorderTest, EachDetectedPersonIsALineOfTheFrameAfterTheSourcesIndex) {
  TempDir dir;
  TrackRecorder recorder(dir.path());
  recorder.record("door", 9,
                  {recordedPerson(1, Box{10, 20, 30, 40}),
                   recordedPerson(2, Box{100, 20, 30, 40}, false)});  // predicted: not seen
  recorder.record("door", 10, {recordedPerson(2, Box{101, 20, 30, 40})});
  EXPECT_EQ(fileText(dir.path() / "door.txt"),
            "10,1,11.00,21.00,30.00,40.00,0.900,-1,-1,-1\n"
            "11,2,102.00,21.00,30.00,40.00,0.900,-1,-1,-1\n");
}

TEST(TrackRecorderTest, ATracksStartIsALineOfTheCamerasPreviousTrackedFrame) {
  TempDir dir;
  TrackRecorder recorder(dir.path());
  TrackedPerson first = recordedPerson(3, Box{50, 50, 20, 40});
  first.start = Box{40, 50, 20, 40};
  recorder.record("door", 0, {first});  // no frame before: the start is nobody's line
  recorder.record("door", 4, {recordedPerson(3, Box{52, 50, 20, 40})});  // frames 2-4 not tracked
  TrackedPerson second = recordedPerson(5, Box{200, 50, 20, 40});
  second.start = Box{190, 50, 20, 40};
  recorder.record("door", 5, {second});
  EXPECT_EQ(fileText(dir.path() / "door.txt"),
            "1,3,51.00,51.00,20.00,40.00,0.900,-1,-1,-1\n"
            "5,3,53.00,51.00,20.00,40.00,0.900,-1,-1,-1\n"
            "5,5,191.00,51.00,20.00,40.00,0.900,-1,-1,-1\n"
            "6,5,201.00,51.00,20.00,40.00,0.900,-1,-1,-1\n");
}

TEST(TrackRecorderTest, EachCameraHasItsOwnFileAndItsOwnPreviousFrame) {
  TempDir dir;
  TrackRecorder recorder(dir.path());
  recorder.record("door", 7, {recordedPerson(1, Box{0, 0, 10, 10})});
  TrackedPerson yard = recordedPerson(1, Box{20, 0, 10, 10});
  yard.start = Box{10, 0, 10, 10};
  recorder.record("yard", 2, {yard});  // the yard's first frame: no previous frame of its own
  EXPECT_EQ(fileText(dir.path() / "door.txt"), "8,1,1.00,1.00,10.00,10.00,0.900,-1,-1,-1\n");
  EXPECT_EQ(fileText(dir.path() / "yard.txt"), "3,1,21.00,1.00,10.00,10.00,0.900,-1,-1,-1\n");
}

TEST(TrackRecorderTest, AFileThatCannotBeWrittenIsSaidOnceAndSkipped) {
  TempDir dir;
  const auto missing = dir.path() / "no such directory";
  testing::LogCapture log("daemon");
  TrackRecorder recorder(missing);
  for (std::uint64_t frame = 0; frame < 3; ++frame) {
    recorder.record("door", frame, {recordedPerson(1, Box{0, 0, 10, 10})});
  }
  EXPECT_EQ(log.text(), "--tracks-out: cannot write " + (missing / "door.txt").string() + "\n");
  EXPECT_FALSE(std::filesystem::exists(missing));
}

}  // namespace
}  // namespace vigil
