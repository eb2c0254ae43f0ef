#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// A small Prometheus metrics registry (prometheus-cpp is not packaged for Debian) that renders
// the text exposition format 0.0.4.
//
// Threads: children (Counter, Gauge, Histogram) are updated from any thread with relaxed
// atomics only: no lock, no allocation, never throws. Everything else (registering families,
// labels(), remove(), add()) is control plane: it takes a mutex, may allocate and throws
// std::logic_error (std::invalid_argument for a bad name or label count) on misuse, which is a
// programming error meant to stop the daemon at startup. render() is called from the
// io_context thread; it may run concurrently with updates and control-plane calls.
namespace vigil {

static_assert(std::atomic<double>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

// Label values of one child, in the order of the family's label names.
using LabelValues = std::vector<std::string>;

// Prometheus' default buckets, in seconds: fine enough around one frame time (tens of ms),
// wide enough for a stalled NPU or a slow broker (10 s).
inline constexpr std::array<double, 11> kLatencyBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                        0.5,   1.0,  2.5,   5.0,  10.0};

class Counter {
 public:
  // Negative and NaN increments are ignored: a counter only goes up, and the hot path cannot
  // throw.
  void inc(double n = 1.0) {
    if (n >= 0.0) value_.fetch_add(n, std::memory_order_relaxed);
  }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double n = 1.0) { value_.fetch_add(n, std::memory_order_relaxed); }
  void dec(double n = 1.0) { value_.fetch_sub(n, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Fixed upper bounds (inclusive, as Prometheus' `le`), plus the implicit +Inf bucket.
class Histogram {
 public:
  // `bounds` strictly increasing and finite (the family checks); shared by the family's
  // children so a child owns no copy.
  explicit Histogram(std::shared_ptr<const std::vector<double>> bounds);

  // A binary search and two atomic adds. NaN lands in +Inf (and makes _sum NaN), as in the Go
  // client.
  void observe(double v);

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum;
  };
  // Not atomic across buckets: under concurrent observe() the _sum may be a few observations
  // ahead of or behind the buckets. The count is the +Inf bucket, so those two always agree.
  Snapshot snapshot() const;
  const std::vector<double>& bounds() const { return *bounds_; }

 private:
  std::shared_ptr<const std::vector<double>> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bucket, not cumulative
  std::atomic<double> sum_{0.0};
};

enum class MetricKind { kCounter, kGauge, kHistogram, kCallbackCounter, kCallbackGauge };

// One metric name with its HELP, TYPE and fixed label names. Owned by the Registry, which
// keeps it (and references to it) valid for the Registry's lifetime.
class Family {
 public:
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricKind kind() const { return kind_; }
  const std::vector<std::string>& labelNames() const { return labelNames_; }

 protected:
  Family(std::string name, std::string help, MetricKind kind, std::vector<std::string> labelNames);

  // Throws std::invalid_argument unless there is one value per label name.
  void checkArity(const LabelValues& values) const;
  // Appends the samples (no HELP/TYPE); nothing when the family has no series now.
  virtual void renderSamples(std::string& out) const = 0;

  // `name{a="x",b="y"}` (or just `name`), values escaped; `extra` appends one more label
  // (the histogram's le).
  void appendSeries(std::string& out, std::string_view suffix, const LabelValues& values,
                    const std::pair<std::string_view, std::string_view>* extra = nullptr) const;

 private:
  friend class Registry;

  std::string name_;
  std::string help_;
  MetricKind kind_;
  std::vector<std::string> labelNames_;
};

// A family whose children are updated by their owners (counters, gauges, histograms).
//
// labels() returns the child for those values, creating it (at 0) on first use. Callers on a
// hot path call it once and keep the pointer. The pointer stays usable after remove(): the
// child is then just no longer rendered, so a camera thread that is still winding down after
// a reload cannot touch freed memory. labels() with the same values after remove() creates a
// fresh child from 0, which Prometheus reads as a counter reset.
// A family without label names has its one child from the start, so it renders 0 before the
// first update.
template <typename Child>
class ChildFamily : public Family {
 public:
  std::shared_ptr<Child> labels(const LabelValues& values);
  // Removing values that have no child does nothing.
  void remove(const LabelValues& values);

 protected:
  using Family::Family;

  virtual std::shared_ptr<Child> makeChild() const = 0;
  virtual void renderChild(std::string& out, const LabelValues& values,
                           const Child& child) const = 0;
  void renderSamples(std::string& out) const final;
  // For the end of a final subclass's constructor, where makeChild() dispatches to it.
  void createUnlabelledChild();

 private:
  mutable std::mutex mutex_;
  std::map<LabelValues, std::shared_ptr<Child>> children_;  // sorted: a stable render order
};

class CounterFamily final : public ChildFamily<Counter> {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> labelNames);

 private:
  std::shared_ptr<Counter> makeChild() const override;
  void renderChild(std::string& out, const LabelValues& values,
                   const Counter& child) const override;
};

class GaugeFamily final : public ChildFamily<Gauge> {
 public:
  GaugeFamily(std::string name, std::string help, std::vector<std::string> labelNames);

 private:
  std::shared_ptr<Gauge> makeChild() const override;
  void renderChild(std::string& out, const LabelValues& values, const Gauge& child) const override;
};

class HistogramFamily final : public ChildFamily<Histogram> {
 public:
  // Throws std::invalid_argument unless the bounds are finite and strictly increasing (a
  // trailing +Inf is dropped: it is always there), or a label is named `le`.
  HistogramFamily(std::string name, std::string help, std::vector<std::string> labelNames,
                  std::span<const double> bounds);
  const std::vector<double>& bounds() const { return *bounds_; }

 private:
  std::shared_ptr<Histogram> makeChild() const override;
  void renderChild(std::string& out, const LabelValues& values,
                   const Histogram& child) const override;

  std::shared_ptr<const std::vector<double>> bounds_;
};

extern template class ChildFamily<Counter>;
extern template class ChildFamily<Gauge>;
extern template class ChildFamily<Histogram>;

// Counters and gauges whose values live elsewhere (the process, power sensors, a queue's
// size), read by calling a function at render time.
//
// A callback returns std::nullopt when it has no value now (sensor missing, file unreadable):
// the series is then left out of the output, never reported as 0. Callbacks run on the
// render() thread while the family's lock is held, so once remove() returns the callback is
// not running and will not run again; they must therefore be thread-safe with respect to the
// data they read, should be quick (a file read at most), and must not call the Registry.
// A callback that throws has its series left out, like nullopt.
class CallbackFamily final : public Family {
 public:
  using Callback = std::function<std::optional<double>()>;

  CallbackFamily(std::string name, std::string help, MetricKind kind,
                 std::vector<std::string> labelNames);

  // Adds the series, or replaces its callback.
  void add(const LabelValues& values, Callback callback);
  void remove(const LabelValues& values);

 private:
  void renderSamples(std::string& out) const override;

  mutable std::mutex mutex_;
  std::map<LabelValues, Callback> callbacks_;
};

// The set of families one /metrics endpoint serves. Neither copyable nor movable: families
// hand out references into it.
//
// Registering a name that exists returns the existing family when kind, label names (and
// histogram bounds) match, so two components may declare the same metric; the first HELP
// wins. Otherwise, or when a name is not [a-zA-Z_:][a-zA-Z0-9_:]*, a label name is not
// [a-zA-Z_][a-zA-Z0-9_]*, starts with "__" or repeats, or a name clashes with the _bucket,
// _sum or _count series of a histogram, it throws (std::invalid_argument for a malformed
// name, std::logic_error for a clash).
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  CounterFamily& counter(const std::string& name, const std::string& help,
                         const std::vector<std::string>& labelNames = {});
  GaugeFamily& gauge(const std::string& name, const std::string& help,
                     const std::vector<std::string>& labelNames = {});
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             const std::vector<std::string>& labelNames = {},
                             std::span<const double> bounds = kLatencyBuckets);
  CallbackFamily& callbackCounter(const std::string& name, const std::string& help,
                                  const std::vector<std::string>& labelNames = {});
  CallbackFamily& callbackGauge(const std::string& name, const std::string& help,
                                const std::vector<std::string>& labelNames = {});
  // An info-style gauge: one series of value 1 carrying facts as labels, e.g.
  // info("vigil_build_info", "...", {{"version", "0.1.0"}}). The name is used as given.
  void info(const std::string& name, const std::string& help,
            const std::vector<std::pair<std::string, std::string>>& labels);

