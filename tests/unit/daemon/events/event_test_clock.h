#pragma once

#include <chrono>

// The instants and the frame size the event tests (presence, publisher) describe their scenes in.
namespace vigil::event_test {

// 2023-11-14T22:13:20Z, so event ids are exact strings.
inline const std::chrono::system_clock::time_point kT0{
    std::chrono::milliseconds{1'700'000'000'000}};
// Not square, so a swapped width and height shows in the normalized boxes.
inline constexpr int kWidth = 1000;
inline constexpr int kHeight = 500;

inline std::chrono::system_clock::time_point at(int ms) {
  return kT0 + std::chrono::milliseconds{ms};
}
// The same instant on the monotonic clock, which presence measures every duration on.
inline std::chrono::steady_clock::time_point monotonicAt(int ms) {
  return std::chrono::steady_clock::time_point{std::chrono::hours{1} +
                                               std::chrono::milliseconds{ms}};
}

}  // namespace vigil::event_test
