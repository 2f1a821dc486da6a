#pragma once
// The controller-agent-client protocol: length-prefixed, versioned frames
// carrying one typed message each. Pure functions, no I/O: encode() builds a frame,
// parse_header() checks the fixed header, decode_body() checks the body against the
// message's schema. The connection layer (connection.hpp) and the fuzz target
// (tests/fuzz/fuzz_protocol.cpp) are the callers.
//
// Frame (all integers big-endian):
//   0  u32 body_bytes   length of the body that follows (not counting this header)
//   4  u16 version      protocol_version; a peer speaking another version is refused
//   6  u16 type         message_type
//   8  body             a JSON object whose fields are the message's schema below
// Limits: body_bytes <= max_body_bytes (4 MiB) and never 0; a frame over the limit is
// refused from its header alone, before any body byte is read or buffered.
// Schema: every field listed for a message is required, has the listed JSON type and
// range, and no other field is allowed (a typo is an error, not a silent default). A new
// field or message is a new protocol_version.
//
// Errors name what is wrong: "frame header: body of 9000000 bytes exceeds the limit of
// 4194304", "message clock_reply: field t2_ns: expected an integer".
// Ownership: messages are plain values.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "rocelab/common/byte_order.hpp"
#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::protocol {

// 2: nic_command / nic_event (the soft NIC's lines relayed through the agent).
// 3: submit_run carries the client's submission id and whether it is a retry.
// 4: workers: register_worker, trial_assignment, trial_result (sweeps run on workers).
// 5: clock_reply may carry the agent's host clock (host_clock_reading).
// 6: welcome names the controller's UDP clock service (clock_datagram.hpp) and the
//    session's cookie for it; clock_exchange carries an agent's UDP exchanges.
inline constexpr std::uint16_t protocol_version = 6;
inline constexpr std::size_t frame_header_bytes = 8;
inline constexpr std::uint32_t max_body_bytes = 4u << 20;
// Flow records an agent reports per job_report frame (keeps each frame far below the limit).
inline constexpr std::size_t max_flows_per_report = 4096;

// The fixed header as bytes on the wire; read and written through the accessors only.
struct frame_header_wire {
  wire::be32 body_bytes;
  wire::be16 version;
  wire::be16 type;
};
static_assert(sizeof(frame_header_wire) == frame_header_bytes);

// Every message, declared once: X(name, tag, body). `name` is the message_type
// enumerator and the message's wire name (to_string, error texts, fuzz seed files); `tag`
// is the header's type field; `body` is the struct below that the frame carries. The
// enum, the `message` variant, the encoder's and decoder's dispatch, parse_header's check
// of the type, to_string, parse_message_type and type_of all derive from this list.
// A name or tag in use never changes: peers and recorded frames depend on both
// (tests/protocol/test_message_list.cpp pins them). Adding a message is a line here, its
// struct, its write_body/read_body (protocol/src/*_codecs.cpp; a missing one is a link
// error naming it) and a new protocol_version.
#define ROCELAB_PROTOCOL_MESSAGES(X)                                                                           \
  X(hello, 1, hello)                         /* peer -> controller: who I am (first message after TLS) */     \
  X(welcome, 2, welcome)                     /* controller -> peer: accepted, with the session's timing */    \
  X(heartbeat, 3, heartbeat)                 /* both ways */                                                  \
  X(clock_probe, 4, clock_probe)             /* controller -> agent: t1 */                                    \
  X(clock_reply, 5, clock_reply)             /* agent -> controller: t1, t2, t3 */                            \
  X(clock_exchange, 6, clock_exchange)       /* agent -> controller: one UDP clock exchange's timestamps */   \
  X(apply_settings, 10, apply_settings)      /* controller -> agent: snapshot then set NIC settings */        \
  X(settings_applied, 11, settings_applied)  /* agent -> controller */                                        \
  X(start_job, 12, start_job)                /* controller -> agent: a job and the instant it starts */       \
  X(job_report, 13, job_report)              /* agent -> controller: records (last frame has done) */         \
  X(restore_settings, 14, restore_settings)  /* controller -> agent: undo what apply_settings changed */       \
  X(settings_restored, 15, settings_restored) /* agent -> controller */                                       \
  X(stop_job, 16, stop_job)                  /* controller -> agent: stop a job now (its report follows) */   \
  X(nic_command, 17, nic_command)            /* controller -> agent: command lines for a soft job's NIC */    \
  X(nic_event, 18, nic_event)                /* agent -> controller: event lines from a soft job's NIC */     \
  X(submit_run, 20, submit_run)              /* client -> controller: a spec to run */                        \
  X(run_finished, 21, run_finished)          /* controller -> client: the run's store id, status, summary */  \
  X(error, 30, error_message)                /* either way: the request failed; the connection stays open */  \
  X(register_worker, 40, register_worker)    /* worker -> controller: first message after TLS (not hello) */  \
  X(trial_assignment, 41, trial_assignment)  /* controller -> worker: one trial to run */                      \
  X(trial_result, 42, trial_result)          /* worker -> controller: the trial's runs (or why it failed) */

