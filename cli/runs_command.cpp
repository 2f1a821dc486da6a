// rocelab runs [--db rocelab.db] [--json]: lists the runs in a run store (read-only, so it
// works while a run is being written), newest last, with their status.
#include <cstdio>
#include <ctime>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::cli {
namespace {

struct runs_args {
  std::string db = "rocelab.db";
  bool json = false;
};

std::string format_utc(std::int64_t unix_ns) {
  if (unix_ns <= 0) return "-";
  const std::time_t seconds = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

nlohmann::json to_json(const store::run_info& r) {
  nlohmann::json j = {{"id", r.id},
                      {"name", r.name},
                      {"backend", r.backend},
                      {"seed", r.seed},
                      {"status", store::to_string(r.status)},
                      {"error", r.error},
                      {"started_unix_ns", r.started_unix_ns},
                      {"ended_unix_ns", r.ended_unix_ns},
                      {"parameters", r.parameters}};
  j["sweep"] = r.sweep ? nlohmann::json(*r.sweep) : nlohmann::json(nullptr);
  return j;
}

std::function<int()> setup_runs(CLI::App& app) {
  auto a = std::make_shared<runs_args>();
  app.description("List the runs in a run store (SQLite) with their status: running, completed, partial, "
                  "interrupted, failed");
  app.add_option("--db", a->db, "The run store")->capture_default_str();
  app.add_flag("--json", a->json, "Print a JSON array");
  return [a] {
    auto store = store::run_store::open(a->db, store::open_mode::read_only);
    if (!store.ok()) {
      std::cerr << "rocelab runs: " << store.error().message() << "\n";
      return 1;
    }
    auto runs = store->runs();
    if (!runs.ok()) {
      std::cerr << "rocelab runs: " << runs.error().message() << "\n";
      return 1;
    }
    if (a->json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& r : *runs) out.push_back(to_json(r));
      std::cout << out.dump(2) << "\n";
      return 0;
    }
    std::printf("%6s  %-11s  %-8s  %-19s  %-19s  %s\n", "id", "status", "backend", "started (UTC)", "ended (UTC)",
                "name");
    for (const auto& r : *runs) {
      std::printf("%6lld  %-11s  %-8s  %-19s  %-19s  %s%s%s\n", static_cast<long long>(r.id), store::to_string(r.status),
                  r.backend.c_str(), format_utc(r.started_unix_ns).c_str(), format_utc(r.ended_unix_ns).c_str(),
                  r.name.c_str(), r.error.empty() ? "" : "  -- ", r.error.c_str());
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(runs, setup_runs);

}  // namespace rocelab::cli
