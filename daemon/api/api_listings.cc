// The listings of the API (docs/API.md, "Listings"): GET /v1/urls without `url`, /v1/clusters,
// /v1/clusters/ID and /v1/identical. They run on the TaskPool; each page is one read transaction.
#include "daemon/api/api.h"
#include "daemon/wire/listings.h"

namespace shingled::daemon {

StatusOr<Response> Api::ListUrls(const Target& target) {
  StatusOr<store::UrlListOptions> options = ParseUrlListing(target.params, *store_);
  if (!options.ok()) return options.status();
  StatusOr<store::UrlPage> page = store_->ListUrls(*options);
  if (!page.ok()) return page.status();
  return JsonResponse(http::status::ok, UrlPageJson(*page));
}

StatusOr<Response> Api::ListClusters(const Target& target) {
  StatusOr<store::ClusterListOptions> options = ParseClusterListing(target.params);
  if (!options.ok()) return options.status();
  StatusOr<store::ClusterListPage> page = store_->ListClusters(*options);
  if (!page.ok()) return page.status();
  return JsonResponse(http::status::ok, ClusterListJson(*page));
}

StatusOr<Response> Api::ListIdentical(const Target& target) {
  StatusOr<store::IdenticalSetOptions> options = ParseIdenticalListing(target.params);
  if (!options.ok()) return options.status();
  StatusOr<store::IdenticalSetPage> page = store_->ListIdenticalSets(*options);
  if (!page.ok()) return page.status();
  return JsonResponse(http::status::ok, IdenticalListJson(*page));
}

StatusOr<Response> Api::GetCluster(const std::string& id_text, const Target& target) {
  StatusOr<uint64_t> id = ParseId(id_text, "cluster");
  if (!id.ok()) return id.status();
  store::DocId after = 0;
  size_t limit = 0;
  if (Status s = ParseMembersListing(target.params, &after, &limit); !s.ok()) return s;
  StatusOr<store::ClusterMembersPage> page = store_->ClusterPage(*id, after, limit);
  if (!page.ok()) return page.status();
  return JsonResponse(http::status::ok, ClusterMembersJson(*page));
}

}  // namespace shingled::daemon
