#include "rocelab/agents/agent/settings_guard.hpp"

#include <fstream>
#include <sstream>

namespace rocelab::agents::agent {
namespace {

bool safe_word(const std::string& s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

result<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return status::from_errno("reading " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string v = ss.str();
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

status write_file(const std::string& path, const std::string& value) {
  // sysfs takes one write of the whole value; no O_TRUNC/temp-file dance there.
  std::ofstream out(path, std::ios::out);
  if (!out) return status::from_errno("opening " + path);
  out << value << "\n";
  out.flush();
  if (!out) return status::from_errno("writing " + value + " to " + path);
  return status::success();
}

}  // namespace

result<std::string> settings_guard::path_of(const std::string& driver, const controller::setting& s) const {
  if (driver != "mlx5")
    return status(error_code::unsupported, "settings driver '" + driver + "': this agent has mlx5 (sysfs ecn knobs)");
  if (!safe_word(s.device)) return status(error_code::invalid_argument, "device '" + s.device + "' is not an interface name");
  const auto slash = s.name.find('/');
  const std::string group = slash == std::string::npos ? "" : s.name.substr(0, slash);
  const std::string knob = slash == std::string::npos ? "" : s.name.substr(slash + 1);
  if ((group != "roce_np" && group != "roce_rp") || !safe_word(knob))
    return status(error_code::invalid_argument,
                  "setting '" + s.name + "': expected roce_np/<knob> or roce_rp/<knob> (mlx5 DCQCN knobs)");
  return sysfs_root_ + "/" + s.device + "/ecn/" + group + "/" + knob;
}

result<std::vector<controller::setting>> settings_guard::apply(const std::string& driver,
                                                               const std::vector<controller::setting>& settings) {
  std::vector<controller::setting> previous;
  const std::size_t mark = snapshots_.size();
  for (const auto& s : settings) {
    auto path = path_of(driver, s);
    status failure;
    if (path.ok()) {
      auto before = read_file(*path);
      if (before.ok()) {
        snapshots_.push_back({*path, *before});
        previous.push_back({s.device, s.name, *before});
        failure = write_file(*path, s.value);
      } else {
        failure = before.error();
      }
    } else {
      failure = path.error();
    }
    if (!failure.ok()) {
      // Undo this call's writes, newest first, and keep older snapshots.
      while (snapshots_.size() > mark) {
        (void)write_file(snapshots_.back().path, snapshots_.back().previous);
        snapshots_.pop_back();
      }
      return failure.with_context("applying " + s.name + "=" + s.value + " on " + s.device);
    }
  }
  return previous;
}

result<std::uint32_t> settings_guard::restore() {
  status first;
  std::uint32_t restored = 0;
  while (!snapshots_.empty()) {
    const auto& s = snapshots_.back();
    if (auto st = write_file(s.path, s.previous); st.ok())
      ++restored;
    else if (first.ok())
      first = st;
    snapshots_.pop_back();
  }
  if (!first.ok()) return first.with_context("restoring settings");
  return restored;
}

}  // namespace rocelab::agents::agent
