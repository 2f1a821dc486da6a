// The SONiC driver's session with a switch: ssh, reading config_db, apply with its
// snapshot, restore (sonic_switch_driver.hpp).
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <algorithm>

#include "rocelab/fabric/drivers/process_runner.hpp"
#include "sonic_config_db_keys.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

using namespace sonic_keys;

namespace {

// The sonic-db-cli writes that put a table's snapshotted fields back: a key that did not
// exist is deleted, a field it did not have deleted, any other field set to its old value.
void restore_in_place(const std::string& table, const json& now_table, const std::map<std::string, json>& snapshot,
                      std::vector<std::vector<std::string>>& writes) {
  for (const auto& [key, snap] : snapshot) {
    const std::string redis_key = shell_quoted(table + "|" + key);
    const json& previous = snap["previous"];
    const bool key_now = now_table.contains(key);
    if (previous.is_null()) {
      if (key_now) writes.push_back(db_command({"DEL", redis_key}));
      continue;
    }
    const json none = json::object();
    const json& now = key_now ? now_table[key] : none;
    for (const auto& f : snap["fields"]) {
      const std::string field = f.get<std::string>();
      const bool had = previous.contains(field), has = now.contains(field);
      if (had && has && previous[field] == now[field]) continue;
      if (had)
        writes.push_back(db_command({"HSET", redis_key, shell_quoted(field), shell_quoted(previous[field].get<std::string>())}));
      else if (has)
        writes.push_back(db_command({"HDEL", redis_key, shell_quoted(field)}));
    }
  }
}

}  // namespace

result<std::unique_ptr<sonic_switch_driver>> sonic_switch_driver::open(sonic_options options) {
  if (options.host.empty() || options.host.starts_with("-"))
    return status(error_code::invalid_argument, "SONiC driver: '" + options.host + "' is not an ssh destination");
  for (const auto& p : options.ports)
    if (!plain_name(p)) return status(error_code::invalid_argument, "SONiC driver: port '" + p + "' is not a plain name");
  if (!plain_name(options.lossless_pool))
    return status(error_code::invalid_argument, "SONiC driver: pool '" + options.lossless_pool + "' is not a plain name");
  return std::unique_ptr<sonic_switch_driver>(new sonic_switch_driver(std::move(options)));
}

result<std::string> sonic_switch_driver::remote(const std::vector<std::string>& command, const std::string& input) {
  std::vector<std::string> argv{options_.ssh_program, "-o", "BatchMode=yes"};
  argv.insert(argv.end(), options_.ssh_options.begin(), options_.ssh_options.end());
  argv.push_back("--");
  argv.push_back(options_.host);
  argv.insert(argv.end(), command.begin(), command.end());
  std::string what;
  for (const auto& w : command) what += (what.empty() ? "" : " ") + w;
  auto r = run_process(argv, input, options_.timeout);
  if (!r.ok()) return r.error().with_context("SONiC " + options_.host + ": " + what);
  if (r->exit_code != 0) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return status(error_code::io_error, "SONiC " + options_.host + ": " + what + " exited with " +
                                            std::to_string(r->exit_code) + ": " + err);
  }
  return std::move(r->out);
}

