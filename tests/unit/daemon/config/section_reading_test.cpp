// The readings every section shares (section_reading), on their own: names, paths made
// absolute, numbers, seconds, secret files (and their permissions) and hwaccel, each mistake said
// at its file:line:col with its key.
#include "daemon/config/section_reading.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;
using namespace yaml_config;

// What `read` throws, or "" when it does not.
template <typename F>
std::string sectionThrownBy(F&& read) {
  try {
    read();
  } catch (const YamlError& e) {
    return e.what();
  }
  return "";
}

TEST(SectionReadingTest, ANameIsOneTo64LowerCaseLettersDigitsUnderscoresAndDashes) {
  EXPECT_TRUE(validName("door"));
  EXPECT_TRUE(validName("front_door-2"));
  EXPECT_TRUE(validName(std::string(64, 'a')));
  EXPECT_FALSE(validName(std::string(65, 'a')));
  EXPECT_FALSE(validName(""));
  EXPECT_FALSE(validName("Door"));
  EXPECT_FALSE(validName("front door"));
  EXPECT_FALSE(validName("door/1")) << "it goes into MQTT topics";
}

TEST(SectionReadingTest, APathIsMadeAbsoluteAgainstTheFilesDirectory) {
  EXPECT_EQ(resolve("/etc/vigil", "certs/vigil.crt"), "/etc/vigil/certs/vigil.crt");
  EXPECT_EQ(resolve("/etc/vigil", "../secrets/door.pass"), "/etc/secrets/door.pass");
  EXPECT_EQ(resolve("/etc/vigil", "/srv/clip.mp4"), "/srv/clip.mp4");
  EXPECT_TRUE(startsWith("rtsp://cam", "rtsp://"));
  EXPECT_FALSE(startsWith("rtsp", "rtsp://"));
}

TEST(SectionReadingTest, ANumberIsAFiniteNumberAndSecondsAreRoundedToMilliseconds) {
  const YamlReader r =
      YamlReader::fromString("a: 2.5\nb: abc\nc: .inf\nd: [1]\ne: 1e-3\n", "cameras.yaml");
  EXPECT_EQ(readNumber(r, r.root()["a"], "a"), 2.5);
  EXPECT_EQ(readNumber(r, r.root()["e"], "e"), 0.001);
  EXPECT_EQ(sectionThrownBy([&] { readNumber(r, r.root()["b"], "b"); }),
            "cameras.yaml:2:4: b: expected a number, got 'abc'");
  EXPECT_EQ(sectionThrownBy([&] { readNumber(r, r.root()["c"], "c"); }),
            "cameras.yaml:3:4: c: expected a number, got '.inf'");
  EXPECT_EQ(sectionThrownBy([&] { readNumber(r, r.root()["d"], "d"); }),
            "cameras.yaml:4:4: d: expected a number");
  EXPECT_EQ(seconds(1.2345), 1235ms);
  EXPECT_EQ(seconds(0.0004), 0ms);
}

TEST(SectionReadingTest, ASecretFileIsItsOneLine) {
  TempDir dir;
  const YamlReader r = YamlReader::fromString("password_file: x\n", "cameras.yaml");
  const YAML::Node node = r.root()["password_file"];
  writeFile(dir.path() / "unix", "s3cret\n");
  writeFile(dir.path() / "dos", "s3cret\r\n");
  writeFile(dir.path() / "empty", "\n");
  EXPECT_EQ(readSecretFile(r, node, "mqtt.password_file", dir.path() / "unix"), "s3cret");
  EXPECT_EQ(readSecretFile(r, node, "mqtt.password_file", dir.path() / "dos"), "s3cret");
  EXPECT_EQ(
      sectionThrownBy([&] { readSecretFile(r, node, "mqtt.password_file", dir.path() / "empty"); }),
      "cameras.yaml:1:16: mqtt.password_file: '" + (dir.path() / "empty").string() + "' is empty");
  EXPECT_EQ(
      sectionThrownBy([&] { readSecretFile(r, node, "mqtt.password_file", dir.path() / "gone"); }),
      "cameras.yaml:1:16: mqtt.password_file: cannot read '" + (dir.path() / "gone").string() +
          "': No such file or directory");
}

TEST(SectionReadingTest, ASecretEveryUserCanReadIsAWarningNotAnError) {
  TempDir dir;
  const YamlReader r = YamlReader::fromString("password_file: x\n", "cameras.yaml");
  const auto secret = dir.path() / "secret";
  writeFile(secret, "s3cret\n");
  std::vector<std::string> warnings;
  ::chmod(secret.c_str(), 0640);
  warnIfWorldReadable(r, r.root()["password_file"], "mqtt.password_file", secret, warnings);
  EXPECT_TRUE(warnings.empty());
  ::chmod(secret.c_str(), 0644);
  warnIfWorldReadable(r, r.root()["password_file"], "mqtt.password_file", secret, warnings);
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_EQ(warnings[0], "cameras.yaml:1:16: mqtt.password_file: '" + secret.string() +
                             "' is readable by every user (mode 0644); chmod 600 or 640 it");
}

TEST(SectionReadingTest, HwaccelIsNoneOrVaapiAndTheFallbackWhenAbsent) {
  const YamlReader r = YamlReader::fromString(
      "a: {hwaccel: vaapi}\nb: {hwaccel: none}\nc: {}\nd: {hwaccel: cuda}\n", "cameras.yaml");
  EXPECT_EQ(readHwAccel(r, r.root()["a"], "a", HwAccel::kNone), HwAccel::kVaapi);
  EXPECT_EQ(readHwAccel(r, r.root()["b"], "b", HwAccel::kVaapi), HwAccel::kNone);
  EXPECT_EQ(readHwAccel(r, r.root()["c"], "c", HwAccel::kVaapi), HwAccel::kVaapi);
  EXPECT_EQ(sectionThrownBy([&] { readHwAccel(r, r.root()["d"], "d", HwAccel::kNone); }),
            "cameras.yaml:4:14: d.hwaccel: must be none or vaapi, got 'cuda'");
}

}  // namespace
}  // namespace vigil
