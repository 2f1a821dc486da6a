#pragma once
// What callers ask of a backend without running it, beside the backend seam
// (run/backend.hpp): is it simulated, does it need a lab, does it write a capture file.
// Callers ask these and never compare a backend's name, so a new backend is a row of
// known_backends here and a registration in a backend_registry. Header-only and pure, so
// the spec reader (rocelab::experiments_spec) asks it too.

#include <string>
#include <string_view>
#include <vector>

namespace rocelab::experiments {

// The backends a spec may name. `unknown`: a name none of them has (a spec not validated
// yet, records written elsewhere).
enum class backend_kind { twin, virtual_lab, lab, unknown };

struct backend_traits {
  backend_kind kind = backend_kind::unknown;
  std::string_view name;  // the spec's `backend` value; empty for unknown
  // Runs in virtual time (the fabric model, no wire): its records carry the simulated
  // time and no capture, its topology is the spec's own, sweeps run on it and a
  // calibration file feeds it.
  bool simulated = false;
  // Runs inside the process that asks for it (the controller, a worker, the CLI) with no
  // lab and no agents; so the controller's workers can run it too.
  bool runs_in_controller = false;
  // Runs on a hardware lab: needs the controller's inventory (hosts with their NICs'
  // RoCE addresses, the switch) and runs at its links' own speed (no scaling).
  bool needs_lab = false;
  // Captures the switch's mirror into a file that the run's directory and report link.
  bool takes_capture_file = false;
};

// Every backend a spec may name, in the order the spec reference lists them.
inline constexpr backend_traits known_backends[] = {
    {.kind = backend_kind::twin, .name = "twin", .simulated = true, .runs_in_controller = true},
    {.kind = backend_kind::virtual_lab, .name = "virtual", .takes_capture_file = true},
    {.kind = backend_kind::lab, .name = "lab", .needs_lab = true},
};

// The traits of the backend called `name`; kind unknown and every answer false for a
// name no backend has.
[[nodiscard]] constexpr backend_traits backend_traits_of(std::string_view name) {
  for (const backend_traits& t : known_backends)
    if (t.name == name) return t;
  return {};
}

// The name a spec gives the backend of `kind`; empty for unknown.
[[nodiscard]] constexpr std::string_view backend_name(backend_kind kind) {
  for (const backend_traits& t : known_backends)
    if (t.kind == kind) return t.name;
  return {};
}

// The names of known_backends, in its order (the spec's choices for `backend`).
[[nodiscard]] inline std::vector<std::string> known_backend_names() {
  std::vector<std::string> names;
  for (const backend_traits& t : known_backends) names.emplace_back(t.name);
  return names;
}

}  // namespace rocelab::experiments
