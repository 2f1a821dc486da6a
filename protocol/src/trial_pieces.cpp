// A trial_result larger than one frame, as pieces and back (messages.hpp:
// split_trial_result, append_trial_piece).
#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

#include "rocelab/protocol/messages.hpp"

namespace rocelab::protocol {
namespace {

template <typename T>
void take_slice(std::vector<T>& from, std::size_t& at, std::size_t n, std::vector<T>& to) {
  const std::size_t end = std::min(from.size(), at + n);
  to.assign(std::make_move_iterator(from.begin() + static_cast<std::ptrdiff_t>(at)),
            std::make_move_iterator(from.begin() + static_cast<std::ptrdiff_t>(end)));
  at = end;
}

template <typename T>
void append_all(std::vector<T>& to, std::vector<T>& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

std::vector<trial_result> split_trial_result(trial_result r, std::size_t max_items) {
  max_items = std::max<std::size_t>(1, max_items);
  std::vector<trial_result> out;
  for (trial_repeat& rep : r.repeats) {
    run_records& all = rep.records;
    std::size_t flows = 0, pauses = 0, counters = 0, queues = 0, allreduce = 0, events = 0;
    for (bool first = true;; first = false) {
      trial_result piece{r.trial, r.attempt, "", {}, false};
      trial_repeat part;
      part.index = rep.index;
      part.seed = rep.seed;
      if (first) {  // the scalar fields travel once, with the first slice
        part.records.backend = all.backend;
        part.records.hosts = std::move(all.hosts);
        part.records.devices = std::move(all.devices);
        part.records.totals = all.totals;
        part.records.simulated_ns = all.simulated_ns;
        part.records.lost_hosts = std::move(all.lost_hosts);
        part.records.degraded = std::move(all.degraded);
      }
      take_slice(all.flows, flows, max_items, part.records.flows);
      take_slice(all.pauses, pauses, max_items, part.records.pauses);
      take_slice(all.counters, counters, max_items, part.records.counters);
      take_slice(all.queues, queues, max_items, part.records.queues);
      take_slice(all.allreduce, allreduce, max_items, part.records.allreduce);
      take_slice(all.events, events, max_items, part.records.events);
      piece.repeats.push_back(std::move(part));
      out.push_back(std::move(piece));
      if (flows == all.flows.size() && pauses == all.pauses.size() && counters == all.counters.size() &&
          queues == all.queues.size() && allreduce == all.allreduce.size() && events == all.events.size())
        break;
    }
  }
  if (out.empty()) out.push_back(trial_result{r.trial, r.attempt, "", {}, false});
  out.front().error = r.error;
  out.back().done = true;
  return out;
}

void append_trial_piece(trial_result& into, trial_result piece) {
  if (!piece.error.empty()) into.error = piece.error;
  into.done = piece.done;
  for (trial_repeat& part : piece.repeats) {
    if (into.repeats.empty() || into.repeats.back().index != part.index) {
      into.repeats.push_back(std::move(part));
      continue;
    }
    run_records& to = into.repeats.back().records;
    append_all(to.flows, part.records.flows);
    append_all(to.pauses, part.records.pauses);
    append_all(to.counters, part.records.counters);
    append_all(to.queues, part.records.queues);
    append_all(to.allreduce, part.records.allreduce);
    append_all(to.events, part.records.events);
  }
}

}  // namespace rocelab::protocol
