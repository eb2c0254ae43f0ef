#pragma once

#include <cstdint>
#include <memory>

#include "daemon/capture/frame/frame_source.h"
// decodeV4l2Frame, the conversion read() does, for the tests and the fuzzer that use it with
// the source.
#include "daemon/capture/v4l2/v4l2_decode.h"

namespace vigil {

struct CameraConfig;

// A camera on a V4L2 device node (camera.location: /dev/videoN or a stable udev link such as
// /dev/v4l/by-id/...), streamed through libv4l2 with 4 mmap buffers and converted to BGR.
// Made of V4l2Device (opening, capability checks), negotiateV4l2Format (format, size, rate),
// V4l2BufferRing (mmap buffers, dequeue) and decodeV4l2Frame (conversion to BGR).
//
// open():
//  - kUnavailable when the node is missing ("no such device": it may be plugged in later),
//    not accessible ("permission denied (is the user in the video group?)"), busy, or fails
//    while streaming is set up; the supervisor retries.
//  - kInvalidArgument "<path>: not a video capture device (...)" for a node that is not V4L2
//    or has no capture/streaming capability.
//  - kUnsupported when the asked format (camera.format) is not offered or the driver sets
//    another one; the message lists what the device offers.
//  Format auto: MJPEG for 1280x720 and above when offered (YUYV at that size exceeds USB 2
//  bandwidth on most webcams), otherwise YUYV, otherwise MJPEG. A size the driver adjusts is
//  accepted and logged; SourceInfo carries the real size and frame rate.
// framesLost(): the gaps in the buffers' sequence numbers (v4l2SequenceGap) since the source
//  was made, each stream counted from its first buffer; a corrupt buffer is no gap.
// read(): kTimeout when no frame came within the timeout; kUnavailable when the device is
//  gone or failed (poll error/hang-up, DQBUF ENODEV/EIO): close() and reopen later;
//  kInvalidData "corrupt frame" for a frame to skip. No allocation once the frame's image has
//  the stream's size (a corrupt JPEG releases it; the next good frame allocates it again).
std::unique_ptr<FrameSource> makeV4l2Source(const CameraConfig& camera);

// Frames missing between two buffers of one stream, from their 32-bit V4L2 sequence numbers
// (which wrap): current - previous - 1 modulo 2^32. A number that did not move forward (equal,
// or more than 2^31 behind, as after a restart of the driver's counter) counts none.
std::uint32_t v4l2SequenceGap(std::uint32_t previous, std::uint32_t current);

// When a buffer's picture was taken: its timestamp when the driver stamps buffers on the
// monotonic clock (the steady_clock on Linux), `now` otherwise (realtime or unknown clocks
// cannot be compared with steady_clock).
SteadyClock::time_point v4l2CaptureTime(std::uint32_t bufferFlags, std::int64_t seconds,
                                        std::int64_t microseconds, SteadyClock::time_point now);

}  // namespace vigil
