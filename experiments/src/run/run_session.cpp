#include "rocelab/experiments/run/run_session.hpp"

#include <exception>
#include <iostream>
#include <utility>

namespace rocelab::experiments {

result<run_session> run_session::begin(store::run_store& store, const store::new_run& run) {
  auto id = store.begin_run(run);
  if (!id) return id.error().with_context("beginning run " + run.name + " in " + store.path());
  return run_session(store, *id);
}

run_session::run_session(run_session&& other) noexcept
    : store_(other.store_), id_(other.id_), finished_(std::exchange(other.finished_, true)) {}

run_session& run_session::operator=(run_session&& other) noexcept {
  if (this != &other) {
    abandon();
    store_ = other.store_;
    id_ = other.id_;
    finished_ = std::exchange(other.finished_, true);
  }
  return *this;
}

run_session::~run_session() { abandon(); }

void run_session::abandon() noexcept {
  if (finished_) return;
  try {
    if (auto st = finish_as(store::run_status::failed, unfinished_note); !st.ok())
      std::cerr << "rocelab: " << st.message() << "\n";
  } catch (const std::exception& e) {  // out of memory building the note: the run stays running
    std::cerr << "rocelab: finishing run " << id_ << " failed: " << e.what() << "\n";
  }
}

status run_session::ended_error() const {
  return status(error_code::invalid_argument, "run " + std::to_string(id_) + " is finished already");
}

status run_session::append_repeat(std::uint32_t index, run_records& records, const store::append_options& options) {
  if (finished_) return ended_error();
  set_repeat(records, index);
  return store_->append(id_, records, options)
      .with_context("storing repeat " + std::to_string(index) + " of run " + std::to_string(id_));
}

result<store::run_ending> run_session::finish_ran(const std::vector<const run_records*>& repeats) {
  if (finished_) return ended_error();
  finished_ = true;
  return store::finish_ran(*store_, id_, repeats);
}

result<store::run_ending> run_session::finish_ran(const std::vector<run_records>& repeats) {
  std::vector<const run_records*> all;
  all.reserve(repeats.size());
  for (const run_records& r : repeats) all.push_back(&r);
  return finish_ran(all);
}

status run_session::finish_interrupted(std::string_view why) {
  if (finished_) return ended_error();
  return finish_as(store::run_status::interrupted, why);
}

status run_session::finish_failed(std::string_view why) {
  if (finished_) return ended_error();
  return finish_as(store::run_status::failed, why);
}

status run_session::finish_as(store::run_status final_status, std::string_view note) {
  finished_ = true;
  return store_->finish(id_, final_status, note)
      .with_context("finishing run " + std::to_string(id_) + " " + store::to_string(final_status));
}

}  // namespace rocelab::experiments
