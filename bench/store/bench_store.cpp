// bench_store [--flows N] [--repeats R] [--dir D]: times run_store::append of N flow
// records in one call (one transaction, prepared statements) and run_store::load of them,
// on a fresh file in D each repeat; prints best and median.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "rocelab/store/run_store.hpp"

namespace {

std::vector<rocelab::flow_record> make_flows(std::size_t n) {
  std::vector<rocelab::flow_record> flows(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto& f = flows[i];
    f.src = static_cast<std::uint32_t>(i % 128);
    f.dst = static_cast<std::uint32_t>((i * 7 + 1) % 128);
    f.qp = static_cast<std::uint32_t>(i);
    f.priority = 3;
    f.kind = rocelab::workload_kind::background;
    f.bytes = 1000 + (i * 7919) % 1'000'000;
    f.start_ns = static_cast<std::int64_t>(i) * 1000;
    f.end_ns = f.start_ns + 20'000 + static_cast<std::int64_t>(i % 977);
    f.fct_ns = f.end_ns - f.start_ns;
    f.ideal_fct_ns = 15'000;
    f.retransmits = i % 13 == 0;
    f.ce_marked = i % 5;
    f.cnps = i % 3;
    f.tag = i;
  }
  return flows;
}

// CPU time of this thread: on a shared machine the wall clock also counts time spent
// waiting for a core, so both are reported.
double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1'000'000;
  int repeats = 5;
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--flows") == 0) n = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
  }
  rocelab::run_records records;
  records.backend = "twin";
  for (int h = 0; h < 128; ++h) records.hosts.push_back("h" + std::to_string(h + 1));
  records.flows = make_flows(n);

  std::vector<double> append_s;
  std::vector<double> load_s;
  std::vector<double> append_cpu_s;
  std::uintmax_t file_bytes = 0;
  for (int r = 0; r < repeats; ++r) {
    const std::string path = dir + "/bench_store_" + std::to_string(::getpid()) + ".db";
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    {
      auto store = rocelab::store::run_store::open(path);
      if (!store.ok()) {
        std::fprintf(stderr, "bench_store: %s\n", store.error().message().c_str());
        return 1;
      }
      auto id = store->begin_run({"bench", "twin", 1, "", {}, std::nullopt});
      if (!id.ok()) return 1;
      const double c0 = thread_cpu_s();
      const auto t0 = std::chrono::steady_clock::now();
      if (auto st = store->append(*id, records); !st.ok()) {
        std::fprintf(stderr, "bench_store: %s\n", st.message().c_str());
        return 1;
      }
      const auto t1 = std::chrono::steady_clock::now();
      append_cpu_s.push_back(thread_cpu_s() - c0);
      auto loaded = store->load(*id);
      const auto t2 = std::chrono::steady_clock::now();
      if (!loaded.ok() || loaded->flows.size() != n) {
        std::fprintf(stderr, "bench_store: load returned the wrong number of flows\n");
        return 1;
      }
      append_s.push_back(std::chrono::duration<double>(t1 - t0).count());
      load_s.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
    file_bytes = std::filesystem::file_size(path);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }
  const double best_append = *std::min_element(append_s.begin(), append_s.end());
  const double best_load = *std::min_element(load_s.begin(), load_s.end());
  std::printf("flows %zu, repeats %d, file %.1f MB\n", n, repeats, static_cast<double>(file_bytes) / 1e6);
  std::printf("append: best %.3f s (%.2f M flows/s), median %.3f s\n", best_append, static_cast<double>(n) / best_append / 1e6,
              median(append_s));
  std::printf("append CPU time: best %.3f s (%.2f us per flow), median %.3f s\n",
              *std::min_element(append_cpu_s.begin(), append_cpu_s.end()),
              *std::min_element(append_cpu_s.begin(), append_cpu_s.end()) / static_cast<double>(n) * 1e6,
              median(append_cpu_s));
  std::printf("load:   best %.3f s (%.2f M flows/s), median %.3f s\n", best_load, static_cast<double>(n) / best_load / 1e6,
              median(load_s));
  return 0;
}
