// The metrics registry: exact text exposition output, escaping, callback series that are
// absent, removal, concurrent updates, name validation, process metrics from a fake procfs,
// and the output checked by the real promtool.
#include "daemon/base/metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>

#include "tests/temp_dir.h"

namespace vigil {
namespace {

TEST(MetricsFormat, ValuesParseInPrometheus) {
  EXPECT_EQ(formatMetricValue(0), "0");
  EXPECT_EQ(formatMetricValue(1), "1");
  EXPECT_EQ(formatMetricValue(-3), "-3");
  EXPECT_EQ(formatMetricValue(0.1), "0.1");
  EXPECT_EQ(formatMetricValue(2.5), "2.5");
  EXPECT_EQ(formatMetricValue(123456789012345.0), "123456789012345");
  EXPECT_EQ(formatMetricValue(1e-7), "1e-07");
  EXPECT_EQ(formatMetricValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(formatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(formatMetricValue(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(MetricsRender, CounterWithLabels) {
  Registry registry;
  CounterFamily& frames =
      registry.counter("vigil_frames_captured_total", "Frames read from the camera", {"camera"});
  frames.labels({"front"})->inc();
  frames.labels({"front"})->inc(2);
  frames.labels({"back"})->inc(0.5);
  frames.labels({"front"})->inc(-10);  // ignored: counters only go up
  EXPECT_EQ(registry.render(),
            "# HELP vigil_frames_captured_total Frames read from the camera\n"
            "# TYPE vigil_frames_captured_total counter\n"
            "vigil_frames_captured_total{camera=\"back\"} 0.5\n"
            "vigil_frames_captured_total{camera=\"front\"} 3\n");
}

TEST(MetricsRender, UnlabelledGaugeStartsAtZero) {
  Registry registry;
  GaugeFamily& queue = registry.gauge("vigil_queue_depth", "Frames waiting");
  EXPECT_EQ(registry.render(),
            "# HELP vigil_queue_depth Frames waiting\n"
            "# TYPE vigil_queue_depth gauge\n"
            "vigil_queue_depth 0\n");
  std::shared_ptr<Gauge> g = queue.labels({});
  g->set(5);
  g->inc();
  g->dec(2.5);
  EXPECT_EQ(g->value(), 3.5);
  g->set(std::numeric_limits<double>::infinity());
  EXPECT_EQ(registry.render(),
            "# HELP vigil_queue_depth Frames waiting\n"
            "# TYPE vigil_queue_depth gauge\n"
            "vigil_queue_depth +Inf\n");
}

TEST(MetricsRender, LabelledFamilyWithoutChildrenIsLeftOut) {
  Registry registry;
  registry.counter("a_total", "A", {"camera"});
  registry.gauge("b", "B");
  EXPECT_EQ(registry.render(), "# HELP b B\n# TYPE b gauge\nb 0\n");
}

TEST(MetricsRender, HistogramBucketsAreCumulative) {
  Registry registry;
  const std::vector<double> bounds{0.25, 1, 2.5};
  HistogramFamily& latency = registry.histogram("vigil_inference_seconds", "Inference latency",
                                                {"camera", "backend"}, bounds);
  std::shared_ptr<Histogram> h = latency.labels({"front", "npu"});
  h->observe(0.125);
  h->observe(0.25);  // le is inclusive
  h->observe(0.5);
  h->observe(3);
  h->observe(3);
  EXPECT_EQ(registry.render(),
            "# HELP vigil_inference_seconds Inference latency\n"
            "# TYPE vigil_inference_seconds histogram\n"
            "vigil_inference_seconds_bucket{camera=\"front\",backend=\"npu\",le=\"0.25\"} 2\n"
            "vigil_inference_seconds_bucket{camera=\"front\",backend=\"npu\",le=\"1\"} 3\n"
            "vigil_inference_seconds_bucket{camera=\"front\",backend=\"npu\",le=\"2.5\"} 3\n"
            "vigil_inference_seconds_bucket{camera=\"front\",backend=\"npu\",le=\"+Inf\"} 5\n"
            "vigil_inference_seconds_sum{camera=\"front\",backend=\"npu\"} 6.875\n"
            "vigil_inference_seconds_count{camera=\"front\",backend=\"npu\"} 5\n");
}

TEST(MetricsRender, UnlabelledHistogramWithDefaultBuckets) {
  Registry registry;
  HistogramFamily& family = registry.histogram("x_seconds", "X");
  EXPECT_EQ(family.bounds(), std::vector<double>(kLatencyBuckets.begin(), kLatencyBuckets.end()));
  family.labels({})->observe(std::numeric_limits<double>::quiet_NaN());
  std::string text = registry.render();
  EXPECT_NE(text.find("x_seconds_bucket{le=\"0.005\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_seconds_bucket{le=\"10\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_seconds_bucket{le=\"+Inf\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x_seconds_sum NaN\nx_seconds_count 1\n"), std::string::npos) << text;
}

TEST(MetricsRender, EscapesLabelValuesAndHelp) {
  Registry registry;
  registry.gauge("g", "Line one\nback\\slash \"quotes\" stay", {"path"})
      .labels({"C:\\cam \"1\"\nnext"})
      ->set(1);
  EXPECT_EQ(registry.render(),
            "# HELP g Line one\\nback\\\\slash \"quotes\" stay\n"
            "# TYPE g gauge\n"
            "g{path=\"C:\\\\cam \\\"1\\\"\\nnext\"} 1\n");
}

TEST(MetricsRender, FamiliesInRegistrationOrder) {
  Registry registry;
  registry.gauge("zeta", "Z");
  registry.gauge("alpha", "A");
  EXPECT_EQ(registry.render(),
            "# HELP zeta Z\n# TYPE zeta gauge\nzeta 0\n"
            "# HELP alpha A\n# TYPE alpha gauge\nalpha 0\n");
}

TEST(MetricsRender, InfoGauge) {
  Registry registry;
  registry.info("vigil_build_info", "Build facts", {{"version", "0.1.0"}, {"backend", "cpu"}});
  EXPECT_EQ(registry.render(),
            "# HELP vigil_build_info Build facts\n"
            "# TYPE vigil_build_info gauge\n"
            "vigil_build_info{version=\"0.1.0\",backend=\"cpu\"} 1\n");
}

TEST(MetricsCallback, AbsentSeriesAreLeftOutNotZero) {
  Registry registry;
  std::optional<double> npu;
  CallbackFamily& power = registry.callbackGauge("power_watts", "Power", {"device"});
  power.add({"npu"}, [&npu] { return npu; });
  power.add({"apu"}, [] { return std::optional<double>(7.25); });
  power.add({"broken"}, []() -> std::optional<double> { throw std::runtime_error("sensor"); });
  registry.callbackCounter("energy_joules_total", "Energy").add({}, [] {
    return std::optional<double>();
  });
  EXPECT_EQ(registry.render(),
            "# HELP power_watts Power\n"
            "# TYPE power_watts gauge\n"
            "power_watts{device=\"apu\"} 7.25\n");
  npu = 1.5;
  EXPECT_EQ(registry.render(),
            "# HELP power_watts Power\n"
            "# TYPE power_watts gauge\n"
            "power_watts{device=\"apu\"} 7.25\n"
            "power_watts{device=\"npu\"} 1.5\n");
}

TEST(MetricsRemove, RemovedChildIsNotRenderedAndHeldPointerStaysValid) {
  Registry registry;
  CounterFamily& frames = registry.counter("frames_total", "Frames", {"camera"});
  std::shared_ptr<Counter> front = frames.labels({"front"});
  frames.labels({"back"})->inc(4);
  front->inc(2);
  frames.remove({"front"});
  frames.remove({"never-added"});
  front->inc();  // a thread still winding down: harmless
  EXPECT_EQ(registry.render(),
            "# HELP frames_total Frames\n# TYPE frames_total counter\n"
            "frames_total{camera=\"back\"} 4\n");
  EXPECT_EQ(frames.labels({"front"})->value(), 0);  // a fresh child, a counter reset

  CallbackFamily& cb = registry.callbackGauge("cb", "CB", {"camera"});
  cb.add({"front"}, [] { return std::optional<double>(1); });
  cb.remove({"front"});
  EXPECT_EQ(registry.render().find("cb"), std::string::npos);
}

TEST(MetricsConcurrency, IncrementsFromSeveralThreadsSum) {
  Registry registry;
  std::shared_ptr<Counter> counter = registry.counter("c_total", "C").labels({});
  std::shared_ptr<Histogram> histogram =
      registry.histogram("h_seconds", "H", {}, std::vector<double>{1}).labels({});
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        counter->inc();
        histogram->observe(t % 2 == 0 ? 0.5 : 2.0);
        if (i % 10000 == 0) (void)registry.render();  // a scrape meanwhile
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter->value(), kThreads * kPerThread);
  Histogram::Snapshot s = histogram->snapshot();
  EXPECT_EQ(s.cumulative[0], std::uint64_t{kThreads / 2 * kPerThread});
  EXPECT_EQ(s.cumulative[1], std::uint64_t{kThreads * kPerThread});
  EXPECT_EQ(s.sum, kPerThread * (0.5 + 2.0) * (kThreads / 2));
}

TEST(MetricsNames, InvalidNamesThrow) {
  Registry registry;
  EXPECT_THROW(registry.counter("", "x"), std::invalid_argument);
  EXPECT_THROW(registry.counter("1abc", "x"), std::invalid_argument);
  EXPECT_THROW(registry.counter("a-b", "x"), std::invalid_argument);
  EXPECT_THROW(registry.gauge("ok", "x", {"bad-label"}), std::invalid_argument);
  EXPECT_THROW(registry.gauge("ok", "x", {"0label"}), std::invalid_argument);
  EXPECT_THROW(registry.gauge("ok", "x", {"with:colon"}), std::invalid_argument);
  EXPECT_THROW(registry.gauge("ok", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(registry.gauge("ok", "x", {"a", "a"}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "x", {"le"}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "x", {}, std::vector<double>{1, 1}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "x", {}, std::vector<double>{2, 1}), std::invalid_argument);
  EXPECT_THROW(registry.histogram("h", "x", {}, std::vector<double>{std::nan("")}),
               std::invalid_argument);
  EXPECT_THROW(registry.callbackGauge("a b", "x"), std::invalid_argument);
  // Nothing half-registered is left behind.
  EXPECT_EQ(registry.render(), "");
  // Colons are valid in metric names (recording rules use them).
  EXPECT_NO_THROW(registry.gauge("job:rate_5m", "x"));
  // Upper bound +Inf is implicit and may be given.
  const std::vector<double> withInf{1, std::numeric_limits<double>::infinity()};
  EXPECT_EQ(registry.histogram("h", "x", {}, withInf).bounds(), std::vector<double>{1});

  GaugeFamily& g = registry.gauge("two", "x", {"a", "b"});
  EXPECT_THROW(g.labels({"only-one"}), std::invalid_argument);
  EXPECT_THROW(registry.callbackGauge("cb", "x", {"a"}).add({}, {}), std::invalid_argument);
}

TEST(MetricsNames, RegisteringTwice) {
  Registry registry;
  CounterFamily& a = registry.counter("frames_total", "Frames", {"camera"});
  EXPECT_EQ(&registry.counter("frames_total", "Other help", {"camera"}), &a);
  EXPECT_THROW(registry.gauge("frames_total", "Frames", {"camera"}), std::logic_error);
  EXPECT_THROW(registry.counter("frames_total", "Frames", {"zone"}), std::logic_error);
  EXPECT_THROW(registry.callbackCounter("frames_total", "Frames", {"camera"}), std::logic_error);

  HistogramFamily& h = registry.histogram("lat_seconds", "L");
  EXPECT_EQ(&registry.histogram("lat_seconds", "L"), &h);
  EXPECT_THROW(registry.histogram("lat_seconds", "L", {}, std::vector<double>{1}),
               std::logic_error);
  // The histogram's series names are taken too.
  EXPECT_THROW(registry.gauge("lat_seconds_count", "C"), std::logic_error);
  registry.gauge("q_sum", "S");
  EXPECT_THROW(registry.histogram("q", "Q"), std::logic_error);
}

TEST(MetricsProcess, ReadsAFakeProcfs) {
  TempDir dir;
  const std::filesystem::path& root = dir.path();
  // The command name holds spaces and a ')'; fields count from the last one.
  writeFile(root / "proc/self/stat",
            "4242 (vig il) x) S 1 2 3 4 5 6 7 8 9 10 150 50 7 7 20 0 1 0 500 1000 2000\n");
  writeFile(root / "proc/self/statm", "1000 250 30 10 0 100 0\n");
  writeFile(root / "proc/stat", "cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n");
  for (const char* fd : {"0", "1", "2"}) writeFile(root / "proc/self/fd" / fd, "");

  Registry registry;
  registerProcessMetrics(registry, root);
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(registry.render(),
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
            "# TYPE process_cpu_seconds_total counter\n"
            "process_cpu_seconds_total " +
                formatMetricValue(200 / ticks) +
                "\n"
                "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
                "# TYPE process_resident_memory_bytes gauge\n"
                "process_resident_memory_bytes " +
                formatMetricValue(250 * page) +
                "\n"
                "# HELP process_start_time_seconds Start time of the process since unix epoch "
                "in seconds.\n"
                "# TYPE process_start_time_seconds gauge\n"
                "process_start_time_seconds " +
                formatMetricValue(1700000000 + 500 / ticks) +
                "\n"
                "# HELP process_open_fds Number of open file descriptors.\n"
                "# TYPE process_open_fds gauge\n"
                "process_open_fds 3\n");
}

TEST(MetricsProcess, MissingOrGarbageFilesAreAbsent) {
  TempDir dir;
  writeFile(dir.path() / "proc/self/stat", "garbage without parenthesis\n");
  writeFile(dir.path() / "proc/self/statm", "lots of pages\n");
  Registry registry;
  registerProcessMetrics(registry, dir.path());
  EXPECT_EQ(registry.render(), "");
}

TEST(MetricsProcess, ReadsTheRealProcfs) {
  Registry registry;
  registerProcessMetrics(registry);
  std::string text = registry.render();
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
                           "process_start_time_seconds ", "process_open_fds "}) {
    std::size_t at = text.find(std::string("\n") + name);
    ASSERT_NE(at, std::string::npos) << name << " missing in\n" << text;
    double value = std::stod(text.substr(at + 1 + std::strlen(name)));
    EXPECT_GE(value, 0) << name;
  }
  EXPECT_NE(text.find("process_start_time_seconds 1"), std::string::npos) << text;  // after 2001
}

// A registry with every kind of series, including awkward values and label values, through
// the real Prometheus parser and linter.
TEST(MetricsPromtool, CheckMetricsAcceptsTheOutput) {
  const char* candidates[] = {"/usr/bin/promtool", "/usr/local/bin/promtool"};
  std::string promtool;
  for (const char* c : candidates) {
    if (access(c, X_OK) == 0) promtool = c;
  }
  if (promtool.empty()) {
    GTEST_SKIP() << "promtool is not installed (Debian package `prometheus`, "
                    "scripts/install-deps.sh --tests installs it)";
  }

  Registry registry;
  registry.counter("vigil_frames_captured_total", "Frames read from the camera", {"camera"})
      .labels({"front \"door\"\\\n"})
      ->inc(3);
  registry.counter("vigil_errors_total", "Errors.").labels({})->inc();
  registry.gauge("vigil_queue_frames", "Frames waiting.\nSecond line \\.", {"camera"})
      .labels({"front"})
      ->set(std::numeric_limits<double>::quiet_NaN());
  registry.gauge("vigil_temperature_celsius", "Temp.").labels({})->set(-1e-7);
  auto& lat = registry.histogram("vigil_inference_seconds", "Inference latency.", {"backend"});
  lat.labels({"npu"})->observe(0.02);
  lat.labels({"cpu"})->observe(12);
  registry.callbackGauge("vigil_npu_power_watts", "NPU power.").add({}, [] {
    return std::optional<double>(1.234567);
  });
  registry.callbackGauge("vigil_apu_power_watts", "APU power.").add({}, [] {
    return std::optional<double>();
  });
  registry.callbackCounter("vigil_package_energy_joules_total", "Energy.").add({}, [] {
    return std::optional<double>(123456789.123456);
  });
  registry.info("vigil_build_info", "Build.", {{"version", "0.1.0"}});
  registerProcessMetrics(registry);

  TempDir dir;
  std::filesystem::path file = dir.path() / "metrics.txt";
  std::ofstream(file) << registry.render();
  std::string command = promtool + " check metrics < " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  int status = pclose(pipe);
  EXPECT_EQ(status, 0) << output << "\n--- input ---\n" << registry.render();
  EXPECT_EQ(output, "") << registry.render();
}

}  // namespace
}  // namespace vigil
