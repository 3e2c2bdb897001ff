// The one rule for a moved URL's new home (store/internal/moves.h).
#include "store/internal/moves.h"

#include <algorithm>

namespace shingled::store::internal {

std::string_view MoveEvidenceName(MoveEvidence evidence) {
  switch (evidence) {
    case MoveEvidence::kSameContent:
      return "same_content";
    case MoveEvidence::kResemblance:
      return "resemblance";
    case MoveEvidence::kContainment:
      return "containment";
    case MoveEvidence::kNone:
      break;
  }
  return "";
}

bool MostlyTemplate(const CommonBytes& common) {
  return common.b_known && common.length_b > 0 &&
         static_cast<double>(common.template_b) >
             kMaxTemplateShare * static_cast<double>(common.length_b);
}

double ResemblanceOutsideTemplate(double resemblance, const CommonBytes& common) {
  if (!common.known || common.template_bytes == 0 || resemblance <= 0) return resemblance;
  // r = X / (A + B - X) for X shingles in common of A and B: X = r (A + B) / (1 + r). Without
  // the T template bytes in common, X - T of (A - T) + (B - T) - (X - T).
  const double a = static_cast<double>(common.length_a);
  const double b = static_cast<double>(common.length_b);
  const double t = static_cast<double>(common.template_bytes);
  const double shared = std::max(0.0, resemblance * (a + b) / (1 + resemblance) - t);
  const double total = (a - t) + (b - t) - shared;
  return total > 0 ? shared / total : 0;
}

MoveEvidence JudgeContentMove(const ContentMatch& match) {
  if (match.same_content) return MoveEvidence::kSameContent;
  if (MostlyTemplate(match.common)) return MoveEvidence::kNone;
  if (ResemblanceOutsideTemplate(match.resemblance, match.common) >= kMoveResemblance) {
    return MoveEvidence::kResemblance;
  }
  if (match.common.known && match.common.share_a >= kMoveContainment) {
    return MoveEvidence::kContainment;
  }
  return MoveEvidence::kNone;
}

}  // namespace shingled::store::internal
