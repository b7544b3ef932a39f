// Shared command-line handling. See app_args.h.
#include "common/app/app_args.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

namespace sf::app {

std::optional<int> parse_app_args(int argc, char** argv, const std::vector<std::string>& app_args,
                                  const boost::program_options::options_description& desc, std::string_view prog,
                                  boost::program_options::variables_map* out) {
  namespace po = boost::program_options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << desc << "\n";
      return 0;
    }
  }
  try {
    po::variables_map vm;
    std::vector<const char*> av;
    for (const auto& s : app_args) av.push_back(s.c_str());
    po::store(po::parse_command_line(static_cast<int>(av.size()), av.data(), desc), vm);
    po::notify(vm);
    if (out != nullptr) *out = std::move(vm);
  } catch (const po::error& e) {
    std::cerr << prog << ": " << e.what() << " (own options go after `--`; see --help)\n";
    return 2;
  }
  return std::nullopt;
}

std::string first_given(const boost::program_options::variables_map& vm, std::initializer_list<const char*> flags) {
  for (const char* f : flags) {
    if (vm.count(f) != 0 && !vm[f].defaulted()) return f;
  }
  return {};
}

bool set_log_level(const std::string& level, std::string_view prog) {
  for (const char* ok : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    if (level == ok) {
      spdlog::set_level(spdlog::level::from_str(level));
      return true;
    }
  }
  std::cerr << prog << ": --log-level must be debug, info, warn or error (got '" << level << "')\n";
  return false;
}

void touch_ready_file(const std::string& path) {
  if (path.empty()) return;
  if (FILE* f = std::fopen(path.c_str(), "w"); f != nullptr) std::fclose(f);
}

}  // namespace sf::app
