#include "daemon/commands/cameras_command.h"

#include <nlohmann/json.hpp>
#include <ostream>

#include "daemon/capture/v4l2/v4l2_devices.h"

namespace vigil {

void addCamerasCommand(CLI::App& app, CamerasCommandOptions& options) {
  CLI::App* cmd =
      app.add_subcommand("cameras", "List V4L2 cameras with their formats, sizes and frame rates");
  cmd->add_flag("--json", options.json, "Print a JSON array, one object per device node");
}

namespace {

nlohmann::json toJson(const V4l2DeviceInfo& device) {
  nlohmann::json formats = nlohmann::json::array();
  for (const V4l2FormatInfo& format : device.formats) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const V4l2SizeInfo& size : format.sizes) {
      sizes.push_back({{"width", size.width},
                       {"height", size.height},
                       {"fps", size.fps},
                       {"fps_range", size.fpsRange}});
    }
    formats.push_back({{"fourcc", format.fourcc},
                       {"description", format.description},
                       {"size_range", format.sizeRange},
                       {"sizes", sizes}});
  }
  nlohmann::json json = {
      {"path", device.path},
      {"card", device.card},
      {"driver", device.driver},
      {"bus_info", device.busInfo},
      {"capabilities", device.capabilities},
      {"capture", device.capture},
      {"links", device.links},
      {"formats", formats},
  };
  if (!device.error.empty()) json["error"] = device.error;
  return json;
}

}  // namespace

int runCamerasCommand(const CamerasCommandOptions& options, std::ostream& out) {
  const auto devices = listV4l2Devices(options.devDir);
  if (options.json) {
    nlohmann::json array = nlohmann::json::array();
    for (const V4l2DeviceInfo& device : devices) array.push_back(toJson(device));
    out << array.dump(2) << '\n';
  } else {
    out << formatV4l2Devices(devices, options.devDir);
  }
  return 0;
}

}  // namespace vigil
