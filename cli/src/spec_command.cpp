// rocelab spec --reference [--update PAGE]: the spec's field reference (every field with its
// type, default and meaning) as Markdown on stdout, or written into PAGE between its
// field-reference markers (docs/specs.md carries it; a test checks the page is current).
// Exit codes: 0 done; 1 the page could not be read or written; 2 usage.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "command.hpp"
#include "rocelab/common/output_file.hpp"
#include "rocelab/experiments/spec/spec_reference.hpp"

namespace rocelab::cli {
namespace {

struct spec_args {
  bool reference = false;
  std::string update;
};

std::function<int()> setup_spec(CLI::App& app) {
  auto a = std::make_shared<spec_args>();
  app.description("The experiment spec's field reference (every field, its type, default and meaning)");
  app.add_flag("--reference", a->reference, "Print the field reference as Markdown")->required();
  app.add_option("--update", a->update,
                 "Write the reference into this page between its field-reference markers (docs/specs.md)");
  return [a]() -> int {
    const std::string reference = experiments::field_reference_markdown();
    if (a->update.empty()) {
      std::cout << reference;
      return 0;
    }
    std::ifstream in(a->update, std::ios::binary);
    if (!in) {
      std::cerr << "rocelab spec: cannot read " << a->update << "\n";
      return 1;
    }
    std::stringstream page;
    page << in.rdbuf();
    auto updated = experiments::with_field_reference(page.str(), reference);
    if (!updated) {
      std::cerr << "rocelab spec: " << a->update << ": " << updated.error().message() << "\n";
      return 1;
    }
    // The page named is the output: replaced whole (a reader never sees half of it), never
    // written through a symlink.
    if (auto st = write_output_file(a->update, *updated, existing_output::replace); !st.ok()) {
      std::cerr << "rocelab spec: " << st.message() << "\n";
      return 1;
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(spec, setup_spec);

}  // namespace rocelab::cli