  // The whole registry in text format 0.0.4 (Content-Type
  // `text/plain; version=0.0.4; charset=utf-8`): families in registration order, HELP and
  // TYPE once each, children sorted by label values. Families with no series right now (no
  // children yet, or every callback absent) are left out entirely.
  std::string render() const;

 private:
  // Keeps `family` or, when the name exists and matches, returns the existing one.
  template <typename F>
  F& adopt(std::unique_ptr<F> family);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family>> families_;
  std::set<std::string, std::less<>> sampleNames_;  // every name a sample line may carry
};

// process_cpu_seconds_total, process_resident_memory_bytes, process_start_time_seconds and
// process_open_fds, as the official clients name them, read at render time from
// <root>/proc/self/stat, <root>/proc/self/statm, <root>/proc/stat (btime) and
// <root>/proc/self/fd. `root` is "/" except in tests, which build a fake tree. A file that is
// missing or does not parse leaves its series out.
void registerProcessMetrics(Registry& registry, const std::filesystem::path& root = "/");

// The process's user + system CPU time so far, every thread (CLOCK_PROCESS_CPUTIME_ID): what
// `vigil bench` and the daemon's summary count CPU seconds with.
double processCpuSeconds();

// The sample value as Prometheus parses it: NaN, +Inf, -Inf, otherwise the shortest text that
// reads back as the same double (integers without exponent up to 1e16).
std::string formatMetricValue(double v);

}  // namespace vigil
