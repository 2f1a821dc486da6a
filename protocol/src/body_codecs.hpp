#pragma once
// Each message's field codec, declared from the message list (messages.hpp) so that the
// encoder and decoder dispatch in messages.cpp reach every message and a message without
// a codec is a link error naming it. Defined per concern: session_codecs.cpp (handshake,
// heartbeats, clocks, errors), agent_codecs.cpp (NIC settings, jobs, NIC relays),
// run_codecs.cpp (client runs), worker_codecs.cpp (sweep trials).
//
// write_body gives the body's JSON object; read_body reads every field of the schema into
// `out` and checks it, reporting the first problem through `r`.
#include "field_reader.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::protocol {

#define ROCELAB_PROTOCOL_BODY_CODEC(name, tag, body) \
  [[nodiscard]] json write_body(const body& m);      \
  void read_body(field_reader& r, body& out);
ROCELAB_PROTOCOL_MESSAGES(ROCELAB_PROTOCOL_BODY_CODEC)
#undef ROCELAB_PROTOCOL_BODY_CODEC

}  // namespace rocelab::protocol
