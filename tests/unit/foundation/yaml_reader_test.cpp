// The strict YAML reader every configuration and manifest is read through: each problem says
// the file, line and column, the key's path and why.
#include "foundation/yaml_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace vigil {
namespace {

std::string failureOf(const auto& read) {
  try {
    read();
  } catch (const YamlError& e) {
    return e.what();
  }
  return "no failure";
}

TEST(YamlReaderTest, AValueOutOfRangeSaysFileLineColumnPathAndWhy) {
  const YamlReader yaml =
      YamlReader::fromString("cameras:\n  - name: door\n    fps: 0\n", "cameras.yaml");
  const YAML::Node camera = yaml.root()["cameras"][0];
  const std::string failure = failureOf([&] { yaml.getInt(camera, "cameras[0]", "fps", 1, 60); });
  EXPECT_EQ(failure.rfind("cameras.yaml:3:10: cameras[0].fps: ", 0), 0U) << failure;
  EXPECT_NE(failure.find("0"), std::string::npos) << failure;
  EXPECT_EQ(yaml.getInt(camera, "cameras[0]", "detect_fps", 1, 60, 5), 5) << "absent: fallback";
}

TEST(YamlReaderTest, AnUnknownKeyIsNamedWithItsPlace) {
  const YamlReader yaml = YamlReader::fromString("mqtt:\n  url: x\n  uri: y\n", "cameras.yaml");
  const std::string failure = failureOf([&] {
    yaml.rejectUnknownKeys(yaml.root()["mqtt"], "mqtt", {"url", "topic"});
  });
  EXPECT_EQ(failure.rfind("cameras.yaml:3:3: mqtt.uri: ", 0), 0U) << failure;
}

TEST(YamlReaderTest, ASyntaxErrorAndAMissingFileAreRefusedWithTheirPlace) {
  const std::string syntax = failureOf([] { YamlReader::fromString("a: [1, 2\n", "broken.yaml"); });
  EXPECT_EQ(syntax.rfind("broken.yaml:", 0), 0U) << syntax;
  const std::string missing = failureOf([] { YamlReader::fromFile("/nonexistent/cameras.yaml"); });
  EXPECT_NE(missing.find("/nonexistent/cameras.yaml"), std::string::npos) << missing;
}

TEST(YamlReaderTest, PathsJoinKeysAndIndices) {
  EXPECT_EQ(YamlReader::join("", "mqtt"), "mqtt");
  EXPECT_EQ(YamlReader::join("mqtt", "url"), "mqtt.url");
  EXPECT_EQ(YamlReader::index("cameras", 2), "cameras[2]");
}

}  // namespace
}  // namespace vigil
