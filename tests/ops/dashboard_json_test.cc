// The Grafana dashboard ops/grafana/shingled.json is well-formed for Grafana 10/11 import: a
// `datasource` variable of type prometheus and no hard-coded data source anywhere, every panel
// with a title, a type, a description, a unit and targets with an expression, every variable an
// expression uses defined, and every recording rule it uses defined in
// ops/prometheus/shingled-rules.yml. (Grafana is not in Debian 12; tests/daemon/
// dashboard_queries_test.cc runs the queries against a real Prometheus.)
#include <gtest/gtest.h>

#include <regex>

#include "tests/ops/grafana_dashboard.h"

namespace shingled::testing {
namespace {

using nlohmann::json;

const std::string kDashboard = std::string(SHINGLED_OPS_DIR) + "/grafana/shingled.json";
const std::string kRules = std::string(SHINGLED_OPS_DIR) + "/prometheus/shingled-rules.yml";

// The data source of a panel or a target: the variable, for Prometheus.
bool IsDatasourceVariable(const json& ds) {
  if (ds.is_string()) return ds == "${datasource}" || ds == "$datasource";
  return ds.is_object() && ds.value("type", "") == "prometheus" &&
         (ds.value("uid", "") == "${datasource}" || ds.value("uid", "") == "$datasource");
}

// Every "datasource" member anywhere in `j`, with its JSON path.
void CollectDatasources(const json& j, const std::string& path,
                        std::vector<std::pair<std::string, json>>* out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "datasource") out->emplace_back(path + "/" + key, value);
      CollectDatasources(value, path + "/" + key, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      CollectDatasources(j[i], path + "/" + std::to_string(i), out);
    }
  }
}

class DashboardJsonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dashboard_ = LoadDashboard(kDashboard);
    ASSERT_FALSE(dashboard_.is_discarded()) << kDashboard << " is not valid JSON";
    ASSERT_TRUE(dashboard_.is_object());
  }
  json dashboard_;
};

TEST_F(DashboardJsonTest, HasTheTopLevelFieldsGrafanaImports) {
  EXPECT_FALSE(dashboard_.value("title", "").empty());
  EXPECT_FALSE(dashboard_.value("uid", "").empty());
  // Grafana 10.0 writes schemaVersion 38, 11.0 writes 39; older ones are migrated on import.
  ASSERT_TRUE(dashboard_["schemaVersion"].is_number_integer());
  EXPECT_GE(dashboard_["schemaVersion"].get<int>(), 36);
  // An import gets a new id: a fixed one would overwrite another dashboard.
  EXPECT_TRUE(!dashboard_.contains("id") || dashboard_["id"].is_null());
  EXPECT_TRUE(dashboard_["panels"].is_array());
  EXPECT_TRUE(dashboard_["templating"]["list"].is_array());
}

TEST_F(DashboardJsonTest, DataSourceIsAVariableOfTypePrometheusEverywhere) {
  bool found = false;
  for (const json& variable : dashboard_["templating"]["list"]) {
    if (variable.value("name", "") != "datasource") continue;
    found = true;
    EXPECT_EQ(variable.value("type", ""), "datasource");
    EXPECT_EQ(variable.value("query", ""), "prometheus");
  }
  EXPECT_TRUE(found) << "no templating variable named datasource";
  std::vector<std::pair<std::string, json>> datasources;
  CollectDatasources(dashboard_, "", &datasources);
  EXPECT_FALSE(datasources.empty());
  for (const auto& [path, ds] : datasources) {
    EXPECT_TRUE(IsDatasourceVariable(ds)) << path << ": " << ds.dump();
  }
  // An export "for sharing externally" would name its data source through __inputs instead.
  EXPECT_FALSE(dashboard_.contains("__inputs"));
}

