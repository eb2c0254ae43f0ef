#pragma once

namespace vigil {

// Sends FFmpeg's own messages to the "ffmpeg" logger instead of raw stderr, from the first call
// on (once per process; any thread): warnings and errors only, rate-limited, repeats said once
// per 10 minutes (ffmpeg_log.cpp says how).
void routeFfmpegLogs();

}  // namespace vigil
