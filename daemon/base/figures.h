#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace vigil {

// A figure a part reports about itself, named once for every view that shows it: its key in
// the status API (in the part's object there, e.g. a camera's "frames"), and its Prometheus
// family with the family's help. A figure with a label (`label`, e.g. "kind") is one of several
// of the same name; the status API nests them under `key`, one entry per label value.
struct FigureName {
  std::string_view key;     // /api/status: "decode_errors"
  std::string_view metric;  // /metrics: "vigil_camera_decode_errors_total"
  std::string_view help;
  std::string_view label = {};  // the family's label besides the part's own (e.g. "camera")
};

// Where a part writes its figures: each view (the status API's snapshot, /metrics) implements
// one, so that a part's figures are written once, in its report(FigureWriter&), and every view
// shows a new one without knowing the part's class (Envoy's stats scopes). Counts only grow
// (Prometheus counters), as do totals (a measured amount, e.g. CPU seconds); levels go up and
// down (gauges).
// A FigureName is a constant of its part (static storage): writers may keep its address.
// Threads: a part's report() runs on whichever thread asks; what it reads must be safe there
// (atomics).
class FigureWriter {
 public:
  virtual ~FigureWriter() = default;

  // `labelValue`: the figure's value of name.label ("" when the figure has no label).
  virtual void count(const FigureName& name, std::string_view labelValue, std::uint64_t value) = 0;
  virtual void total(const FigureName& name, std::string_view labelValue, double value) = 0;
  virtual void level(const FigureName& name, std::string_view labelValue, double value) = 0;
};

// A part's figures at one moment, written to it and read back: what the status API keeps of a
// part in its snapshot. `name` points at the part's FigureName, which lives as long as the
// program (a constant).
class FigureList final : public FigureWriter {
 public:
  struct Figure {
    const FigureName* name;
    std::string labelValue;
    std::variant<std::uint64_t, double> value;
  };

  void count(const FigureName& name, std::string_view labelValue, std::uint64_t value) override {
    figures_.push_back({&name, std::string(labelValue), value});
  }
  void total(const FigureName& name, std::string_view labelValue, double value) override {
    figures_.push_back({&name, std::string(labelValue), value});
  }
  void level(const FigureName& name, std::string_view labelValue, double value) override {
    figures_.push_back({&name, std::string(labelValue), value});
  }

  const std::vector<Figure>& figures() const { return figures_; }
  // The count of the figure with this key and label value; nullopt when none was written.
  std::optional<std::uint64_t> countOf(std::string_view key,
                                       std::string_view labelValue = {}) const {
    for (const Figure& f : figures_) {
      if (f.name->key == key && f.labelValue == labelValue) {
        if (const auto* n = std::get_if<std::uint64_t>(&f.value)) return *n;
      }
    }
    return std::nullopt;
  }

 private:
  std::vector<Figure> figures_;
};

}  // namespace vigil
