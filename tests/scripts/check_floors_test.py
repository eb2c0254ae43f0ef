"""scripts/check-floors.py on small trees made here: each rule fails on the include that breaks it,
named by file and line, and passes the same tree without it."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-floors.py"
FLOORS = ["--floors", "base", "capture", "mqtt", "--inside", "capture=picture,v4l2+ffmpeg,camera",
          "--door", "foundation/error.h=daemon/base/error.h"]
# A tree whose every include goes down: the base for each case, which adds one file.
CLEAN = {
    "foundation/error.h": "",
    "detector/box.h": '#include "foundation/error.h"\n',
    "daemon/base/error.h": '#include "foundation/error.h"\n',
    "daemon/base/log.h": '#include "daemon/base/error.h"\n',
    "daemon/capture/picture/jpeg.h": '#include "daemon/base/log.h"\n',
    "daemon/capture/v4l2/device.h": '#include "daemon/capture/picture/jpeg.h"\n',
    "daemon/capture/ffmpeg/reader.h": "#include <daemon/capture/picture/jpeg.h>\n",
    "daemon/capture/camera/camera.h": ('#include "daemon/capture/v4l2/device.h"\n'
                                       '#include "daemon/capture/ffmpeg/reader.h"\n'),
    "daemon/mqtt/client.h": '#include "daemon/capture/camera/camera.h"\n#include <vector>\n',
}


def check(extra):
    with tempfile.TemporaryDirectory() as tree:
        for rel, text in {**CLEAN, **extra}.items():
            path = pathlib.Path(tree, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        run = subprocess.run([sys.executable, str(SCRIPT), tree, *FLOORS],
                             capture_output=True, text=True)
        return run.returncode, run.stderr


class CheckFloorsTest(unittest.TestCase):
    def assertFails(self, extra, where, why):
        status, problems = check(extra)
        self.assertEqual(status, 1, problems)
        self.assertIn(where, problems)
        self.assertIn(why, problems)

    def test_a_tree_whose_includes_go_down_passes(self):
        self.assertEqual(check({}), (0, ""))

    def test_a_quoted_include_that_climbs_fails(self):
        self.assertFails({"daemon/capture/camera/up.h": '#include "daemon/mqtt/client.h"\n'},
                         "daemon/capture/camera/up.h:1:", "daemon/mqtt is above it")

    def test_an_angle_bracket_include_that_climbs_fails(self):
        self.assertFails({"daemon/capture/camera/up.h": "#include <vector>\n"
                                                        "#include <daemon/mqtt/client.h>\n"},
                         "daemon/capture/camera/up.h:2:", "daemon/mqtt is above it")

    def test_a_sub_floor_that_climbs_inside_its_folder_fails(self):
        self.assertFails({"daemon/capture/picture/up.h":
                          '#include "daemon/capture/camera/camera.h"\n'},
                         "daemon/capture/picture/up.h:1:", "camera/ is above it")

    def test_side_by_side_sub_floors_include_neither_the_other(self):
        self.assertFails({"daemon/capture/v4l2/beside.h":
                          '#include "../ffmpeg/reader.h"\n'},
                         "daemon/capture/v4l2/beside.h:1:", "stand side by side")

    def test_a_file_outside_the_folders_own_floors_fails(self):
        self.assertFails({"daemon/capture/loose.h": ""},
                         "daemon/capture/loose.h:1:", "not in daemon/capture/.")

    def test_the_detector_never_includes_the_daemon(self):
        self.assertFails({"detector/up.h": "#include <daemon/base/log.h>\n"},
                         "detector/up.h:1:", "detector/ stands below daemon/")

    def test_the_foundation_never_includes_the_detector(self):
        self.assertFails({"foundation/up.h": '#include "detector/box.h"\n'},
                         "foundation/up.h:1:", "foundation/ stands below detector/")

    def test_the_daemon_reaches_the_error_vocabulary_through_its_door(self):
        self.assertFails({"daemon/mqtt/direct.h": '#include "foundation/error.h"\n'},
                         "daemon/mqtt/direct.h:1:", "through daemon/base/error.h")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    unittest.main()
