#pragma once

#include <pthread.h>

#include <string>
#include <string_view>
#include <thread>

namespace vigil {

// Names a thread as `top -H`, `ps -L` and /proc/PID/task/TID/comm show it: Linux keeps the
// first 15 bytes.
inline void nameThread(std::thread& thread, std::string_view name) {
  constexpr std::size_t kLinuxLimit = 15;
  const std::string shown(name.substr(0, kLinuxLimit));
  pthread_setname_np(thread.native_handle(), shown.c_str());
}

}  // namespace vigil