enum class message_type : std::uint16_t {
#define ROCELAB_PROTOCOL_MESSAGE_ENUMERATOR(name, tag, body) name = tag,
  ROCELAB_PROTOCOL_MESSAGES(ROCELAB_PROTOCOL_MESSAGE_ENUMERATOR)
#undef ROCELAB_PROTOCOL_MESSAGE_ENUMERATOR
};

// The message's wire name ("clock_reply"); "unknown" for a value not in the list.
[[nodiscard]] const char* to_string(message_type t) noexcept;
// The type whose wire name is `name`; nullopt for a name not in the list.
[[nodiscard]] std::optional<message_type> parse_message_type(std::string_view name) noexcept;

enum class peer_role : std::uint8_t { agent, client };

struct hello {
  peer_role role = peer_role::agent;
  std::string name;                     // agent: its host name in the inventory ("h1")
  std::vector<std::string> transports;  // agent: "soft", "verbs" (those it can run)
  std::int64_t pid = 0;
};

struct welcome {
  std::string session;  // controller-assigned id, for logs
  std::int64_t heartbeat_interval_ms = 0;
  std::int64_t deadman_ms = 0;  // the agent restores settings after this long without us
  // The controller's UDP clock service (clock_datagram.hpp) on the address the peer
  // connected to: its port (0: none) and this session's cookie, which every probe
  // carries (a probe with a cookie of no live session is not answered).
  std::uint16_t clock_port = 0;
  std::uint64_t clock_cookie = 0;
};

struct heartbeat {
  std::uint64_t seq = 0;
};

// NTP's four timestamps: t1 controller send, t2 agent receive, t3 agent send (agent's
// clock), t4 controller receive (not on the wire).
struct clock_probe {
  std::uint64_t seq = 0;
  std::int64_t t1_ns = 0;
};

// The agent host's synchronised clock (agents/clock/clock_source.hpp) read with t3: its
// source ("ptp" | "ntp" | "none"), error bound, and CLOCK_REALTIME minus the agent's clock
// (t3's clock), so a controller whose host is synchronised too maps the agent's clock
// through the two hosts' realtime clocks.
struct host_clock_reading {
  std::string source = "none";
  std::int64_t error_bound_ns = 0;
  std::int64_t realtime_minus_clock_ns = 0;
  std::string detail;
};

struct clock_reply {
  std::uint64_t seq = 0;
  std::int64_t t1_ns = 0;
  std::int64_t t2_ns = 0;
  std::int64_t t3_ns = 0;
  std::optional<host_clock_reading> host_clock;  // optional field "host_clock"
};

// One UDP clock exchange the agent started (clock_datagram.hpp): t1 agent sends, t2
// controller receives (kernel timestamp), t3 controller answers, t4 agent receives
// (kernel timestamp); t1 and t4 on the agent's clock, t2 and t3 on the controller's.
struct clock_exchange {
  std::int64_t t1_ns = 0;
  std::int64_t t2_ns = 0;
  std::int64_t t3_ns = 0;
  std::int64_t t4_ns = 0;
};

// A NIC setting by the mlx5 knob name (or a soft NIC field) and its value as text.
struct setting {
  std::string device;  // interface ("eth0"); the driver decides what it names
  std::string name;    // "roce_np/min_time_between_cnps", "roce_rp/rpg_time_reset", ...
  std::string value;
};

struct apply_settings {
  std::uint64_t request = 0;
  std::string driver;  // "soft" | "mlx5" | "files" (a directory tree, as sysfs)
  std::vector<setting> settings;
};

struct settings_applied {
  std::uint64_t request = 0;
  std::vector<setting> previous;  // the snapshot, so the controller can show what changed
};

struct restore_settings {
  std::uint64_t request = 0;
};

