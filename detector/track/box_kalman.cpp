#include "detector/track/box_kalman.h"

#include <algorithm>

namespace vigil {

namespace {

// DeepSORT's noise weights (kalman_filter.py): position and velocity, relative to the height.
constexpr double kWeightPosition = 1.0 / 20;
constexpr double kWeightVelocity = 1.0 / 160;
// The aspect ratio's noise, absolute.
constexpr double kAspectPosition = 1e-2;
constexpr double kAspectVelocity = 1e-5;
constexpr double kAspectMeasurement = 1e-1;

double sq(double v) { return v * v; }

}  // namespace

BoxKalman::BoxKalman(const Box& b) {
  const double h = std::max(1.0F, b.height);
  const double measured[4] = {b.x + b.width / 2.0, b.y + b.height / 2.0, b.width / h, h};
  for (int i = 0; i < 4; ++i) {
    Axis& a = axes_[static_cast<std::size_t>(i)];
    a.x = measured[i];
    const bool aspect = i == kAspect;
    a.pxx = aspect ? sq(kAspectPosition) : sq(2 * kWeightPosition * h);
    a.pvv = aspect ? sq(kAspectVelocity) : sq(10 * kWeightVelocity * h);
  }
}

double BoxKalman::height() const { return std::max(1.0, axes_[kHeight].x); }

void BoxKalman::predict(double dtSeconds) {
  const double dt = std::max(0.0, dtSeconds) * kReferenceFps;
  if (dt == 0) return;
  const double h = height();
  for (int i = 0; i < 4; ++i) {
    Axis& a = axes_[static_cast<std::size_t>(i)];
    const bool aspect = i == kAspect;
    // x' = x + v dt; P' = F P F^T + Q dt (the per-frame noise, accumulated over dt frames).
    a.x += a.v * dt;
    a.pxx += 2 * dt * a.pxv + dt * dt * a.pvv;
    a.pxv += dt * a.pvv;
    a.pxx += dt * (aspect ? sq(kAspectPosition) : sq(kWeightPosition * h));
    a.pvv += dt * (aspect ? sq(kAspectVelocity) : sq(kWeightVelocity * h));
  }
}

void BoxKalman::update(const Box& b) {
  const double hb = std::max(1.0F, b.height);
  const double measured[4] = {b.x + b.width / 2.0, b.y + b.height / 2.0, b.width / hb, hb};
  const double h = height();
  for (int i = 0; i < 4; ++i) {
    Axis& a = axes_[static_cast<std::size_t>(i)];
    const double r = i == kAspect ? sq(kAspectMeasurement) : sq(kWeightPosition * h);
    const double s = a.pxx + r;  // innovation covariance
    const double kx = a.pxx / s;
    const double kv = a.pxv / s;
    const double innovation = measured[i] - a.x;
    a.x += kx * innovation;
    a.v += kv * innovation;
    // P = (I - K H) P
    const double pxx = a.pxx;
    const double pxv = a.pxv;
    a.pxx = pxx - kx * pxx;
    a.pxv = pxv - kx * pxv;
    a.pvv = a.pvv - kv * pxv;
  }
}

Box BoxKalman::box() const {
  const double h = height();
  const double w = std::max(0.0, axes_[kAspect].x) * h;
  return Box{static_cast<float>(axes_[kCx].x - w / 2), static_cast<float>(axes_[kCy].x - h / 2),
             static_cast<float>(w), static_cast<float>(h)};
}

}  // namespace vigil
