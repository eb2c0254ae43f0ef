#include "foundation/yaml_errors.h"

#include <fmt/format.h>

#include <algorithm>

namespace vigil {

bool YamlErrors::collect(const std::function<void()>& read) {
  try {
    read();
    return true;
  } catch (const YamlError& e) {
    errors_.push_back(e);
    return false;
  }
}

std::string YamlErrors::message() const {
  if (errors_.size() == 1) return errors_.front().what();
  std::vector<const YamlError*> sorted;
  for (const YamlError& e : errors_) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const YamlError* a, const YamlError* b) {
    return std::pair(a->line(), a->column()) < std::pair(b->line(), b->column());
  });
  std::string text = fmt::format("{} errors:", errors_.size());
  for (const YamlError* e : sorted) text += fmt::format("\n{}", e->what());
  return text;
}

void YamlErrors::throwIfAny() const {
  if (!errors_.empty()) throw YamlError(message());
}

}  // namespace vigil
