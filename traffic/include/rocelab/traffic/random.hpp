#pragma once
// The workloads' random numbers, identical on every platform for a seed.
//
// std::mt19937_64's output sequence is fixed by the C++ standard, but the standard
// distributions (uniform_real_distribution, exponential_distribution) are not: libstdc++
// and libc++ give different numbers. So the distributions are written here, and a
// workload's "same seed, same messages" holds across compilers.

#include <cmath>
#include <cstdint>
#include <random>

namespace rocelab::traffic {

class random_stream {
 public:
  // `stream` separates the draws of workloads sharing a run seed (incast and background
  // in one run do not see the same numbers).
  random_stream(std::uint64_t seed, std::uint64_t stream) : engine_(mix(seed ^ mix(stream + 0x9e3779b97f4a7c15ULL))) {}

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); n > 0. Rejection keeps it unbiased.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return x % n;
  }
  // Exponential with the given mean (inverse transform).
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

 private:
  // splitmix64 finalizer (Steele et al., "Fast splittable pseudorandom number generators",
  // OOPSLA 2014): spreads nearby seeds (1, 2, 3 ...) over the engine's state.
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::mt19937_64 engine_;
};

}  // namespace rocelab::traffic