result<json> sonic_switch_driver::read_config_db() {
  auto out = remote({"sudo", "sonic-cfggen", "-d", "--print-data"});
  if (!out.ok()) return out.error();
  auto j = json::parse(*out, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return status(error_code::malformed_input, "SONiC " + options_.host + ": sonic-cfggen printed no JSON object");
  ROCELAB_RETURN_IF_ERROR(check_config_db_shape(j, "SONiC " + options_.host + " config_db"));
  return j;
}

status sonic_switch_driver::apply_patch(const json& patch, const std::string& context) {
  if (patch.empty()) return status::success();
  auto out = remote({"sudo", "config", "apply-patch", "/dev/stdin"}, patch.dump(2) + "\n");
  if (!out.ok()) return out.error().with_context(context);
  return status::success();
}

status sonic_switch_driver::apply(const switch_settings& settings) {
  const std::string context = "applying switch settings to SONiC " + options_.host;
  ROCELAB_RETURN_IF_ERROR(validate(settings).with_context(context));
  ROCELAB_RETURN_IF_ERROR(check_names(settings).with_context(context));
  auto running = read_config_db();
  if (!running.ok()) return running.error().with_context(context);
  std::vector<std::string> buffer_ports;
  for (const auto& b : settings.buffers) buffer_ports.push_back(b.port);
  auto generated = read_generated_profiles(*running, buffer_ports);
  if (!generated.ok()) return generated.error().with_context(context);
  sonic_options options = options_;
  if (!options.version && options.check_gcu_hwsku && (!settings.ecn.empty() || !settings.buffers.empty())) {
    auto version = read_version();
    if (!version.ok()) return version.error().with_context(context);
    options.version = *version;
  }
  auto desired = to_config_db_changes(settings, *running, options, *generated);
  if (!desired.ok()) return desired.error().with_context(context);
  // Snapshot every key about to change, once, before writing anything: its previous entry
  // (null: absent) and the fields written, which are all that restore() puts back.
  for (const auto& [table, keys] : desired->items()) {
    const bool table_exists = running->contains(table) && (*running)[table].is_object() && !(*running)[table].empty();
    if (!table_exists && !snapshot_.contains(table) &&
        std::find(tables_created_.begin(), tables_created_.end(), table) == tables_created_.end())
      tables_created_.push_back(table);
    for (const auto& [key, entry] : keys.items()) {
      auto& t = snapshot_[table];
      if (!t.contains(key))
        t[key] = {{"previous", table_exists && (*running)[table].contains(key) ? (*running)[table][key] : json(nullptr)},
                  {"fields", json::array()}};
      json& fields = t[key]["fields"];
      if (entry.is_object())
        for (const auto& [field, v] : entry.items())
          if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
    }
  }
  // The patch first: the QUEUE bindings written after it name a profile already there.
  ROCELAB_RETURN_IF_ERROR(apply_patch(make_apply_patch(*running, *desired), context));
  return write_db(make_db_writes(*running, *desired), context);
}

status sonic_switch_driver::write_db(const std::vector<std::vector<std::string>>& commands, const std::string& context) {
  if (commands.empty()) return status::success();
  std::vector<std::string> command;
  for (const auto& c : commands) {
    if (!command.empty()) command.push_back("&&");
    command.insert(command.end(), c.begin(), c.end());
  }
  auto out = remote(command);
  if (!out.ok()) return out.error().with_context(context + " (config_db fields written in place, no port flap)");
  return status::success();
}

result<sonic_version> sonic_switch_driver::read_version() {
  auto out = remote({"cat", "/etc/sonic/sonic_version.yml"});
  if (!out.ok()) return out.error().with_context("reading the SONiC version");
  auto v = parse_sonic_version(*out);
  if (!v.ok()) return v.error().with_context("SONiC " + options_.host);
  return v;
}

status sonic_switch_driver::restore() {
  const std::string context = "restoring SONiC " + options_.host;
  if (snapshot_.empty()) return status::success();
  auto running = read_config_db();
  if (!running.ok()) return running.error().with_context(context);
  json patch = json::array();
  std::vector<std::vector<std::string>> writes;  // tables apply-patch would flap ports for
  json tables = json::object();
  for (const auto& [table, keys] : snapshot_) tables[table] = true;
  // Referencing entries first (QUEUE before its WRED_PROFILE), so nothing dangles.
  for (const auto& table : tables_in_order(tables, true)) {
    const bool created = std::find(tables_created_.begin(), tables_created_.end(), table) != tables_created_.end();
    const bool exists_now = running->contains(table) && (*running)[table].is_object();
    if (apply_patch_flaps_ports(table)) {
      restore_in_place(table, exists_now ? (*running)[table] : json::object(), snapshot_.at(table), writes);
      continue;
    }
    if (created) {
      // The table did not exist: remove it whole unless someone else added keys since.
      bool only_ours = exists_now;
      if (exists_now)
        for (const auto& [key, v] : (*running)[table].items())
          if (!snapshot_.at(table).contains(key)) only_ours = false;
      if (only_ours) {
        patch.push_back({{"op", "remove"}, {"path", ptr(table)}});
        continue;
      }
    }
    for (const auto& [key, snap] : snapshot_.at(table)) {
      const json& previous = snap["previous"];
      const bool key_now = exists_now && (*running)[table].contains(key);
      if (previous.is_null()) {
        if (key_now) patch.push_back({{"op", "remove"}, {"path", ptr(table, key)}});
      } else if (!exists_now) {
        patch.push_back({{"op", "add"}, {"path", ptr(table)}, {"value", json{{key, previous}}}});
      } else if (!key_now) {
        patch.push_back({{"op", "add"}, {"path", ptr(table, key)}, {"value", previous}});
      } else {
        // Field by field, only the fields apply() wrote: a key that existed is never
        // removed (a BUFFER_PG range key, a shared profile), and the updater's field
        // validators see the same replace ops as at apply.
        const json& now = (*running)[table][key];
        for (const auto& f : snap["fields"]) {
          const std::string field = f.get<std::string>();
          const bool had = previous.contains(field), has = now.contains(field);
          if (had && has && previous[field] == now[field]) continue;
          if (had) patch.push_back({{"op", has ? "replace" : "add"}, {"path", ptr(table, key, field)}, {"value", previous[field]}});
          else if (has) patch.push_back({{"op", "remove"}, {"path", ptr(table, key, field)}});
        }
      }
    }
  }
  // The in-place writes first: a QUEUE binding goes back before a profile it named goes.
  ROCELAB_RETURN_IF_ERROR(write_db(writes, context));
  ROCELAB_RETURN_IF_ERROR(apply_patch(patch, context));
  snapshot_.clear();
  tables_created_.clear();
  return status::success();
}

result<switch_settings> sonic_switch_driver::read_settings(const std::vector<std::string>& ports) {
  auto db = read_config_db();
  if (!db.ok()) return db.error();
  auto generated = read_generated_profiles(*db, ports);
  if (!generated.ok()) return generated.error();
  return settings_from_config_db(*db, ports, *generated);
}

result<json> sonic_switch_driver::read_generated_profiles(const json& running, const std::vector<std::string>& ports) {
  const auto null_pgs = null_profile_buffer_pgs(running, ports);
  if (null_pgs.empty() || buffer_model(running) != "dynamic") return json::object();
  const std::string context = "reading the dynamic buffer model's generated profiles (APPL_DB)";
  std::vector<std::string> pg_keys;
  for (const auto& key : null_pgs) {
    // Keys go into the remote command: port names are plain, the PG part digits and '-'.
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-|./") != std::string::npos)
      return status(error_code::malformed_input, context + ": BUFFER_PG key '" + key + "' is not a plain name");
    pg_keys.push_back("BUFFER_PG_TABLE:" + appl_db_key(key));
  }
  auto pgs = hgetall(pg_keys, "APPL_DB");
  if (!pgs.ok()) return pgs.error().with_context(context);
  std::map<std::string, std::map<std::string, std::string>> appl_db;
  std::vector<std::string> profile_keys;
  for (std::size_t i = 0; i < pg_keys.size(); ++i) {
    appl_db[pg_keys[i]] = (*pgs)[i];
    const json names = generated_buffer_profiles({null_pgs[i]}, appl_db);
    const std::string name = names[null_pgs[i]].value("name", "");
    if (!name.empty() && plain_name(name)) profile_keys.push_back("BUFFER_PROFILE_TABLE:" + name);
  }
  if (!profile_keys.empty()) {
    auto profiles = hgetall(profile_keys, "APPL_DB");
    if (!profiles.ok()) return profiles.error().with_context(context);
    for (std::size_t i = 0; i < profile_keys.size(); ++i) appl_db[profile_keys[i]] = (*profiles)[i];
  }
  return generated_buffer_profiles(null_pgs, appl_db);
}

}  // namespace rocelab::fabric::drivers
