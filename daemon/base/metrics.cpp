#include "daemon/base/metrics.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace vigil {

namespace {

bool isMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool isLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void checkNames(const std::string& name, const std::vector<std::string>& labelNames) {
  if (!isMetricName(name)) {
    throw std::invalid_argument(
        fmt::format("metric name '{}' must match [a-zA-Z_:][a-zA-Z0-9_:]*", name));
  }
  std::set<std::string_view> seen;
  for (const std::string& label : labelNames) {
    if (!isLabelName(label) || label.starts_with("__")) {
      throw std::invalid_argument(
          fmt::format("{}: label name '{}' must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __",
                      name, label));
    }
    if (!seen.insert(label).second) {
      throw std::invalid_argument(fmt::format("{}: label name '{}' repeats", name, label));
    }
  }
}

// Label values may hold anything; these three would end the value or the line.
void appendEscapedLabelValue(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

void appendEscapedHelp(std::string& out, std::string_view help) {
  for (char c : help) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

std::string_view typeName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter:
    case MetricKind::kCallbackCounter:
      return "counter";
    case MetricKind::kGauge:
    case MetricKind::kCallbackGauge:
      return "gauge";
    case MetricKind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

void appendValueLine(std::string& out, double v) {
  out += ' ';
  out += formatMetricValue(v);
  out += '\n';
}

}  // namespace

std::string formatMetricValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // fmt's "{}" is the shortest round-trip form, in fixed notation for exponents below 16.
  return fmt::format("{}", v);
}

// --- Histogram ---------------------------------------------------------------------------------

Histogram::Histogram(std::shared_ptr<const std::vector<double>> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_->size() + 1)) {}

void Histogram::observe(double v) {
  // `!(v <= bound)` rather than `bound < v` so NaN runs past every bound into +Inf.
  auto it = std::partition_point(bounds_->begin(), bounds_->end(),
                                 [v](double bound) { return !(v <= bound); });
  buckets_[static_cast<std::size_t>(it - bounds_->begin())].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s{std::vector<std::uint64_t>(bounds_->size() + 1), 0.0};
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_->size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = running;
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

// --- Family ------------------------------------------------------------------------------------

Family::Family(std::string name, std::string help, MetricKind kind,
               std::vector<std::string> labelNames)
    : name_(std::move(name)),
      help_(std::move(help)),
      kind_(kind),
      labelNames_(std::move(labelNames)) {
  checkNames(name_, labelNames_);
}

void Family::checkArity(const LabelValues& values) const {
  if (values.size() != labelNames_.size()) {
    throw std::invalid_argument(fmt::format("{}: {} label values given for {} label names", name_,
                                            values.size(), labelNames_.size()));
  }
}

void Family::appendSeries(std::string& out, std::string_view suffix, const LabelValues& values,
                          const std::pair<std::string_view, std::string_view>* extra) const {
  out += name_;
  out += suffix;
  if (values.empty() && extra == nullptr) return;
  out += '{';
  bool first = true;
  auto appendLabel = [&](std::string_view labelName, std::string_view value) {
    if (!first) out += ',';
    first = false;
    out += labelName;
    out += "=\"";
    appendEscapedLabelValue(out, value);
    out += '"';
  };
  for (std::size_t i = 0; i < values.size(); ++i) appendLabel(labelNames_[i], values[i]);
  if (extra != nullptr) appendLabel(extra->first, extra->second);
  out += '}';
}

// --- ChildFamily -------------------------------------------------------------------------------

template <typename Child>
std::shared_ptr<Child> ChildFamily<Child>::labels(const LabelValues& values) {
  checkArity(values);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = children_.try_emplace(values);
  if (inserted) it->second = makeChild();
  return it->second;
}

template <typename Child>
void ChildFamily<Child>::remove(const LabelValues& values) {
  std::lock_guard lock(mutex_);
  children_.erase(values);
}

template <typename Child>
void ChildFamily<Child>::renderSamples(std::string& out) const {
  std::lock_guard lock(mutex_);
  for (const auto& [values, child] : children_) renderChild(out, values, *child);
}

template <typename Child>
void ChildFamily<Child>::createUnlabelledChild() {
  if (labelNames().empty()) labels({});
}

template class ChildFamily<Counter>;
template class ChildFamily<Gauge>;
template class ChildFamily<Histogram>;

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> labelNames)
    : ChildFamily(std::move(name), std::move(help), MetricKind::kCounter, std::move(labelNames)) {
  createUnlabelledChild();
}

std::shared_ptr<Counter> CounterFamily::makeChild() const { return std::make_shared<Counter>(); }

void CounterFamily::renderChild(std::string& out, const LabelValues& values,
                                const Counter& child) const {
  appendSeries(out, "", values);
  appendValueLine(out, child.value());
}

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> labelNames)
    : ChildFamily(std::move(name), std::move(help), MetricKind::kGauge, std::move(labelNames)) {
  createUnlabelledChild();
}

std::shared_ptr<Gauge> GaugeFamily::makeChild() const { return std::make_shared<Gauge>(); }

