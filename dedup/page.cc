#include "dedup/canonicalize.h"
#include "dedup/sketch.h"

namespace shingled::dedup {

Sketch SketchPage(const SketchContext& context, std::string_view bytes,
                  std::string_view content_type) {
  Sketcher sketcher(context);
  sketcher.AddRawBytes(bytes);
  CanonicalizePage(bytes, content_type, &sketcher);
  return sketcher.Finish();
}

}  // namespace shingled::dedup
