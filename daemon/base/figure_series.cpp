#include "daemon/base/figure_series.h"

#include <memory>
#include <optional>

namespace vigil {

namespace {

std::vector<std::string> labelNamesOf(const std::vector<std::string>& partLabelNames,
                                      const FigureName& name) {
  std::vector<std::string> names = partLabelNames;
  if (!name.label.empty()) names.emplace_back(name.label);
  return names;
}

// Hands each figure's family (registered on first sight: a counter for a count or a total, a
// gauge for a level) to `found`, with the figure and its label value.
class FamilyFinder final : public FigureWriter {
 public:
  using Found = std::function<void(CallbackFamily&, const FigureName&, std::string_view)>;
  FamilyFinder(Registry& registry, const std::vector<std::string>& partLabelNames, Found found)
      : registry_(registry), partLabelNames_(partLabelNames), found_(std::move(found)) {}

  void count(const FigureName& name, std::string_view labelValue, std::uint64_t) override {
    find(name, labelValue, MetricKind::kCounter);
  }
  void total(const FigureName& name, std::string_view labelValue, double) override {
    find(name, labelValue, MetricKind::kCounter);
  }
  void level(const FigureName& name, std::string_view labelValue, double) override {
    find(name, labelValue, MetricKind::kGauge);
  }

 private:
  void find(const FigureName& name, std::string_view labelValue, MetricKind kind) {
    std::string metric(name.metric), help(name.help);
    std::vector<std::string> labels = labelNamesOf(partLabelNames_, name);
    found_(kind == MetricKind::kCounter ? registry_.callbackCounter(metric, help, labels)
                                        : registry_.callbackGauge(metric, help, labels),
           name, labelValue);
  }

  Registry& registry_;
  const std::vector<std::string>& partLabelNames_;
  Found found_;
};

// The value of one figure (its name and label value) in a part's report.
class FigureReader final : public FigureWriter {
 public:
  FigureReader(const FigureName& name, std::string_view labelValue)
      : name_(name), labelValue_(labelValue) {}

  void count(const FigureName& name, std::string_view labelValue, std::uint64_t value) override {
    if (&name == &name_ && labelValue == labelValue_) value_ = static_cast<double>(value);
  }
  void total(const FigureName& name, std::string_view labelValue, double value) override {
    if (&name == &name_ && labelValue == labelValue_) value_ = value;
  }
  void level(const FigureName& name, std::string_view labelValue, double value) override {
    if (&name == &name_ && labelValue == labelValue_) value_ = value;
  }
  std::optional<double> value() const { return value_; }

 private:
  const FigureName& name_;
  std::string_view labelValue_;
  std::optional<double> value_;
};

}  // namespace

FigureSeries::FigureSeries(Registry& registry, std::vector<std::string> partLabelNames,
                           LabelValues partLabels, Report report, const Report& names) {
  auto shared = std::make_shared<Report>(std::move(report));
  FamilyFinder families(
      registry, partLabelNames,
      [&](CallbackFamily& family, const FigureName& name, std::string_view labelValue) {
        LabelValues labels = partLabels;
        if (!name.label.empty()) labels.emplace_back(labelValue);
        family.add(labels, [shared, &name, label = std::string(labelValue)]() {
          FigureReader reader(name, label);
          (*shared)(reader);
          return reader.value();
        });
        series_.emplace_back(&family, std::move(labels));
      });
  if (names) {
    names(families);
  } else {
    (*shared)(families);
  }
}

FigureSeries::~FigureSeries() {
  for (auto& [family, labels] : series_) family->remove(labels);
}

}  // namespace vigil
