#include "daemon/service/control_signals.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>

namespace vigil {
namespace {

// Runs `io` until `done` says so (or 5 s pass, so that a test that goes wrong fails).
template <class Done>
void runSignalsUntil(boost::asio::io_context& io, Done done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < end) {
    io.restart();
    io.run_for(std::chrono::milliseconds(10));
  }
}

TEST(ControlSignalsTest, SighupReloadsAgainAndAgainAndSigtermStops) {
  boost::asio::io_context io;
  int reloads = 0;
  int stops = 0;
  ControlSignals signals(
      io, [&] { ++reloads; }, [&] { ++stops; });
  signals.listen();
  std::raise(SIGHUP);
  runSignalsUntil(io, [&] { return reloads == 1; });
  std::raise(SIGHUP);
  runSignalsUntil(io, [&] { return reloads == 2; });
  EXPECT_EQ(stops, 0);
  std::raise(SIGTERM);
  runSignalsUntil(io, [&] { return stops == 1; });
  EXPECT_EQ(reloads, 2);
  EXPECT_EQ(stops, 1);
}

TEST(ControlSignalsTest, DurationStopsAndCancelEndsTheListening) {
  boost::asio::io_context io;
  int stops = 0;
  ControlSignals signals(
      io, [] {}, [&] { ++stops; });
  signals.listen();
  signals.stopAfter(0.02);
  runSignalsUntil(io, [&] { return stops == 1; });
  EXPECT_EQ(stops, 1);
  signals.cancel();
  io.restart();
  io.run();  // the cancelled wait ends without a call: nothing is left to wait for
  EXPECT_EQ(stops, 1);
}

}  // namespace
}  // namespace vigil
