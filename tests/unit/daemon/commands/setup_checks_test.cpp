#include "daemon/commands/setup_checks.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "tests/free_port.h"
#include "tests/temp_dir.h"

namespace vigil {
namespace {

using namespace std::chrono_literals;

TEST(EndpointOfTest, TakesHostAndPortAndTheSchemesDefault) {
  auto rtsp = endpointOf("rtsp://admin:p%40ss@cam.local/stream?x=1");
  ASSERT_TRUE(rtsp.has_value()) << rtsp.error().message;
  EXPECT_EQ(rtsp->host, "cam.local");
  EXPECT_EQ(rtsp->port, "554");
  auto v6 = endpointOf("http://[fe80::1]:8080/mjpeg");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "[fe80::1]");
  EXPECT_EQ(v6->port, "8080");
  auto mqtts = endpointOf("mqtts://broker");
  ASSERT_TRUE(mqtts.has_value());
  EXPECT_EQ(mqtts->port, "8883");
  EXPECT_EQ(endpointOf("https://nvr:7443").value().port, "7443");
}

TEST(EndpointOfTest, SaysWhatIsMissing) {
  EXPECT_EQ(endpointOf("cam.local").error().message, "not a URL (scheme://host...)");
  EXPECT_EQ(endpointOf("rtsp://user@/x").error().message, "no host in the URL");
  EXPECT_EQ(endpointOf("gopher://host").error().message, "no port, and gopher:// has no default");
}

// A socket listening on a loopback port of the kernel's choice.
struct ListeningSocket {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  ListeningSocket() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 4) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0) {
      port = ntohs(addr.sin_port);
    }
  }
  ~ListeningSocket() { ::close(fd); }
};

TEST(TcpReachableTest, AListeningPortAnswersAClosedOneRefuses) {
  ListeningSocket listener;
  ASSERT_NE(listener.port, 0);
  EXPECT_TRUE(tcpReachable({"127.0.0.1", std::to_string(listener.port)}, 2s).has_value());
  EXPECT_TRUE(tcpReachable({"localhost", std::to_string(listener.port)}, 2s).has_value())
      << "a name that resolves to more than one address (::1 refuses, 127.0.0.1 answers)";
  const int closed = testing::freeLoopbackPort();
  auto refused = tcpReachable({"127.0.0.1", std::to_string(closed)}, 2s);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(refused.error().message, "Connection refused");
}

CameraConfig setupCamera(const std::string& name, SourceKind kind, const std::string& location) {
  CameraConfig c;
  c.name = name;
  c.kind = kind;
  c.location = location;
  return c;
}

TEST(CheckSetupTest, EachCameraSourceIsCheckedForWhatItIs) {
  TempDir dir;
  const std::string clip = (dir.path() / "clip.mp4").string();
  std::ofstream(clip) << "0123456789";
  ListeningSocket stream;
  const int closed = testing::freeLoopbackPort();
  Config config;
  config.cameras = {
      setupCamera("clip", SourceKind::kFile, clip),
      setupCamera("gone", SourceKind::kFile, (dir.path() / "gone.mp4").string()),
      setupCamera("nvr", SourceKind::kRtsp,
                  "rtsp://127.0.0.1:" + std::to_string(stream.port) + "/a"),
      setupCamera("off", SourceKind::kRtsp, "rtsp://u:secret@127.0.0.1:" + std::to_string(closed)),
      setupCamera("usb", SourceKind::kV4l2, (dir.path() / "video9").string()),
      setupCamera("notv4l2", SourceKind::kV4l2, clip)};
  config.cameras.push_back(setupCamera("spare", SourceKind::kV4l2, "/dev/video-none"));
  config.cameras.back().enabled = false;

  const auto findings = checkSetup(config);
  ASSERT_EQ(findings.size(), config.cameras.size()) << "one finding per camera, no MQTT section";
  const std::pair<bool, std::string> expected[] = {
      {true, "file " + clip + ": readable, 0.0 MB"},
      {false, "file " + (dir.path() / "gone.mp4").string() + ": ABSENT"},
      {true, "rtsp 127.0.0.1:" + std::to_string(stream.port) +
                 ": answers (TCP; the stream itself is opened when vigil runs)"},
      {false, "rtsp 127.0.0.1:" + std::to_string(closed) + ": UNREACHABLE: Connection refused"},
      {false, "v4l2 NOT USABLE: " + (dir.path() / "video9").string() + ": no such device"},
      {false, "v4l2 NOT USABLE: " + clip + ": not a video capture device (not a character device)"},
      {true, "disabled (enabled: false): not checked"}};
  for (std::size_t i = 0; i < findings.size(); ++i) {
    EXPECT_EQ(findings[i].what, "camera " + config.cameras[i].name);
    EXPECT_EQ(findings[i].found, expected[i].second);
    EXPECT_EQ(findings[i].ok, expected[i].first) << findings[i].found;
  }
}

