#include "detector/track/mot_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "detector/track/linear_assignment.h"

namespace vigil {

namespace {

constexpr double kMatchIou = 0.5;
constexpr double kEpsilon = std::numeric_limits<double>::epsilon();

// One scored frame, ids made dense (0..gtIds-1, 0..hypIds-1) and ignored boxes taken out.
struct ScoredFrame {
  std::vector<std::size_t> gt;
  std::vector<std::size_t> hyp;
  CostMatrix iou;  // gt x hyp
};

struct Prepared {
  std::vector<ScoredFrame> frames;
  std::size_t gtIds = 0;
  std::size_t hypIds = 0;
};

std::size_t denseId(std::map<std::uint64_t, std::size_t>& ids, std::uint64_t id) {
  return ids.emplace(id, ids.size()).first->second;
}

CostMatrix iouMatrix(const std::vector<const MotBox*>& gt, const std::vector<const MotBox*>& hyp) {
  CostMatrix m{gt.size(), hyp.size(), std::vector<double>(gt.size() * hyp.size())};
  for (std::size_t g = 0; g < gt.size(); ++g) {
    for (std::size_t h = 0; h < hyp.size(); ++h)
      m.costs[g * hyp.size() + h] = iou(gt[g]->box, hyp[h]->box);
  }
  return m;
}

// Tracker boxes on an ignore region (matched to it at IoU >= 0.5, one to one) are left out.
std::vector<const MotBox*> withoutIgnored(const std::vector<const MotBox*>& ignored,
                                          const std::vector<const MotBox*>& hyp,
                                          AssignmentScratch& scratch) {
  if (ignored.empty() || hyp.empty()) return hyp;
  CostMatrix weights = iouMatrix(ignored, hyp);
  for (double& w : weights.costs) w = w >= kMatchIou - kEpsilon ? w : 0;
  std::vector<std::pair<std::size_t, std::size_t>> matches;
  assignMaxWeight(weights, matches, scratch);
  std::vector<char> drop(hyp.size(), 0);
  for (const auto& m : matches) drop[m.second] = 1;
  std::vector<const MotBox*> kept;
  for (std::size_t h = 0; h < hyp.size(); ++h) {
    if (!drop[h]) kept.push_back(hyp[h]);
  }
  return kept;
}

Prepared prepare(const MotSequence& truth, const MotSequence& hypothesis,
                 const std::vector<int>& frames) {
  Prepared p;
  std::map<std::uint64_t, std::size_t> gtIds, hypIds;
  AssignmentScratch scratch;
  static const std::vector<MotBox> kNone;
  for (int frame : frames) {
    auto t = truth.find(frame);
    auto h = hypothesis.find(frame);
    const std::vector<MotBox>& tb = t == truth.end() ? kNone : t->second;
    const std::vector<MotBox>& hb = h == hypothesis.end() ? kNone : h->second;
    std::vector<const MotBox*> gt, ignored, hyp;
    for (const MotBox& b : tb) (b.ignore ? ignored : gt).push_back(&b);
    for (const MotBox& b : hb) hyp.push_back(&b);
    hyp = withoutIgnored(ignored, hyp, scratch);
    ScoredFrame f;
    for (const MotBox* b : gt) f.gt.push_back(denseId(gtIds, b->id));
    for (const MotBox* b : hyp) f.hyp.push_back(denseId(hypIds, b->id));
    f.iou = iouMatrix(gt, hyp);
    p.frames.push_back(std::move(f));
  }
  p.gtIds = gtIds.size();
  p.hypIds = hypIds.size();
  return p;
}

void clearMot(const Prepared& p, MotScores& s) {
  constexpr std::size_t kNoMatch = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> lastMatch(p.gtIds, kNoMatch);      // for switches: ever
  std::vector<std::size_t> previousFrame(p.gtIds, kNoMatch);  // for matching: last frame only
  std::vector<int> gtFrames(p.gtIds, 0), gtMatched(p.gtIds, 0);
  AssignmentScratch scratch;
  std::vector<std::pair<std::size_t, std::size_t>> matches;
  double iouSum = 0;
  for (const ScoredFrame& f : p.frames) {
    CostMatrix score = f.iou;
    for (std::size_t g = 0; g < f.gt.size(); ++g) {
      for (std::size_t h = 0; h < f.hyp.size(); ++h) {
        double& w = score.costs[g * f.hyp.size() + h];
        if (w < kMatchIou - kEpsilon) {
          w = 0;
        } else if (previousFrame[f.gt[g]] == f.hyp[h]) {
          w += 1000;  // the previous match is kept when it still qualifies
        }
      }
    }
    assignMaxWeight(score, matches, scratch);
    std::vector<std::size_t> matchedNow(f.gt.size(), kNoMatch);
    for (const auto& [g, h] : matches) {
      const std::size_t gid = f.gt[g];
      const std::size_t hid = f.hyp[h];
      if (lastMatch[gid] != kNoMatch && lastMatch[gid] != hid) ++s.idSwitches;
      lastMatch[gid] = hid;
      matchedNow[g] = hid;
      ++gtMatched[gid];
      iouSum += f.iou.at(g, h);
    }
    for (std::size_t g = 0; g < f.gt.size(); ++g) {
      ++gtFrames[f.gt[g]];
    }
    std::fill(previousFrame.begin(), previousFrame.end(), kNoMatch);
    for (std::size_t g = 0; g < f.gt.size(); ++g) previousFrame[f.gt[g]] = matchedNow[g];
    const int n = static_cast<int>(matches.size());
    s.tp += n;
    s.fn += static_cast<int>(f.gt.size()) - n;
    s.fp += static_cast<int>(f.hyp.size()) - n;
  }
  s.gtBoxes = s.tp + s.fn;
  s.gtTracks = static_cast<int>(p.gtIds);
  s.mota = s.gtBoxes > 0 ? 1.0 - static_cast<double>(s.fn + s.fp + s.idSwitches) / s.gtBoxes : 0;
  s.motp = s.tp > 0 ? iouSum / s.tp : 0;
  for (std::size_t g = 0; g < p.gtIds; ++g) {
    const double ratio = gtFrames[g] > 0 ? static_cast<double>(gtMatched[g]) / gtFrames[g] : 0;
    if (ratio > 0.8) {
      ++s.mostlyTracked;
    } else if (ratio >= 0.2) {
      ++s.partlyTracked;
    } else {
      ++s.mostlyLost;
    }
  }
}

void identity(const Prepared& p, MotScores& s) {
  CostMatrix together{p.gtIds, p.hypIds, std::vector<double>(p.gtIds * p.hypIds, 0)};
  double gtBoxes = 0, hypBoxes = 0;
  for (const ScoredFrame& f : p.frames) {
    gtBoxes += static_cast<double>(f.gt.size());
    hypBoxes += static_cast<double>(f.hyp.size());
    for (std::size_t g = 0; g < f.gt.size(); ++g) {
      for (std::size_t h = 0; h < f.hyp.size(); ++h) {
        if (f.iou.at(g, h) >= kMatchIou - kEpsilon)
          together.costs[f.gt[g] * p.hypIds + f.hyp[h]] += 1;
      }
    }
  }
  AssignmentScratch scratch;
  std::vector<std::pair<std::size_t, std::size_t>> matches;
  assignMaxWeight(together, matches, scratch);
  double idtp = 0;
  for (const auto& [g, h] : matches) idtp += together.at(g, h);
  s.idp = hypBoxes > 0 ? idtp / hypBoxes : 0;
  s.idr = gtBoxes > 0 ? idtp / gtBoxes : 0;
  s.idf1 = gtBoxes + hypBoxes > 0 ? 2 * idtp / (gtBoxes + hypBoxes) : 0;
}

// HOTA's global alignment between ids: how much each pair overlaps over the sequence
// (alignment, gt x hyp ids), and how many frames each id is in.
struct IdAlignment {
  std::vector<double> alignment;
  std::vector<double> gtCount;
  std::vector<double> hypCount;
};

IdAlignment alignIds(const Prepared& p) {
  std::vector<double> potential(p.gtIds * p.hypIds, 0);
  IdAlignment a{{}, std::vector<double>(p.gtIds, 0), std::vector<double>(p.hypIds, 0)};
  for (const ScoredFrame& f : p.frames) {
    const std::size_t G = f.gt.size(), H = f.hyp.size();
    std::vector<double> rowSum(G, 0), colSum(H, 0);
    for (std::size_t g = 0; g < G; ++g) {
      for (std::size_t h = 0; h < H; ++h) {
        rowSum[g] += f.iou.at(g, h);
        colSum[h] += f.iou.at(g, h);
      }
    }
    for (std::size_t g = 0; g < G; ++g) {
      for (std::size_t h = 0; h < H; ++h) {
        const double sim = f.iou.at(g, h);
        const double denominator = rowSum[g] + colSum[h] - sim;
        if (denominator > kEpsilon) potential[f.gt[g] * p.hypIds + f.hyp[h]] += sim / denominator;
      }
    }
    for (std::size_t id : f.gt) a.gtCount[id] += 1;
    for (std::size_t id : f.hyp) a.hypCount[id] += 1;
  }
  a.alignment.assign(potential.size(), 0);
  for (std::size_t g = 0; g < p.gtIds; ++g) {
    for (std::size_t h = 0; h < p.hypIds; ++h) {
      const double v = potential[g * p.hypIds + h];
      a.alignment[g * p.hypIds + h] = v / (a.gtCount[g] + a.hypCount[h] - v);
    }
  }
  return a;
}

// HOTA's scores at one localisation threshold alpha.
struct HotaAtAlpha {
  double detA = 0;
  double assA = 0;
  double locA = 0;
};

HotaAtAlpha hotaAtAlpha(const Prepared& p, const IdAlignment& ids, double alpha,
                        AssignmentScratch& scratch,
                        std::vector<std::pair<std::size_t, std::size_t>>& matches) {
  double tp = 0, fn = 0, fp = 0, loc = 0;
  std::vector<double> matched(p.gtIds * p.hypIds, 0);
  for (const ScoredFrame& f : p.frames) {
    const std::size_t G = f.gt.size(), H = f.hyp.size();
    CostMatrix score{G, H, std::vector<double>(G * H)};
    for (std::size_t g = 0; g < G; ++g) {
      for (std::size_t h = 0; h < H; ++h) {
        score.costs[g * H + h] = ids.alignment[f.gt[g] * p.hypIds + f.hyp[h]] * f.iou.at(g, h);
      }
    }
    assignMaxWeight(score, matches, scratch);
    double n = 0;
    for (const auto& [g, h] : matches) {
      if (f.iou.at(g, h) < alpha - kEpsilon) continue;
      n += 1;
      loc += f.iou.at(g, h);
      matched[f.gt[g] * p.hypIds + f.hyp[h]] += 1;
    }
    tp += n;
    fn += static_cast<double>(G) - n;
    fp += static_cast<double>(H) - n;
  }
  double ass = 0;
  for (std::size_t g = 0; g < p.gtIds; ++g) {
    for (std::size_t h = 0; h < p.hypIds; ++h) {
      const double m = matched[g * p.hypIds + h];
      if (m > 0) ass += m * m / std::max(1.0, ids.gtCount[g] + ids.hypCount[h] - m);
    }
  }
  return {tp / std::max(1.0, tp + fn + fp), ass / std::max(1.0, tp),
          std::max(1e-10, loc) / std::max(1e-10, tp)};
}

void hota(const Prepared& p, MotScores& s) {
  const IdAlignment ids = alignIds(p);
  constexpr int kAlphas = 19;
  double hotaSum = 0, detSum = 0, assSum = 0, locSum = 0;
  AssignmentScratch scratch;
  std::vector<std::pair<std::size_t, std::size_t>> matches;
  for (int a = 0; a < kAlphas; ++a) {
    const HotaAtAlpha at = hotaAtAlpha(p, ids, 0.05 * (a + 1), scratch, matches);
    hotaSum += std::sqrt(at.detA * at.assA);
    detSum += at.detA;
    assSum += at.assA;
    locSum += at.locA;
  }
  s.hota = hotaSum / kAlphas;
  s.detA = detSum / kAlphas;
  s.assA = assSum / kAlphas;
  s.locA = locSum / kAlphas;
}

}  // namespace

MotScores evaluateTracks(const MotSequence& truth, const MotSequence& hypothesis,
                         const std::vector<int>& frames) {
  const Prepared p = prepare(truth, hypothesis, frames);
  MotScores s;
  s.frames = static_cast<int>(frames.size());
  clearMot(p, s);
  identity(p, s);
  hota(p, s);
  return s;
}

}  // namespace vigil