TEST_F(DashboardJsonTest, EveryPanelHasATitleTypeDescriptionUnitAndQueries) {
  const std::vector<json> panels = DashboardPanels(dashboard_);
  ASSERT_GT(panels.size(), 10u);
  std::set<int> ids;
  size_t rows = 0;
  for (const json& panel : panels) {
    const std::string title = panel.value("title", "");
    EXPECT_FALSE(title.empty()) << panel.dump().substr(0, 200);
    ASSERT_TRUE(panel["id"].is_number_integer()) << title;
    EXPECT_TRUE(ids.insert(panel["id"].get<int>()).second) << "duplicate panel id: " << title;
    const json& pos = panel["gridPos"];
    ASSERT_TRUE(pos.is_object()) << title;
    EXPECT_GT(pos.value("w", 0), 0) << title;
    EXPECT_GT(pos.value("h", 0), 0) << title;
    EXPECT_LE(pos.value("x", 0) + pos.value("w", 0), 24) << title;
    const std::string type = panel.value("type", "");
    if (type == "row") {  // a row is a heading: a title, no queries
      ++rows;
      continue;
    }
    static const std::set<std::string> kTypes = {"timeseries", "stat",    "gauge",   "bargauge",
                                                 "table",      "heatmap", "piechart"};
    EXPECT_TRUE(kTypes.count(type)) << title << ": type \"" << type << "\"";
    EXPECT_FALSE(panel.value("description", "").empty()) << title;
    EXPECT_TRUE(IsDatasourceVariable(panel["datasource"])) << title;
    const json& unit = panel["fieldConfig"]["defaults"]["unit"];
    EXPECT_TRUE(unit.is_string() && !unit.get<std::string>().empty()) << title << ": no unit";
    ASSERT_TRUE(panel["targets"].is_array()) << title;
    EXPECT_FALSE(panel["targets"].empty()) << title;
    std::set<std::string> ref_ids;
    for (const json& target : panel["targets"]) {
      EXPECT_FALSE(target.value("expr", "").empty()) << title;
      const std::string ref_id = target.value("refId", "");
      EXPECT_FALSE(ref_id.empty()) << title;
      EXPECT_TRUE(ref_ids.insert(ref_id).second) << title << ": refId " << ref_id << " twice";
      if (target.contains("datasource")) {
        EXPECT_TRUE(IsDatasourceVariable(target["datasource"])) << title;
      }
    }
  }
  EXPECT_GE(rows, 5u);  // the sections have titled rows
}

TEST_F(DashboardJsonTest, ExpressionsUseOnlyDefinedVariables) {
  std::map<std::string, std::string> known = {
      {"__rate_interval", "x"}, {"__interval", "x"}, {"__range", "x"}};
  for (const json& variable : dashboard_["templating"]["list"]) {
    known[variable.value("name", "")] = "x";
  }
  for (const DashboardTarget& target : DashboardTargets(dashboard_)) {
    std::set<std::string> unknown;
    SubstituteGrafanaVariables(target.expr, known, &unknown);
    EXPECT_TRUE(unknown.empty()) << target.panel << ": " << target.expr << " uses $"
                                 << *unknown.begin();
  }
}

TEST_F(DashboardJsonTest, RecordingRulesUsedAreDefined) {
  std::ifstream in(kRules);
  std::stringstream rules;
  rules << in.rdbuf();
  ASSERT_FALSE(rules.str().empty()) << kRules;
  // Recording rule names are the only metric names with a colon.
  const std::regex rule_name(R"([a-z_]+:[a-z_0-9]+:[a-z_0-9]+)");
  size_t used = 0;
  for (const DashboardTarget& target : DashboardTargets(dashboard_)) {
    for (std::sregex_iterator it(target.expr.begin(), target.expr.end(), rule_name), end; it != end;
         ++it) {
      ++used;
      EXPECT_NE(rules.str().find("record: " + it->str() + "\n"), std::string::npos)
          << target.panel << " uses " << it->str() << ", which " << kRules << " does not record";
    }
  }
  EXPECT_GT(used, 0u) << "the dashboard uses none of the recording rules";
}

}  // namespace
}  // namespace shingled::testing
