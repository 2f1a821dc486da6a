// The `tuning:` section (tuning_spec.hpp): YAML with marks for file:line errors; bounds
// parsed by the tuned field's own parser, so units and ranges mean what they mean in a run.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"

namespace rocelab::experiments {
namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

std::string where(const std::string& source, const YAML::Node& node) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

result<double> plain_number(std::string_view text) {
  try {
    std::size_t used = 0;
    const std::string t(text);
    const double v = std::stod(t, &used);
    if (used != t.size() || !std::isfinite(v)) throw std::invalid_argument(t);
    return v;
  } catch (const std::exception&) {
    return bad("'" + std::string(text) + "' is not a number");
  }
}

result<std::uint64_t> whole(const YAML::Node& node, const std::string& source, const std::string& key) {
  auto v = node.IsScalar() ? plain_number(node.Scalar()) : result<double>(bad("expects a number"));
  if (!v || *v < 0 || *v != std::floor(*v)) return bad(where(source, node) + ": tuning." + key + ": expects a whole number");
  return static_cast<std::uint64_t>(*v);
}

result<bool> boolean(const YAML::Node& node, const std::string& source, const std::string& key) {
  if (node.IsScalar()) {
    const std::string& t = node.Scalar();
    if (t == "true" || t == "True") return true;
    if (t == "false" || t == "False") return false;
  }
  return bad(where(source, node) + ": " + key + ": expects true or false");
}

status unknown_key(const std::string& source, const YAML::Node& key, const std::string& section,
                   std::initializer_list<const char*> valid) {
  std::string names;
  for (const char* v : valid) names += std::string(names.empty() ? "" : ", ") + v;
  return bad(where(source, key) + ": unknown key " + section + "." + key.Scalar() + " (valid: " + names + ")");
}

result<tuning_parameter> parse_parameter(const YAML::Node& node, const std::string& source, std::size_t i) {
  const std::string ctx = "tuning.parameters[" + std::to_string(i) + "]";
  if (!node.IsMap()) return bad(where(source, node) + ": " + ctx + ": expects a mapping {path, min, max, ...}");
  tuning_parameter p;
  std::string min_text, max_text;
  YAML::Node min_node, max_node;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key != "log" && key != "integer" && !v.IsScalar())
      return bad(where(source, kv.first) + ": " + ctx + "." + key + ": expects a value");
    if (key == "path") {
      p.path = v.Scalar();
    } else if (key == "min") {
      min_text = v.Scalar();
      min_node = v;
    } else if (key == "max") {
      max_text = v.Scalar();
      max_node = v;
    } else if (key == "log") {
      auto b = boolean(v, source, ctx + ".log");
      if (!b) return b.error();
      p.log = *b;
    } else if (key == "integer") {
      auto b = boolean(v, source, ctx + ".integer");
      if (!b) return b.error();
      p.integer = *b;
    } else if (key == "at_least") {
      p.at_least = v.Scalar();
    } else if (key == "grid_points") {
      auto n = whole(v, source, "parameters.grid_points");
      if (!n) return n.error();
      p.grid_points = static_cast<std::uint32_t>(*n);
    } else {
      return unknown_key(source, kv.first, ctx, {"path", "min", "max", "log", "integer", "at_least", "grid_points"});
    }
  }
  if (p.path.empty()) return bad(where(source, node) + ": " + ctx + ": needs a path (a spec field)");
  const field_info* f = find_field(p.path);
  if (f == nullptr) {
    std::string msg = where(source, node) + ": " + ctx + ": unknown spec field " + p.path;
    if (auto near = nearest_path(p.path); !near.empty()) msg += " (did you mean " + near + "?)";
    return bad(msg);
  }
  if (f->type == field_type::boolean || f->type == field_type::text || f->type == field_type::choice ||
      f->type == field_type::host_list)
    return bad(where(source, node) + ": " + ctx + ": " + p.path + " is not numeric; only numeric fields are tuned");
  if (min_text.empty() || max_text.empty()) return bad(where(source, node) + ": " + ctx + ": needs min and max");
  auto lo = field_number(p.path, min_text);
  if (!lo) return bad(where(source, min_node) + ": " + ctx + ".min: " + lo.error().message());
  auto hi = field_number(p.path, max_text);
  if (!hi) return bad(where(source, max_node) + ": " + ctx + ".max: " + hi.error().message());
  p.min = *lo;
  p.max = *hi;
  if (integer_field(p.path)) p.integer = true;
  return p;
}

result<objective_term> parse_term(const YAML::Node& node, const std::string& source) {
  if (!node.IsMap()) return bad(where(source, node) + ": tuning.objective: expects {metric, weight} entries");
  objective_term t;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (key == "metric") {
      t.metric = kv.second.Scalar();
    } else if (key == "weight") {
      auto w = plain_number(kv.second.Scalar());
      if (!w) return bad(where(source, kv.second) + ": tuning.objective.weight: " + w.error().message());
      t.weight = *w;
    } else {
      return unknown_key(source, kv.first, "tuning.objective", {"metric", "weight"});
    }
  }
  if (auto st = check_metric(t.metric); !st.ok()) return bad(where(source, node) + ": tuning.objective: " + st.message());
  return t;
}

