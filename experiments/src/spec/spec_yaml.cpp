// YAML <-> experiment_spec through the field table. yaml-cpp gives each node its mark
// (0-based line), so every error names file:line and the field path.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

std::string where(const std::string& source, const YAML::Node& node) {
  return source + ":" + std::to_string(node.Mark().line + 1);
}

// A leaf's text: a scalar, or a sequence of scalars joined with commas (host lists).
result<std::string> leaf_text(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsSequence()) {
    std::string out;
    for (const auto& item : node) {
      if (!item.IsScalar()) return bad("expects a list of values, not nested lists or mappings");
      out += (out.empty() ? "" : ",") + item.Scalar();
    }
    return out.empty() ? std::string("[]") : out;
  }
  if (node.IsNull()) return bad("has no value");
  return bad("expects a value, not a mapping");
}

status apply_map(experiment_spec& spec, const YAML::Node& map, const std::string& prefix, const std::string& source) {
  // YAML forbids a key twice in one mapping; yaml-cpp keeps both, and applying both would
  // merge two sections or let the later value win unseen.
  std::map<std::string, int> seen;  // key -> 1-based line
  for (const auto& kv : map) {
    const YAML::Node& key = kv.first;
    const YAML::Node& value = kv.second;
    if (!key.IsScalar()) return bad(where(source, key) + ": keys must be plain names");
    const std::string path = prefix.empty() ? key.Scalar() : prefix + "." + key.Scalar();
    if (const auto [it, fresh] = seen.emplace(key.Scalar(), key.Mark().line + 1); !fresh)
      return bad(where(source, key) + ": " + path + ": duplicate key (first at line " + std::to_string(it->second) +
                 ")");
    // The tuner's section (tuning_spec.hpp) is read by load_tuning and the fabric
    // comparison's (compare.hpp) by rocelab compare; a run ignores both.
    if (path == "tuning" || path == "compare") continue;
    const std::string origin = where(source, key);
    if (find_field(path) != nullptr) {
      auto text = leaf_text(value);
      if (!text) return bad(origin + ": " + path + ": " + text.error().message());
      ROCELAB_RETURN_IF_ERROR(set_field(spec, path, *text, origin).with_context(origin));
      continue;
    }
    if (is_section(path)) {
      if (!value.IsMap() && !value.IsNull())
        return bad(origin + ": " + path + " is a section: expected a mapping of its keys");
      spec.origins[path] = origin;
      // A workload section that is present is on, unless it says enabled: false.
      if (path.rfind("workload.", 0) == 0 && find_field(path + ".enabled") != nullptr &&
          spec.origins.find(path + ".enabled") == spec.origins.end())
        (void)find_field(path + ".enabled")->set(spec, "true");
      if (value.IsMap()) ROCELAB_RETURN_IF_ERROR(apply_map(spec, value, path, source));
      continue;
    }
    std::string msg = origin + ": unknown key " + path;
    if (auto near = nearest_path(path); !near.empty()) msg += " (did you mean " + near + "?)";
    return bad(msg);
  }
  return status::success();
}

// Whether a field belongs to the spec's fabric: fabric.uec.* only to a UEC fabric, DCQCN
// and PFC never to one. The others are errors naming the field when a spec sets them
// (build.cpp), so a written spec leaves them out and loads again.
bool applies_to_fabric(const std::string& path, const experiment_spec& spec) {
  const bool uec = spec.fabric.link == "uec";
  if (path.rfind("fabric.uec.", 0) == 0) return uec;
  if (path.rfind("nic.dcqcn.", 0) == 0 || path.rfind("switch.pfc.", 0) == 0) return !uec;
  return true;
}

// Emits the fields under `prefix` as nested maps, in table order.
void emit_section(YAML::Emitter& out, const experiment_spec& spec, const std::string& prefix) {
  std::vector<std::string> done;
  for (const field_info& f : field_table()) {
    if (!prefix.empty() && f.path.rfind(prefix + ".", 0) != 0) continue;
    if (!applies_to_fabric(f.path, spec)) continue;
    const std::string rest = prefix.empty() ? f.path : f.path.substr(prefix.size() + 1);
    const auto dot = rest.find('.');
    const std::string key = rest.substr(0, dot);
    if (std::find(done.begin(), done.end(), key) != done.end()) continue;
    done.push_back(key);
    out << YAML::Key << key;
    if (dot == std::string::npos) {
      const std::string text = f.get(spec);
      if (f.type == field_type::host_list) {
        out << YAML::Value << YAML::Flow << YAML::BeginSeq;
        std::stringstream items(text);
        for (std::string item; std::getline(items, item, ',');) out << item;
        out << YAML::EndSeq;
      } else {
        out << YAML::Value << text;
      }
    } else {
      out << YAML::Value << YAML::BeginMap;
      emit_section(out, spec, prefix.empty() ? key : prefix + "." + key);
      out << YAML::EndMap;
    }
  }
}

}  // namespace

result<experiment_spec> load_spec(std::string_view yaml_text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return status(error_code::malformed_input,
                  source_name + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  experiment_spec spec;
  spec.source_file = source_name;
  if (root.IsNull()) return spec;
  if (!root.IsMap()) return bad(where(source_name, root) + ": a spec is a mapping of keys (backend, topology, ...)");
  ROCELAB_RETURN_IF_ERROR(apply_map(spec, root, "", source_name));
  return spec;
}

result<experiment_spec> load_spec_file(const std::string& path) {
  auto text = read_bounded_file(path, max_spec_file_bytes, "spec");
  if (!text) return text.error();
  auto spec = load_spec(*text, path);
  if (!spec) return spec;
  spec->base_dir = std::filesystem::path(path).parent_path().string();
  return spec;
}

std::string to_yaml(const experiment_spec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  emit_section(out, spec, "");
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace rocelab::experiments
