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

TEST(YamlReaderTest, CollectingRecordsEveryUnknownKeyAndTheMapIsReadOn) {
  YamlReader yaml = YamlReader::fromString(
      "log:\n  levle: info\n  level: debug\n  color: red\n"
      "  level: warn\n",
      "cameras.yaml");
  YamlErrors errors;
  yaml.collectInto(errors);
  const YAML::Node log = yaml.root()["log"];
  yaml.rejectUnknownKeys(log, "log", {"level"});
  EXPECT_EQ(yaml.getString(log, "log", "level"), "debug") << "the keys it knows are read on";
  EXPECT_EQ(
      errors.message(),
      "3 errors:\n"
      "cameras.yaml:2:3: log.levle: unknown key; did you mean 'level'? (allowed here: level)\n"
      "cameras.yaml:4:3: log.color: unknown key (allowed here: level)\n"
      "cameras.yaml:5:3: log.level: duplicate key");
  EXPECT_FALSE(yaml.collect([&] { yaml.getInt(log, "log", "level", 0, 1); }));
  EXPECT_EQ(errors.size(), 4U);
  EXPECT_EQ(failureOf([&] { errors.throwIfAny(); }), errors.message());
}

TEST(YamlReaderTest, WithoutCollectingTheFirstProblemThrows) {
  const YamlReader yaml =
      YamlReader::fromString("log:\n  levle: info\n  color: red\n", "cameras.yaml");
  EXPECT_EQ(
      failureOf([&] { yaml.rejectUnknownKeys(yaml.root()["log"], "log", {"level"}); }),
      "cameras.yaml:2:3: log.levle: unknown key; did you mean 'level'? (allowed here: level)");
  EXPECT_EQ(failureOf([&] { yaml.collect([&] { yaml.getInt(yaml.root(), "", "log", 0, 1); }); }),
            "cameras.yaml:2:3: log: expected a value, got a mapping");
}

TEST(YamlReaderTest, CollectedErrorsAreInFileOrderAndOneIsShownAsItIs) {
  YamlErrors one;
  one.add(YamlError("a.yaml:9:1: x: wrong", 9, 1));
  EXPECT_EQ(one.message(), "a.yaml:9:1: x: wrong");
  YamlErrors several;
  several.add(YamlError("a.yaml:9:1: x: wrong", 9, 1));
  several.add(YamlError("a.yaml:2:7: y: wrong", 2, 7));
  several.add(YamlError("a.yaml:2:3: z: wrong", 2, 3));
  EXPECT_EQ(several.message(),
            "3 errors:\na.yaml:2:3: z: wrong\na.yaml:2:7: y: wrong\na.yaml:9:1: x: wrong");
}

TEST(YamlReaderTest, PathsJoinKeysAndIndices) {
  EXPECT_EQ(YamlReader::join("", "mqtt"), "mqtt");
  EXPECT_EQ(YamlReader::join("mqtt", "url"), "mqtt.url");
  EXPECT_EQ(YamlReader::index("cameras", 2), "cameras[2]");
}

}  // namespace
}  // namespace vigil