struct settings_restored {
  std::uint64_t request = 0;
  std::uint32_t restored = 0;
};

enum class job_kind : std::uint8_t {
  timer,   // start at the instant and report when it started (scale bench, clock tests)
  soft,    // soft RoCEv2 NIC messages (traffic/soft_nic)
  verbs,   // rdma-core verbs (traffic_verbs); refused with `unavailable` where absent
};

[[nodiscard]] const char* to_string(job_kind k) noexcept;

// One message the agent's host sends in a traffic job.
struct job_message {
  std::uint32_t dst = 0;  // host index in the run
  std::uint64_t bytes = 0;
  std::int64_t offset_ns = 0;  // after the job's start instant
  std::uint64_t tag = 0;
};

struct start_job {
  std::uint64_t job = 0;
  std::int64_t run = 0;
  job_kind kind = job_kind::timer;
  std::int64_t start_at_ns = 0;  // in the agent's clock (the controller mapped it)
  std::int64_t timeout_ms = 0;   // the agent stops the job and reports after this
  std::uint32_t host = 0;        // this agent's host index in the run
  std::vector<std::string> hosts;  // host index -> name
  std::vector<job_message> messages;
  // kind soft: the soft NIC's nic_process_config as JSON (traffic/soft_nic/nic_process.hpp),
  // which the controller builds from the lab's addresses; empty otherwise.
  std::string transport_config;
};

struct job_report {
  std::uint64_t job = 0;
  std::int64_t started_ns = 0;  // agent clock: when the job actually started
  std::vector<flow_record> flows;  // times in the agent's clock
  std::vector<counter_sample> counters;
  bool done = false;       // the last report of the job
  std::string error;       // non-empty: the job failed (what ran is still reported)
};

struct stop_job {
  std::uint64_t job = 0;
};

// A soft job's NIC speaks newline-delimited JSON (traffic/soft_nic/nic_process.hpp); the
// controller's orchestrator (nic_fleet) drives it through the agent, which relays the
// lines unchanged, in order, in batches. Each line is one JSON object without its newline.
inline constexpr std::size_t max_lines_per_relay = 1024;

struct nic_command {
  std::uint64_t job = 0;
  std::vector<std::string> lines;  // {"op":"post",...}, {"op":"stop"}
};

struct nic_event {
  std::uint64_t job = 0;
  std::vector<std::string> lines;  // {"ev":"ready",...}, {"ev":"sent",...}; times in the agent's clock
};

// Submission is idempotent by `submission`, an id the client draws once per run
// (submission_id.hpp): a controller that has that id in flight attaches the request to it;
// with `retry` (a client that lost its connection and asks again) a controller also looks
// the id up in its store and answers with the stored outcome instead of running it again.
// An empty id opts out (every submission runs).
struct submit_run {
  std::uint64_t request = 0;
  std::string spec_yaml;
  std::string source_name;        // for error messages ("incast.yaml")
  std::vector<std::string> sets;  // --set path=value
  std::string submission;         // [A-Za-z0-9_-]{0,64}
  bool retry = false;
};

inline constexpr std::size_t max_submission_id_chars = 64;
// Empty, or up to max_submission_id_chars of [A-Za-z0-9_-].
[[nodiscard]] bool valid_submission_id(std::string_view id) noexcept;

struct run_finished {
  std::uint64_t request = 0;
  std::int64_t run = 0;        // store id; 0 when the run never began
  std::string status;          // completed | partial | interrupted | failed (| running, stored)
  std::string error;
  std::string summary_json;    // experiments::summary_json
};

struct error_message {
  std::uint64_t request = 0;  // the request it answers; 0 when none
  std::string code;           // rocelab::error_code as text
  std::string message;
};

// ---- workers (`rocelab worker`): peers that run sweep trials on the twin ----
// A worker says register_worker as its first frame, gets a welcome (heartbeat interval,
// dead-man time) and then trial_assignments one at a time; it answers each with one
// trial_result. Heartbeats go both ways every heartbeat_interval; a worker that hears
// nothing for deadman_ms gives up (its trial is the controller's to re-queue), and the
// controller re-queues the trial of a worker it has not heard for its timeout.
struct register_worker {
  std::string name;                       // unique per worker process ("node1-4711")
  std::string host;                       // gethostname()
  std::int64_t pid = 0;
  std::vector<std::string> capabilities;  // backends it runs ("twin")
  std::uint32_t threads = 1;              // trials it runs at once
  std::string slurm_job_id;               // SLURM_JOB_ID (array: SLURM_ARRAY_JOB_ID); empty outside Slurm
  std::string slurm_array_task_id;        // SLURM_ARRAY_TASK_ID
  std::string slurm_node;                 // SLURMD_NODENAME
};