void GaugeFamily::renderChild(std::string& out, const LabelValues& values,
                              const Gauge& child) const {
  appendSeries(out, "", values);
  appendValueLine(out, child.value());
}

namespace {

std::vector<double> checkedBounds(const std::string& name, std::span<const double> bounds) {
  std::vector<double> result(bounds.begin(), bounds.end());
  if (!result.empty() && std::isinf(result.back()) && result.back() > 0) result.pop_back();
  for (std::size_t i = 0; i < result.size(); ++i) {
    if (!std::isfinite(result[i]) || (i > 0 && !(result[i - 1] < result[i]))) {
      throw std::invalid_argument(
          fmt::format("{}: histogram bounds must be finite and strictly increasing", name));
    }
  }
  return result;
}

}  // namespace

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> labelNames,
                                 std::span<const double> bounds)
    : ChildFamily(std::move(name), std::move(help), MetricKind::kHistogram, std::move(labelNames)),
      bounds_(std::make_shared<const std::vector<double>>(checkedBounds(this->name(), bounds))) {
  for (const std::string& label : this->labelNames()) {
    if (label == "le") {
      throw std::invalid_argument(
          fmt::format("{}: a histogram cannot have a label 'le'", this->name()));
    }
  }
  createUnlabelledChild();
}

std::shared_ptr<Histogram> HistogramFamily::makeChild() const {
  return std::make_shared<Histogram>(bounds_);
}

void HistogramFamily::renderChild(std::string& out, const LabelValues& values,
                                  const Histogram& child) const {
  Histogram::Snapshot s = child.snapshot();
  const std::vector<double>& bounds = *bounds_;
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    std::string le = i < bounds.size() ? formatMetricValue(bounds[i]) : "+Inf";
    std::pair<std::string_view, std::string_view> extra{"le", le};
    appendSeries(out, "_bucket", values, &extra);
    out += fmt::format(" {}\n", s.cumulative[i]);
  }
  appendSeries(out, "_sum", values);
  appendValueLine(out, s.sum);
  appendSeries(out, "_count", values);
  out += fmt::format(" {}\n", s.cumulative.back());
}

// --- CallbackFamily ----------------------------------------------------------------------------

CallbackFamily::CallbackFamily(std::string name, std::string help, MetricKind kind,
                               std::vector<std::string> labelNames)
    : Family(std::move(name), std::move(help), kind, std::move(labelNames)) {}

void CallbackFamily::add(const LabelValues& values, Callback callback) {
  checkArity(values);
  std::lock_guard lock(mutex_);
  callbacks_[values] = std::move(callback);
}

void CallbackFamily::remove(const LabelValues& values) {
  std::lock_guard lock(mutex_);
  callbacks_.erase(values);
}

void CallbackFamily::renderSamples(std::string& out) const {
  std::lock_guard lock(mutex_);
  for (const auto& [values, callback] : callbacks_) {
    std::optional<double> v;
    try {
      if (callback) v = callback();
    } catch (...) {
      // A sensor read that throws is one absent series, not a failed scrape.
      v.reset();
    }
    if (!v) continue;
    appendSeries(out, "", values);
    appendValueLine(out, *v);
  }
}

// --- Registry ----------------------------------------------------------------------------------

template <typename F>
F& Registry::adopt(std::unique_ptr<F> family) {
  const std::string& name = family->name();
  std::lock_guard lock(mutex_);
  for (const auto& existing : families_) {
    if (existing->name() != name) continue;
    auto* same = dynamic_cast<F*>(existing.get());
    bool matches = same != nullptr && existing->kind() == family->kind() &&
                   existing->labelNames() == family->labelNames();
    if constexpr (std::is_same_v<F, HistogramFamily>) {
      matches = matches && same->bounds() == family->bounds();
    }
    if (!matches) {
      throw std::logic_error(fmt::format(
          "metric {} registered twice with a different type, label names or buckets", name));
    }
    return *same;
  }

  std::vector<std::string> series{name};
  if (family->kind() == MetricKind::kHistogram) {
    series = {name, name + "_bucket", name + "_sum", name + "_count"};
  }
  for (const std::string& s : series) {
    if (sampleNames_.contains(s)) {
      throw std::logic_error(
          fmt::format("metric {}: series name {} is already used by another metric", name, s));
    }
  }
  sampleNames_.insert(series.begin(), series.end());
  F& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help,
                                 const std::vector<std::string>& labelNames) {
  return adopt(std::make_unique<CounterFamily>(name, help, labelNames));
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help,
                             const std::vector<std::string>& labelNames) {
  return adopt(std::make_unique<GaugeFamily>(name, help, labelNames));
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     const std::vector<std::string>& labelNames,
                                     std::span<const double> bounds) {
  return adopt(std::make_unique<HistogramFamily>(name, help, labelNames, bounds));
}

CallbackFamily& Registry::callbackCounter(const std::string& name, const std::string& help,
                                          const std::vector<std::string>& labelNames) {
  return adopt(
      std::make_unique<CallbackFamily>(name, help, MetricKind::kCallbackCounter, labelNames));
}

