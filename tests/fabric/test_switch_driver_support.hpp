#pragma once
// Helpers for the switch driver tests: a temporary directory, the SONiC YANG models
// rendered as SONiC's build renders them, config_db JSON to YANG XML instance data, and
// yanglint (Debian's libyang2-tools) on it.

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"

namespace rocelab::fabric::drivers::testing {

namespace fs = std::filesystem;

// Each test's directory is named after its folder, so leftovers say whose they are.
class temp_dir : public rocelab::testing::temp_dir {
 public:
  temp_dir() : rocelab::testing::temp_dir("rocelab-switch") {}
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a command line built by the test itself (fixed words and temp paths), returning
// its exit status and putting its output in `out`.
inline int run_command(const std::string& command, std::string& out) {
  out.clear();
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int st = ::pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// tests/data/sonic-yang: the models as stored, plus the .yang.j2 templates rendered with
// yang_model_type "py" as src/sonic-yang-models/setup.py does (Debian's python3-jinja2).
inline fs::path render_sonic_yang(const temp_dir& dir) {
  const fs::path src = fs::path(ROCELAB_SOURCE_DIR) / "tests/data/sonic-yang";
  const fs::path out = dir.path() / "yang";
  fs::create_directories(out);
  for (const auto& e : fs::directory_iterator(src / "yang-models")) fs::copy_file(e.path(), out / e.path().filename());
  const std::string script =
      "import jinja2,glob,os,sys\n"
      "src,out=sys.argv[1],sys.argv[2]\n"
      "env=jinja2.Environment(loader=jinja2.FileSystemLoader(src),trim_blocks=True)\n"
      "for f in glob.glob(os.path.join(src,'*.yang.j2')):\n"
      "    b=os.path.basename(f)\n"
      "    open(os.path.join(out,b[:-3]),'w').write(env.get_template(b).render(yang_model_type='py'))\n";
  std::ofstream(dir.path() / "render.py") << script;
  std::string output;
  const int rc = run_command("/usr/bin/python3 " + (dir.path() / "render.py").string() + " " +
                                 (src / "yang-templates").string() + " " + out.string(),
                             output);
  if (rc != 0) throw std::runtime_error("rendering the SONiC YANG templates failed: " + output);
  return out;
}

// config_db table -> (YANG module, list name, key leaves in order). SONiC's sonic-yang-mgmt
// does this translation; these are the tables the driver writes and those they refer to.
struct table_map {
  const char* module;
  const char* list;
  std::vector<std::string> keys;
};
inline const std::map<std::string, table_map>& yang_tables() {
  static const std::map<std::string, table_map> m{
      {"PORT", {"sonic-port", "PORT_LIST", {"name"}}},
      {"BUFFER_POOL", {"sonic-buffer-pool", "BUFFER_POOL_LIST", {"name"}}},
      {"BUFFER_PROFILE", {"sonic-buffer-profile", "BUFFER_PROFILE_LIST", {"name"}}},
      {"BUFFER_PG", {"sonic-buffer-pg", "BUFFER_PG_LIST", {"port", "pg_num"}}},
      {"WRED_PROFILE", {"sonic-wred-profile", "WRED_PROFILE_LIST", {"name"}}},
      {"QUEUE", {"sonic-queue", "QUEUE_LIST", {"ifname", "qindex"}}},
      {"PORT_QOS_MAP", {"sonic-port-qos-map", "PORT_QOS_MAP_LIST", {"ifname"}}},
      {"MIRROR_SESSION", {"sonic-mirror-session", "MIRROR_SESSION_LIST", {"name"}}},
      // A list of maps, each a list of {dscp, tc}: to_yang_xml nests it.
      {"DSCP_TO_TC_MAP", {"sonic-dscp-tc-map", "DSCP_TO_TC_MAP_LIST", {"name"}}},
  };
  return m;
}

inline std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else o += c;
  }
  return o;
}

// config_db JSON -> YANG XML instance data (values are text in XML, so config_db's
// all-string values need no typing). Throws on a table it does not know.
inline std::string to_yang_xml(const nlohmann::json& db) {
  std::string xml;
  for (const auto& [table, keys] : db.items()) {
    if (table == "DEVICE_METADATA") {  // containers, not lists: DEVICE_METADATA/localhost/hwsku
      xml += "<sonic-device_metadata xmlns=\"http://github.com/sonic-net/sonic-device_metadata\"><DEVICE_METADATA>";
      for (const auto& [name, entry] : keys.items()) {
        xml += "<" + name + ">";
        for (const auto& [field, value] : entry.items())
          xml += "<" + field + ">" + xml_escape(value.get<std::string>()) + "</" + field + ">";
        xml += "</" + name + ">";
      }
      xml += "</DEVICE_METADATA></sonic-device_metadata>\n";
      continue;
    }
    const auto it = yang_tables().find(table);
    if (it == yang_tables().end()) throw std::runtime_error("no YANG mapping for table " + table);
    const auto& t = it->second;
    xml += "<" + std::string(t.module) + " xmlns=\"http://github.com/sonic-net/" + t.module + "\"><" + table + ">";
    for (const auto& [key, entry] : keys.items()) {
      xml += "<" + std::string(t.list) + ">";
      std::vector<std::string> parts;
      std::stringstream ks(key);
      for (std::string part; std::getline(ks, part, '|');) parts.push_back(part);
      for (std::size_t i = 0; i < t.keys.size() && i < parts.size(); ++i)
        xml += "<" + t.keys[i] + ">" + xml_escape(parts[i]) + "</" + t.keys[i] + ">";
      for (const auto& [field, value] : entry.items()) {
        if (table == "DSCP_TO_TC_MAP")
          xml += "<DSCP_TO_TC_MAP><dscp>" + field + "</dscp><tc>" + xml_escape(value.get<std::string>()) +
                 "</tc></DSCP_TO_TC_MAP>";
        else
          xml += "<" + field + ">" + xml_escape(value.get<std::string>()) + "</" + field + ">";
      }
      xml += "</" + std::string(t.list) + ">";
    }
    xml += "</" + table + "></" + std::string(t.module) + ">\n";
  }
  return xml;
}

// yanglint -t config over every rendered model; returns its exit status, output in `out`.
inline int yanglint(const fs::path& models, const fs::path& data, std::string& out) {
  std::string schemas;
  for (const auto& e : fs::directory_iterator(models)) schemas += " " + e.path().string();
  return run_command("yanglint -p " + models.string() + " -t config" + schemas + " " + data.string(), out);
}

}  // namespace rocelab::fabric::drivers::testing
