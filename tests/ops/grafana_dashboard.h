// Reading the Grafana dashboard ops/grafana/shingled.json in tests: its panels (those of collapsed
// rows included), their query targets, and Grafana's variables substituted in an expression the
// way Grafana does before it sends the query to Prometheus.
#ifndef SHINGLED_TESTS_OPS_GRAFANA_DASHBOARD_H_
#define SHINGLED_TESTS_OPS_GRAFANA_DASHBOARD_H_

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace shingled::testing {

// The dashboard file as JSON; a discarded value (is_discarded()) when it does not parse.
inline nlohmann::json LoadDashboard(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

// Every panel, rows included, in order: the top-level panels and those inside collapsed rows
// (Grafana keeps a collapsed row's panels in the row's own "panels").
inline std::vector<nlohmann::json> DashboardPanels(const nlohmann::json& dashboard) {
  std::vector<nlohmann::json> out;
  if (!dashboard.is_object() || !dashboard.contains("panels") || !dashboard["panels"].is_array()) {
    return out;
  }
  for (const nlohmann::json& panel : dashboard["panels"]) {
    out.push_back(panel);
    if (panel.is_object() && panel.contains("panels") && panel["panels"].is_array()) {
      for (const nlohmann::json& inner : panel["panels"]) out.push_back(inner);
    }
  }
  return out;
}

struct DashboardTarget {
  std::string panel;  // the panel's title
  std::string ref_id;
  std::string expr;
  bool instant = false;  // an instant query (stat panels) rather than a range
  std::string legend;
};

// The query targets of every panel that is not a row.
inline std::vector<DashboardTarget> DashboardTargets(const nlohmann::json& dashboard) {
  std::vector<DashboardTarget> out;
  for (const nlohmann::json& panel : DashboardPanels(dashboard)) {
    if (!panel.is_object() || panel.value("type", "") == "row") continue;
    if (!panel.contains("targets") || !panel["targets"].is_array()) continue;
    for (const nlohmann::json& target : panel["targets"]) {
      if (!target.is_object()) continue;
      DashboardTarget t;
      t.panel = panel.value("title", "");
      t.ref_id = target.value("refId", "");
      t.expr = target.value("expr", "");
      t.instant = target.value("instant", false) && !target.value("range", false);
      t.legend = target.value("legendFormat", "");
      out.push_back(t);
    }
  }
  return out;
}

// `expr` with each variable ($name or ${name}) replaced by its value in `values` (keyed by the
// name without "$", e.g. "__rate_interval", "instance"). Names not in `values` are left as they
// are and added to `unknown`.
inline std::string SubstituteGrafanaVariables(const std::string& expr,
                                              const std::map<std::string, std::string>& values,
                                              std::set<std::string>* unknown) {
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  std::string out;
  size_t i = 0;
  while (i < expr.size()) {
    if (expr[i] != '$') {
      out.push_back(expr[i++]);
      continue;
    }
    size_t start = i + 1;
    size_t end = start;
    const bool braced = start < expr.size() && expr[start] == '{';
    if (braced) {
      end = expr.find('}', start);
      if (end == std::string::npos) end = expr.size();
      ++start;
    } else {
      while (end < expr.size() && is_name_char(expr[end])) ++end;
    }
    const std::string name = expr.substr(start, end - start);
    const size_t next = braced ? std::min(end + 1, expr.size()) : end;
    const auto it = values.find(name);
    if (name.empty()) {
      out.push_back('$');  // not a variable: a regular expression's end, say
      i = start;
      continue;
    }
    if (it != values.end()) {
      out.append(it->second);
    } else {
      if (unknown != nullptr) unknown->insert(name);
      out.append(expr, i, next - i);
    }
    i = next;
  }
  return out;
}

}  // namespace shingled::testing

#endif  // SHINGLED_TESTS_OPS_GRAFANA_DASHBOARD_H_