CallbackFamily& Registry::callbackGauge(const std::string& name, const std::string& help,
                                        const std::vector<std::string>& labelNames) {
  return adopt(
      std::make_unique<CallbackFamily>(name, help, MetricKind::kCallbackGauge, labelNames));
}

void Registry::info(const std::string& name, const std::string& help,
                    const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::string> names;
  LabelValues values;
  for (const auto& [labelName, value] : labels) {
    names.push_back(labelName);
    values.push_back(value);
  }
  gauge(name, help, names).labels(values)->set(1.0);
}

std::string Registry::render() const {
  std::string out;
  std::string samples;
  std::lock_guard lock(mutex_);
  for (const auto& family : families_) {
    samples.clear();
    family->renderSamples(samples);
    if (samples.empty()) continue;
    out += "# HELP ";
    out += family->name();
    out += ' ';
    appendEscapedHelp(out, family->help());
    out += "\n# TYPE ";
    out += family->name();
    out += ' ';
    out += typeName(family->kind());
    out += '\n';
    out += samples;
  }
  return out;
}

// --- Process metrics ---------------------------------------------------------------------------

namespace {

std::optional<std::string> readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(s).str();
}

std::optional<std::uint64_t> parseLeadingUnsigned(std::string_view text) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end == text.data()) return std::nullopt;
  return v;
}

// Whitespace-separated fields of `text`.
std::vector<std::string_view> fields(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

// /proc/self/stat as fields numbered as in proc(5): [0] is field 3 (state). The command name
// (field 2) may hold spaces and parentheses, so fields are counted from the last ')'.
class StatFields {
 public:
  explicit StatFields(const std::filesystem::path& root)
      : text_(readFile(root / "proc/self/stat")) {
    if (!text_) return;
    std::size_t close = text_->rfind(')');
    if (close != std::string::npos) fields_ = fields(std::string_view(*text_).substr(close + 1));
  }
  StatFields(const StatFields&) = delete;  // fields_ points into text_
  StatFields& operator=(const StatFields&) = delete;

  std::optional<std::uint64_t> field(std::size_t n) const {
    if (n < 3 || fields_.size() < n - 2) return std::nullopt;
    return parseLeadingUnsigned(fields_[n - 3]);
  }

 private:
  std::optional<std::string> text_;
  std::vector<std::string_view> fields_;  // views into text_
};

double ticksPerSecond() {
  static const double ticks = [] {
    long t = sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<double>(t) : 100.0;
  }();
  return ticks;
}

double pageSize() {
  static const double size = [] {
    long s = sysconf(_SC_PAGESIZE);
    return s > 0 ? static_cast<double>(s) : 4096.0;
  }();
  return size;
}

}  // namespace

void registerProcessMetrics(Registry& registry, const std::filesystem::path& root) {
  registry
      .callbackCounter("process_cpu_seconds_total",
                       "Total user and system CPU time spent in seconds.")
      .add({}, [root]() -> std::optional<double> {
        StatFields stat(root);
        auto utime = stat.field(14);
        auto stime = stat.field(15);
        if (!utime || !stime) return std::nullopt;
        return static_cast<double>(*utime + *stime) / ticksPerSecond();
      });
  registry.callbackGauge("process_resident_memory_bytes", "Resident memory size in bytes.")
      .add({}, [root]() -> std::optional<double> {
        auto text = readFile(root / "proc/self/statm");
        if (!text) return std::nullopt;
        std::vector<std::string_view> f = fields(*text);
        if (f.size() < 2) return std::nullopt;
        auto pages = parseLeadingUnsigned(f[1]);
        if (!pages) return std::nullopt;
        return static_cast<double>(*pages) * pageSize();
      });
  registry
      .callbackGauge("process_start_time_seconds",
                     "Start time of the process since unix epoch in seconds.")
      .add({}, [root]() -> std::optional<double> {
        auto startTicks = StatFields(root).field(22);  // since boot
        auto stat = readFile(root / "proc/stat");
        if (!startTicks || !stat) return std::nullopt;
        std::size_t at = stat->find("\nbtime ");
        if (at == std::string::npos) return std::nullopt;
        auto bootTime = parseLeadingUnsigned(std::string_view(*stat).substr(at + 7));
        if (!bootTime) return std::nullopt;
        return static_cast<double>(*bootTime) + static_cast<double>(*startTicks) / ticksPerSecond();
      });
  registry.callbackGauge("process_open_fds", "Number of open file descriptors.")
      .add({}, [root]() -> std::optional<double> {
        std::error_code ec;
        std::filesystem::directory_iterator it(root / "proc/self/fd", ec);
        if (ec) return std::nullopt;
        // The iterator's own descriptor is counted too, as the Go client counts it.
        double count = 0;
        for (; it != std::filesystem::directory_iterator{}; it.increment(ec)) {
          if (ec) return std::nullopt;
          ++count;
        }
        if (ec) return std::nullopt;
        return count;
      });
}

double processCpuSeconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace vigil
