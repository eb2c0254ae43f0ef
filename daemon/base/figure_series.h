#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/base/figures.h"
#include "daemon/base/metrics.h"

namespace vigil {

// A part's figures (figures.h) as callback series of a registry: each figure is a series of its
// family (a counter for a count or a total, a gauge for a level), labelled with the part's labels
// (e.g. camera="door") and then the figure's, and read when /metrics is rendered by asking the
// part to report again. /metrics so shows every figure a part reports without knowing the part.
// Destroying it removes its series; their families stay, unrendered while they have none.
// A family is registered when the first part reports a figure of it.
// Threads: as the registry's; the part's report runs in Registry::render().
class FigureSeries {
 public:
  using Report = std::function<void(FigureWriter&)>;

  // `names`: what the part reports when it is there, for a part that may be absent when this is
  // made (a reloaded detector's worker): its series exist from the start and are absent from
  // /metrics while `report` does not write them. Without it, `report` names the series.
  FigureSeries(Registry& registry, std::vector<std::string> partLabelNames, LabelValues partLabels,
               Report report, const Report& names = {});
  ~FigureSeries();
  FigureSeries(const FigureSeries&) = delete;
  FigureSeries& operator=(const FigureSeries&) = delete;

 private:
  std::vector<std::pair<CallbackFamily*, LabelValues>> series_;
};

}  // namespace vigil