TEST(CheckSetupTest, APictureSourceIsCheckedBesideItsCamerasSource) {
  TempDir dir;
  const std::string clip = (dir.path() / "sub.mp4").string();
  std::ofstream(clip) << "0123456789";
  Config config;
  config.cameras = {setupCamera("door", SourceKind::kFile, clip)};
  config.cameras[0].picture.source = "file:main.mp4";
  config.cameras[0].picture.kind = SourceKind::kFile;
  config.cameras[0].picture.location = (dir.path() / "main.mp4").string();
  const auto findings = checkSetup(config);
  ASSERT_EQ(findings.size(), 2U);
  EXPECT_EQ(findings[0].what, "camera door");
  EXPECT_TRUE(findings[0].ok) << findings[0].found;
  EXPECT_EQ(findings[1].what, "camera door/picture");
  EXPECT_EQ(findings[1].found, "file " + (dir.path() / "main.mp4").string() + ": ABSENT");
  EXPECT_FALSE(findings[1].ok);
}

TEST(CheckSetupTest, AVaapiDeviceThatCannotBeOpenedIsSaidWithTheSoftwareFallback) {
  TempDir dir;
  const std::string clip = (dir.path() / "clip.mp4").string();
  std::ofstream(clip) << "0123456789";
  Config config;
  config.cameras = {setupCamera("clip", SourceKind::kFile, clip),
                    setupCamera("usb", SourceKind::kV4l2, "/dev/video-none")};
  for (CameraConfig& c : config.cameras) c.hwDecode = {HwAccel::kVaapi, "/dev/dri/renderD-none"};
  const auto findings = checkSetup(config);
  ASSERT_EQ(findings.size(), 3U) << "the file, its hardware decode, the V4L2 node (never VAAPI)";
  EXPECT_EQ(findings[1].what, "camera clip");
  EXPECT_EQ(
      findings[1].found.rfind("hwaccel vaapi, NOT USABLE: VAAPI device /dev/dri/renderD-none: ", 0),
      0U)
      << findings[1].found;
  EXPECT_NE(findings[1].found.find("; the camera decodes in software"), std::string::npos);
  EXPECT_FALSE(findings[1].ok);
  EXPECT_EQ(findings[2].what, "camera usb");
}

TEST(CheckSetupTest, ABrokerThatIsNotThereIsSaid) {
  Config config;
  config.mqtt.enabled = true;
  config.mqtt.url = "mqtt://127.0.0.1:" + std::to_string(testing::freeLoopbackPort());
  config.mqtt.clientId = "vigil-hall";
  const auto findings = checkSetup(config, {.timeout = 5s});
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].what, "mqtt");
  EXPECT_FALSE(findings[0].ok);
  EXPECT_TRUE(findings[0].found.starts_with(config.mqtt.url + ": NOT CONNECTED: cannot connect"))
      << findings[0].found;
}

}  // namespace
}  // namespace vigil
