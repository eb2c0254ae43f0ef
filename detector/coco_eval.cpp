#include "detector/coco_eval.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

namespace vigil {

namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Loading

std::optional<std::int64_t> asInt64(const Json& value) {
  // Unsigned first: nlohmann reports non-negative literals as unsigned, and one above INT64_MAX
  // would wrap if read as signed.
  if (value.is_number_unsigned()) {
    auto unsignedValue = value.get<std::uint64_t>();
    if (unsignedValue > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(unsignedValue);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return std::nullopt;
}

class DatasetParser {
 public:
  DatasetParser(std::string file, int categoryId)
      : file_(std::move(file)), categoryId_(categoryId) {}

  Expected<CocoDataset> parse(const Json& root) {
    if (!root.is_object()) {
      return makeError(ErrorCode::kInvalidData, "{}: expected a JSON object at the top level",
                       file_);
    }

    auto images = root.find("images");
    if (images == root.end() || !images->is_array()) return invalid("images", "expected an array");
    for (std::size_t i = 0; i < images->size(); ++i) {
      if (auto ok = parseImage((*images)[i], fmt::format("images[{}]", i)); !ok) {
        return tl::unexpected(std::move(ok.error()));
      }
    }

    // pycocotools accepts a file without annotations (every detection is then a false positive).
    auto annotations = root.find("annotations");
    if (annotations != root.end()) {
      if (!annotations->is_array()) return invalid("annotations", "expected an array");
      for (std::size_t i = 0; i < annotations->size(); ++i) {
        if (auto ok = parseAnnotation((*annotations)[i], fmt::format("annotations[{}]", i)); !ok) {
          return tl::unexpected(std::move(ok.error()));
        }
      }
    }
    return std::move(dataset_);
  }

 private:
  tl::unexpected<Error> invalid(std::string_view path, std::string_view what) const {
    return makeError(ErrorCode::kInvalidData, "{}: {}: {}", file_, path, what);
  }

  Expected<void> parseImage(const Json& entry, const std::string& path) {
    if (!entry.is_object()) return invalid(path, "expected an object");
    CocoImage image;

    auto id = entry.find("id");
    std::optional<std::int64_t> idValue;
    if (id != entry.end()) idValue = asInt64(*id);
    if (!idValue) return invalid(path + ".id", "expected an integer");
    // A repeated id would make annotations ambiguous; pycocotools silently keeps the last.
    if (!imageIds_.insert(*idValue).second) {
      return invalid(path + ".id", fmt::format("duplicate image id {}", *idValue));
    }
    image.id = *idValue;

    // Evaluation needs none of these, so they may be absent, but a wrong type means a bad file.
    if (auto fileName = entry.find("file_name"); fileName != entry.end()) {
      if (!fileName->is_string()) return invalid(path + ".file_name", "expected a string");
      image.fileName = fileName->get<std::string>();
    }
    for (auto [key, target] :
         {std::pair{"width", &image.width}, std::pair{"height", &image.height}}) {
      auto field = entry.find(key);
      if (field == entry.end()) continue;
      auto value = asInt64(*field);
      if (!value || *value < 0 || *value > std::numeric_limits<int>::max()) {
        return invalid(path + "." + key, "expected a non-negative integer");
      }
      *target = static_cast<int>(*value);
    }

    dataset_.images.push_back(std::move(image));
    return {};
  }

  // Every annotation is checked, not only those of categoryId: a malformed file should fail the
  // same way whichever category is evaluated.
  Expected<void> parseAnnotation(const Json& entry, const std::string& path) {
    if (!entry.is_object()) return invalid(path, "expected an object");

    auto categoryField = entry.find("category_id");
    std::optional<std::int64_t> category;
    if (categoryField != entry.end()) category = asInt64(*categoryField);
    if (!category) return invalid(path + ".category_id", "expected an integer");

    auto imageField = entry.find("image_id");
    std::optional<std::int64_t> imageId;
    if (imageField != entry.end()) imageId = asInt64(*imageField);
    if (!imageId) return invalid(path + ".image_id", "expected an integer");
    // A box on an unlisted image would be counted as a positive that no image can ever match.
    if (!imageIds_.contains(*imageId)) {
      return invalid(path + ".image_id", fmt::format("no image with id {}", *imageId));
    }

    auto parsedBbox = parseBbox(entry, path);
    if (!parsedBbox) return tl::unexpected(std::move(parsedBbox.error()));
    const std::array<double, 4>& bbox = *parsedBbox;
    auto isCrowd = parseIsCrowd(entry, path);
    if (!isCrowd) return tl::unexpected(std::move(isCrowd.error()));

    // COCO's area is the segmentation area; box-only files often leave it out.
    double area = bbox[2] * bbox[3];
    if (auto areaField = entry.find("area"); areaField != entry.end()) {
      if (!areaField->is_number()) return invalid(path + ".area", "expected a number");
      area = areaField->get<double>();
    }

    if (*category != categoryId_) return {};
    CocoAnnotation annotation;
    annotation.imageId = *imageId;
    annotation.box = Box{static_cast<float>(bbox[0]), static_cast<float>(bbox[1]),
                         static_cast<float>(bbox[2]), static_cast<float>(bbox[3])};
    annotation.area = area;
    annotation.isCrowd = *isCrowd;
    dataset_.annotations.push_back(annotation);
    return {};
  }

  // "bbox": [x, y, w, h], four numbers with no negative size and nothing a float cannot hold.
  Expected<std::array<double, 4>> parseBbox(const Json& entry, const std::string& path) const {
    auto bboxField = entry.find("bbox");
    if (bboxField == entry.end() || !bboxField->is_array() || bboxField->size() != 4 ||
        !std::all_of(bboxField->begin(), bboxField->end(),
                     [](const Json& v) { return v.is_number(); })) {
      return invalid(path + ".bbox", "expected 4 numbers");
    }
    std::array<double, 4> bbox{};
    for (std::size_t i = 0; i < 4; ++i) bbox[i] = (*bboxField)[i].get<double>();
    if (bbox[2] < 0 || bbox[3] < 0) {
      return invalid(
          path + ".bbox",
          fmt::format("width and height must not be negative, got {} x {}", bbox[2], bbox[3]));
    }
    constexpr double kFloatMax = std::numeric_limits<float>::max();
    if (std::any_of(bbox.begin(), bbox.end(), [](double v) { return std::abs(v) > kFloatMax; })) {
      return invalid(path + ".bbox", "value out of range");
    }
    return bbox;
  }

  // "iscrowd": absent (false), a boolean, or 0 or 1.
  Expected<bool> parseIsCrowd(const Json& entry, const std::string& path) const {
    auto crowdField = entry.find("iscrowd");
    if (crowdField == entry.end()) return false;
    if (crowdField->is_boolean()) return crowdField->get<bool>();
    auto crowd = asInt64(*crowdField);
    if (crowd && (*crowd == 0 || *crowd == 1)) return *crowd == 1;
    return invalid(path + ".iscrowd", "expected 0 or 1");
  }

  std::string file_;
  std::int64_t categoryId_;
  std::set<std::int64_t> imageIds_;
  CocoDataset dataset_;
};

// ---------------------------------------------------------------------------------------------
// Evaluation. Every step mirrors a line of pycocotools' cocoeval.py (evaluateImg, accumulate,
// summarize) closely enough to give the same doubles, so that scores can be compared with the
// Python reference to the last digit, not just to three decimals.

// numpy.linspace's own arithmetic (i * step + start, the last point set to stop) rather than
// start + i * (stop - start) / (n - 1): the two differ in the last bit for some points, e.g.
// recall threshold 70 is 0.7000000000000001, which a recall of exactly 7/10 does not reach.
// constexpr, so that the compiler's exact constant evaluation rules out fused multiply-adds.
template <std::size_t N>
constexpr std::array<double, N> numpyLinspace(double start, double stop) {
  std::array<double, N> points{};
  const double step = (stop - start) / static_cast<double>(N - 1);
  for (std::size_t i = 0; i < N; ++i) points[i] = static_cast<double>(i) * step + start;
  points[N - 1] = stop;
  return points;
}

constexpr std::size_t kIouThresholdCount = 10;
constexpr std::size_t kRecallThresholdCount = 101;
constexpr auto kIouThresholds = numpyLinspace<kIouThresholdCount>(0.5, 0.95);
constexpr auto kRecallThresholds = numpyLinspace<kRecallThresholdCount>(0.0, 1.0);
// summarize() picks AP50/AP75 with iouThr == iouThrs, so these indices must hit exactly.
constexpr std::size_t kIou50Index = 0;
constexpr std::size_t kIou75Index = 5;
static_assert(kIouThresholds[kIou50Index] == 0.50);
static_assert(kIouThresholds[kIou75Index] == 0.75);

// Area range "all" is [0 ** 2, 1e5 ** 2]. It never excludes a sane box, but pycocotools applies
// it to the ground truth's "area" field and to unmatched detections' w * h, and so do we.
constexpr double kMinArea = 0.0;
constexpr double kMaxArea = 1e10;
// A match needs IoU >= threshold, capped so that a perfect box still matches at threshold 1.
constexpr double kMaxMatchThreshold = 1 - 1e-10;
// np.spacing(1), added to precision denominators against 0 / 0.
constexpr double kSpacingOfOne = std::numeric_limits<double>::epsilon();

bool outsideAreaRange(double area) { return area < kMinArea || area > kMaxArea; }

// maskUtils.iou (bbIou) on boxes: in double, and for a crowd region the overlap is divided by
// the detection's area alone, so that a detection inside a large crowd box counts as covered.
double cocoIou(const Box& detection, const Box& truth, bool truthIsCrowd) {
  const double dx = detection.x, dy = detection.y, dw = detection.width, dh = detection.height;
  const double gx = truth.x, gy = truth.y, gw = truth.width, gh = truth.height;
  const double w = std::min(dx + dw, gx + gw) - std::max(dx, gx);
  if (w <= 0) return 0;
  const double h = std::min(dy + dh, gy + gh) - std::max(dy, gy);
  if (h <= 0) return 0;
  const double intersection = w * h;
  const double detectionArea = dw * dh;
  const double truthArea = gw * gh;
  const double unionArea = truthIsCrowd ? detectionArea : detectionArea + truthArea - intersection;
  return intersection / unionArea;
}

// np.argsort(-scores, kind="mergesort"): a stable descending order with NaN last.
bool scoresBefore(float a, float b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a > b;
}

struct EvaluatedDetection {
  float score = 0;
  std::array<bool, kIouThresholdCount> matched{};
  std::array<bool, kIouThresholdCount> ignored{};
};

struct GroundTruth {
  const Box* box = nullptr;
  bool isCrowd = false;
  bool ignored = false;
};

// The ground truths of one image, the ignored ones (crowd regions, areas out of range) last:
// matchAtThreshold stops at the first ignored ground truth once it holds a real match, which is
// only right if all ignored ones come last.
std::vector<GroundTruth> groundTruthsOf(const std::vector<const CocoAnnotation*>& annotations) {
  std::vector<GroundTruth> truths;
  truths.reserve(annotations.size());
  for (const CocoAnnotation* annotation : annotations) {
    truths.push_back({&annotation->box, annotation->isCrowd,
                      annotation->isCrowd || outsideAreaRange(annotation->area)});
  }
  std::stable_partition(truths.begin(), truths.end(),
                        [](const GroundTruth& g) { return !g.ignored; });
  return truths;
}

// The (at most maxDetections) highest scoring detections, best first.
std::vector<const ScoredBox*> rankedDetections(const std::vector<ScoredBox>& detections,
                                               std::size_t maxDetections) {
  std::vector<const ScoredBox*> ranked;
  ranked.reserve(detections.size());
  for (const ScoredBox& detection : detections) ranked.push_back(&detection);
  std::stable_sort(ranked.begin(), ranked.end(), [](const ScoredBox* a, const ScoredBox* b) {
    return scoresBefore(a->score, b->score);
  });
  if (ranked.size() > maxDetections) ranked.resize(maxDetections);
  return ranked;
}

// The greedy matching at IoU threshold t: each detection, best first, takes the ground truth
// it overlaps most (at least the threshold) among those still free (a crowd region always is);
// results[d] gets detection d's state. ious: detections x ground truths.
void matchAtThreshold(std::size_t t, const std::vector<const ScoredBox*>& ranked,
                      const std::vector<GroundTruth>& truths, const std::vector<double>& ious,
                      EvaluatedDetection* results) {
  const std::size_t truthCount = truths.size();
  std::vector<bool> truthMatched(truthCount, false);
  for (std::size_t d = 0; d < ranked.size(); ++d) {
    double best = std::min(kIouThresholds[t], kMaxMatchThreshold);
    std::ptrdiff_t match = -1;
    for (std::size_t g = 0; g < truthCount; ++g) {
      // A crowd region can absorb any number of detections.
      if (truthMatched[g] && !truths[g].isCrowd) continue;
      // A real match is never traded for an ignored region, however large the overlap.
      if (match > -1 && !truths[static_cast<std::size_t>(match)].ignored && truths[g].ignored) {
        break;
      }
      const double overlap = ious[d * truthCount + g];
      if (overlap < best) continue;
      best = overlap;
      match = static_cast<std::ptrdiff_t>(g);
    }
    EvaluatedDetection& result = results[d];
    if (match == -1) {
      result.ignored[t] = outsideAreaRange(static_cast<double>(ranked[d]->box.width) *
                                           static_cast<double>(ranked[d]->box.height));
      continue;
    }
    const auto m = static_cast<std::size_t>(match);
    result.matched[t] = true;
    result.ignored[t] = truths[m].ignored;
    truthMatched[m] = true;
  }
}

// evaluateImg for one image: appends its (at most maxDetections) detections with their match
// state per IoU threshold, and returns the number of ground truths that are not ignored.
std::size_t evaluateImage(const std::vector<const CocoAnnotation*>& annotations,
                          const std::vector<ScoredBox>& detections, std::size_t maxDetections,
                          std::vector<EvaluatedDetection>& out) {
  const std::vector<GroundTruth> truths = groundTruthsOf(annotations);
  const auto positives = static_cast<std::size_t>(
      std::count_if(truths.begin(), truths.end(), [](const GroundTruth& g) { return !g.ignored; }));
  const std::vector<const ScoredBox*> ranked = rankedDetections(detections, maxDetections);

  const std::size_t truthCount = truths.size();
  std::vector<double> ious(ranked.size() * truthCount);
  for (std::size_t d = 0; d < ranked.size(); ++d) {
    for (std::size_t g = 0; g < truthCount; ++g) {
      ious[d * truthCount + g] = cocoIou(ranked[d]->box, *truths[g].box, truths[g].isCrowd);
    }
  }

  const std::size_t first = out.size();
  for (const ScoredBox* detection : ranked) {
    EvaluatedDetection result;
    result.score = detection->score;
    out.push_back(result);
  }
  for (std::size_t t = 0; t < kIouThresholdCount; ++t) {
    matchAtThreshold(t, ranked, truths, ious, out.data() + first);
  }
  return positives;
}

// np.sum's pairwise summation for contiguous float64 (8 accumulators within blocks of up to 128,
// halves above that). A plain loop would differ from pycocotools' np.mean in the last bits.
double numpySum(const double* values, std::size_t n) {
  if (n < 8) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += values[i];
    return sum;
  }
  if (n <= 128) {
    std::array<double, 8> partial{};
    std::copy_n(values, 8, partial.begin());
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (std::size_t j = 0; j < 8; ++j) partial[j] += values[i + j];
    }
    double sum = ((partial[0] + partial[1]) + (partial[2] + partial[3])) +
                 ((partial[4] + partial[5]) + (partial[6] + partial[7]));
    for (; i < n; ++i) sum += values[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return numpySum(values, half) + numpySum(values + half, n - half);
}

template <std::size_t N>
double numpyMean(const std::array<double, N>& values) {
  return numpySum(values.data(), N) / static_cast<double>(N);
}

// The ground truths of each image, by image id: every image of the dataset, with or without.
// pycocotools walks sorted(unique image ids), not file order; with tied scores across images
// the stable sort of accumulate keeps that order, so it decides which detection ranks first.
std::map<std::int64_t, std::vector<const CocoAnnotation*>> truthsByImage(
    const CocoDataset& dataset) {
  std::map<std::int64_t, std::vector<const CocoAnnotation*>> byImage;
  for (const CocoImage& image : dataset.images) byImage.try_emplace(image.id);
  for (const CocoAnnotation& annotation : dataset.annotations) {
    if (auto it = byImage.find(annotation.imageId); it != byImage.end()) {
      it->second.push_back(&annotation);
    }
  }
  return byImage;
}

// accumulate's curves: per IoU threshold, the interpolated precision at each recall threshold
// and the recall reached.
struct Accumulated {
  std::array<double, kIouThresholdCount * kRecallThresholdCount> precision{};
  std::array<double, kIouThresholdCount> recall{};
};

// accumulate over every image's detections, ranked by score; positives > 0.
Accumulated accumulate(std::vector<EvaluatedDetection> evaluated, std::size_t positives) {
  std::stable_sort(evaluated.begin(), evaluated.end(),
                   [](const EvaluatedDetection& a, const EvaluatedDetection& b) {
                     return scoresBefore(a.score, b.score);
                   });

  const auto positiveCount = static_cast<double>(positives);
  const std::size_t n = evaluated.size();
  Accumulated curves;
  std::vector<double> rc(n);
  std::vector<double> pr(n);
  for (std::size_t t = 0; t < kIouThresholdCount; ++t) {
    double tp = 0;
    double fp = 0;
    for (std::size_t i = 0; i < n; ++i) {
      // Detections matched to an ignored region, or too large to be anything, are neither.
      if (!evaluated[i].ignored[t]) {
        if (evaluated[i].matched[t]) {
          tp += 1;
        } else {
          fp += 1;
        }
      }
      rc[i] = tp / positiveCount;
      pr[i] = tp / (fp + tp + kSpacingOfOne);
    }
    curves.recall[t] = n > 0 ? rc.back() : 0.0;
    // Interpolated precision: the best precision at this recall or any higher one.
    for (std::size_t i = n; i-- > 1;) pr[i - 1] = std::max(pr[i - 1], pr[i]);
    for (std::size_t r = 0; r < kRecallThresholdCount; ++r) {
      // np.searchsorted(rc, recThrs, side="left"); a recall never reached gives precision 0.
      auto reached = std::lower_bound(rc.begin(), rc.end(), kRecallThresholds[r]);
      curves.precision[t * kRecallThresholdCount + r] =
          reached != rc.end() ? pr[static_cast<std::size_t>(reached - rc.begin())] : 0.0;
    }
  }
  return curves;
}

}  // namespace

Expected<CocoDataset> loadCocoDataset(const std::filesystem::path& file, int categoryId) {
  const std::string name = file.string();
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) {
    return makeError(ErrorCode::kNotFound, "{}: no such file", name);
  }
  if (std::filesystem::is_directory(status)) {
    return makeError(ErrorCode::kInvalidArgument, "{}: is a directory, expected a JSON file", name);
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return makeError(ErrorCode::kInvalidArgument, "{}: cannot open for reading", name);
  // Chunked reads rather than istreambuf_iterator, on which GCC 12 reports a spurious
  // null-dereference that -Werror turns fatal.
  std::string text;
  std::array<char, 16384> chunk{};
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return makeError(ErrorCode::kInvalidData, "{}: read error", name);

  try {
    const Json root = Json::parse(text);
    return DatasetParser(name, categoryId).parse(root);
  } catch (const Json::parse_error& e) {
    return makeError(ErrorCode::kInvalidData, "{}: invalid JSON: {}", name, e.what());
  } catch (const Json::exception& e) {
    // The parser checks every type before reading, so this is a bug here, not in the file; it
    // still must not escape into a caller that only expects an Error.
    return makeError(ErrorCode::kInvalidData, "{}: {}", name, e.what());
  }
}

CocoMetrics evaluateCoco(const CocoDataset& dataset,
                         const std::map<std::int64_t, std::vector<ScoredBox>>& detections,
                         int maxDetections) {
  CocoMetrics metrics;
  metrics.images = static_cast<int>(dataset.images.size());
  metrics.positives =
      static_cast<int>(std::count_if(dataset.annotations.begin(), dataset.annotations.end(),
                                     [](const CocoAnnotation& a) { return !a.isCrowd; }));

  const std::size_t maxKept = maxDetections > 0 ? static_cast<std::size_t>(maxDetections) : 0;
  const std::vector<ScoredBox> none;
  std::vector<EvaluatedDetection> evaluated;
  std::size_t positives = 0;
  for (const auto& [imageId, truths] : truthsByImage(dataset)) {
    auto found = detections.find(imageId);
    const std::vector<ScoredBox>& imageDetections =
        found != detections.end() ? found->second : none;
    // pycocotools returns None for such an image; it would add nothing anyway.
    if (truths.empty() && imageDetections.empty()) continue;
    positives += evaluateImage(truths, imageDetections, maxKept, evaluated);
  }
  // No positives: precision and recall are undefined, and pycocotools leaves them at -1.
  if (positives == 0) return metrics;

  const Accumulated curves = accumulate(std::move(evaluated), positives);
  // summarize() averages the entries > -1; with positives > 0 every entry is >= 0.
  const auto& precision = curves.precision;
  metrics.ap = numpyMean(precision);
  metrics.ap50 = numpySum(&precision[kIou50Index * kRecallThresholdCount], kRecallThresholdCount) /
                 static_cast<double>(kRecallThresholdCount);
  metrics.ap75 = numpySum(&precision[kIou75Index * kRecallThresholdCount], kRecallThresholdCount) /
                 static_cast<double>(kRecallThresholdCount);
  metrics.ar = numpyMean(curves.recall);
  return metrics;
}

}  // namespace vigil