result<constraint_bound> parse_constraint(const YAML::Node& node, const std::string& source) {
  if (!node.IsMap()) return bad(where(source, node) + ": tuning.constraints: expects {metric, min|max} entries");
  constraint_bound c;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (key == "metric") {
      c.metric = kv.second.Scalar();
    } else if (key == "min" || key == "max") {
      auto v = plain_number(kv.second.Scalar());
      if (!v) return bad(where(source, kv.second) + ": tuning.constraints." + key + ": " + v.error().message());
      (key == "min" ? c.min : c.max) = *v;
    } else {
      return unknown_key(source, kv.first, "tuning.constraints", {"metric", "min", "max"});
    }
  }
  if (auto st = check_metric(c.metric); !st.ok()) return bad(where(source, node) + ": tuning.constraints: " + st.message());
  if (!c.min && !c.max) return bad(where(source, node) + ": tuning.constraints: " + c.metric + " needs min or max");
  return c;
}

}  // namespace

bool integer_field(std::string_view path) {
  const field_info* f = find_field(path);
  return f != nullptr && (f->type == field_type::integer || f->type == field_type::size || f->type == field_type::duration);
}

result<double> field_number(std::string_view path, std::string_view text) {
  const field_info* f = find_field(path);
  if (f == nullptr) return bad("unknown spec field " + std::string(path));
  experiment_spec scratch;
  ROCELAB_RETURN_IF_ERROR(f->set(scratch, text));
  const std::string back = f->get(scratch);
  switch (f->type) {
    case field_type::size: {
      auto v = parse_size_bytes(back);
      if (!v) return v.error();
      return static_cast<double>(*v);
    }
    case field_type::duration: {
      auto v = parse_duration_ns(back);
      if (!v) return v.error();
      return static_cast<double>(*v);
    }
    default: return plain_number(back);
  }
}

std::string field_text(std::string_view path, double value) {
  if (integer_field(path)) return std::to_string(std::llround(value));  // bytes, ns or the knob's unit
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}

result<experiment_spec> apply_trial(const experiment_spec& base, const tuning_settings& settings,
                                    std::span<const double> values, std::map<std::string, std::string>* applied) {
  experiment_spec spec = base;
  const std::vector<double> v = applied_values(settings, values);
  for (std::size_t i = 0; i < settings.parameters.size(); ++i) {
    const std::string& path = settings.parameters[i].path;
    const std::string text = field_text(path, v[i]);
    if (auto st = set_field(spec, path, text, "tuning"); !st.ok())
      return st.with_context("tuning sets " + path + "=" + text);
    if (applied) (*applied)[path] = text;
  }
  ROCELAB_RETURN_IF_ERROR(validate(spec));
  return spec;
}

result<tuning_settings> load_tuning(std::string_view yaml_text, const std::string& source,
                                    const experiment_spec& spec) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return status(error_code::malformed_input, source + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  const YAML::Node section = root.IsMap() ? root["tuning"] : YAML::Node();
  if (!section || !section.IsMap()) return bad(source + ": no tuning: section (see examples/tune-incast.yaml)");
  tuning_settings s;
  s.name = spec.name;
  for (const auto& kv : section) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "name") {
      s.name = v.Scalar();
    } else if (key == "method") {
      auto m = parse_tuning_method(v.Scalar());
      if (!m) return bad(where(source, v) + ": tuning.method: " + m.error().message());
      s.method = *m;
    } else if (key == "budget" || key == "parallelism" || key == "seed" || key == "initial_points" ||
               key == "seeds") {
      auto n = whole(v, source, key);
      if (!n) return n.error();
      if (key == "budget") s.budget = static_cast<std::uint32_t>(*n);
      if (key == "parallelism") s.parallelism = static_cast<std::uint32_t>(*n);
      if (key == "seed") s.seed = *n;
      if (key == "initial_points") s.initial_points = static_cast<std::uint32_t>(*n);
      if (key == "seeds") {
        if (*n == 0 || *n > 1000) return bad(where(source, v) + ": tuning.seeds: expects 1 to 1000 common seeds");
        s.seeds = static_cast<std::uint32_t>(*n);
      }
    } else if (key == "parameters") {
      if (!v.IsSequence()) return bad(where(source, v) + ": tuning.parameters: expects a list");
      for (std::size_t i = 0; i < v.size(); ++i) {
        auto p = parse_parameter(v[i], source, i);
        if (!p) return p.error();
        s.parameters.push_back(std::move(*p));
      }
    } else if (key == "objective") {
      if (!v.IsSequence()) return bad(where(source, v) + ": tuning.objective: expects a list of {metric, weight}");
      for (const auto& item : v) {
        auto t = parse_term(item, source);
        if (!t) return t.error();
        s.objective.terms.push_back(std::move(*t));
      }
    } else if (key == "constraints") {
      if (!v.IsSequence()) return bad(where(source, v) + ": tuning.constraints: expects a list of {metric, min|max}");
      for (const auto& item : v) {
        auto c = parse_constraint(item, source);
        if (!c) return c.error();
        s.objective.constraints.push_back(std::move(*c));
      }
    } else if (key == "require_complete") {
      auto b = boolean(v, source, "tuning.require_complete");
      if (!b) return b.error();
      s.objective.require_complete = *b;
    } else {
      return unknown_key(source, kv.first, "tuning",
                         {"name", "method", "budget", "parallelism", "seed", "seeds", "initial_points", "parameters",
                          "objective", "constraints", "require_complete"});
    }
  }
  if (s.seeds == 0) s.seeds = std::max(default_search_seeds, spec.repeats);
  if (auto st = validate(s); !st.ok()) return bad(where(source, section) + ": " + st.message());
  return s;
}

result<tuning_settings> load_tuning_file(const std::string& path, const experiment_spec& spec) {
  auto text = read_bounded_file(path, max_spec_file_bytes, "spec");
  if (!text) return text.error();
  return load_tuning(*text, path, spec);
}

}  // namespace rocelab::experiments