struct trial_assignment {
  std::uint64_t trial = 0;    // the controller's id for the trial
  std::uint32_t attempt = 0;  // 1 for the first, more after a worker was lost with it
  std::string spec_yaml;      // resolved: every file the spec names is inlined
  std::string source_name;    // for error messages
};

// One repeat of a trial: the seed it ran with and its records. The capture a virtual-lab
// run keeps beside its records is not carried (workers run the twin, which has none).
struct trial_repeat {
  std::uint32_t index = 0;  // which repeat of the trial this (piece of a) repeat is
  std::uint64_t seed = 0;
  run_records records;
};

// A trial's records may be larger than one frame: the worker sends them in pieces
// (split_trial_result), each a trial_result, the last with done; the controller appends
// them in order (append_trial_piece). The first piece of a repeat carries its scalar
// fields (backend, hosts, devices, totals, simulated_ns, ...), every piece a slice of its
// record vectors.
struct trial_result {
  std::uint64_t trial = 0;
  std::uint32_t attempt = 0;
  std::string error;  // non-empty: the trial failed on the worker (spec invalid, run failed)
  std::vector<trial_repeat> repeats;
  bool done = true;   // the last piece
};

// Records per vector (flows, pauses, counters, queues, events, ...) in one piece: keeps a
// piece's body near 1 MiB, far below max_body_bytes.
inline constexpr std::size_t max_records_per_piece = 2048;

// `r` as pieces of at most `max_items` entries per record vector, in order; the last has
// done set. A result without records is one piece.
[[nodiscard]] std::vector<trial_result> split_trial_result(trial_result r, std::size_t max_items = max_records_per_piece);
// Appends a piece to what came before of the same trial (the first piece is taken as is).
void append_trial_piece(trial_result& into, trial_result piece);

// The list as data, in its order: each message's type and wire name.
struct message_kind {
  message_type type;
  const char* name;
};
inline constexpr message_kind message_kinds[] = {
#define ROCELAB_PROTOCOL_MESSAGE_KIND(name, tag, body) {message_type::name, #name},
    ROCELAB_PROTOCOL_MESSAGES(ROCELAB_PROTOCOL_MESSAGE_KIND)
#undef ROCELAB_PROTOCOL_MESSAGE_KIND
};

// The struct a frame of type T carries: message_body_t<message_type::error> is error_message.
template <message_type T>
struct message_body;
#define ROCELAB_PROTOCOL_MESSAGE_BODY(name, tag, body) \
  template <>                                          \
  struct message_body<message_type::name> {            \
    using type = body;                                 \
  };
ROCELAB_PROTOCOL_MESSAGES(ROCELAB_PROTOCOL_MESSAGE_BODY)
#undef ROCELAB_PROTOCOL_MESSAGE_BODY
template <message_type T>
using message_body_t = typename message_body<T>::type;

namespace detail {
template <std::size_t... I>
std::variant<message_body_t<message_kinds[I].type>...> variant_of_kinds(std::index_sequence<I...>);
}  // namespace detail

// One alternative per message, in the list's order: alternative i is the body of
// message_kinds[i] (so a default-constructed message is a hello).
using message = decltype(detail::variant_of_kinds(std::make_index_sequence<std::size(message_kinds)>{}));

[[nodiscard]] message_type type_of(const message& m) noexcept;

struct frame_header {
  std::uint32_t body_bytes = 0;
  std::uint16_t version = 0;
  message_type type = message_type::error;
};

// Checks the 8 header bytes: version, a known type, 0 < body_bytes <= max_body_bytes.
[[nodiscard]] result<frame_header> parse_header(std::span<const std::uint8_t> bytes);
// Checks the body of a frame whose header parse_header accepted.
[[nodiscard]] result<message> decode_body(message_type type, std::span<const std::uint8_t> body);
// A whole frame (header + body), e.g. from a fuzzer or a test; trailing bytes are an error.
[[nodiscard]] result<message> decode_frame(std::span<const std::uint8_t> frame);
// The frame for `m`; fails (resource_exhausted) when its body would exceed the limit.
[[nodiscard]] result<std::vector<std::uint8_t>> encode(const message& m);

}  // namespace rocelab::protocol
