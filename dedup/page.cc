#include "dedup/page.h"

namespace shingled::dedup {

PageSketcher::PageSketcher(const SketchContext& context, std::string_view content_type,
                           CanonicalizerKind kind)
    : sketcher_(context), kind_(kind), content_type_(content_type) {
  if (kind_ == CanonicalizerKind::kStreaming) {
    streaming_ = std::make_unique<StreamingCanonicalizer>(content_type_, &sketcher_);
  }
}

PageSketcher::~PageSketcher() = default;

void PageSketcher::Feed(std::string_view bytes) {
  sketcher_.AddRawBytes(bytes);
  if (streaming_ != nullptr) {
    streaming_->Feed(bytes);
  } else {
    whole_page_.append(bytes);
  }
}

Sketch PageSketcher::Finish(CanonicalizeInfo* info) {
  CanonicalizeInfo found = streaming_ != nullptr
                               ? streaming_->Finish()
                               : CanonicalizePage(whole_page_, content_type_, &sketcher_);
  if (info != nullptr) *info = found;
  return sketcher_.Finish();
}

Sketch SketchPage(const SketchContext& context, std::string_view bytes,
                  std::string_view content_type, CanonicalizerKind kind) {
  PageSketcher page(context, content_type, kind);
  page.Feed(bytes);
  return page.Finish();
}

Sketch SketchPage(const SketchContext& context, std::string_view bytes,
                  std::string_view content_type) {
  return SketchPage(context, bytes, content_type, CanonicalizerKind::kStreaming);
}

}  // namespace shingled::dedup
