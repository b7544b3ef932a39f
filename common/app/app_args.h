// Command-line handling shared by the apps (sf-switch, sf-pktio, sf-nic): EAL
// arguments before `--`, the app's own (Boost.Program_options) after, --help
// anywhere, and a clear message plus exit status 2 for anything bad.
#pragma once

#include <boost/program_options.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sf::app {

// Parses `app_args` (argv[0] first, as split_args() returns them) into the
// variables bound in `desc`. Returns the exit status when the program must stop
// now: 0 after printing --help (seen anywhere in argv), 2 after printing why an
// option is bad. std::nullopt: go on. `vm` (if given) receives what was
// parsed, so the caller can tell a flag the user gave from a default.
std::optional<int> parse_app_args(int argc, char** argv, const std::vector<std::string>& app_args,
                                  const boost::program_options::options_description& desc, std::string_view prog,
                                  boost::program_options::variables_map* vm = nullptr);

// The first of `flags` (long names, without "--") the user gave on the
// command line, not filled in by its default; empty when none. For refusing
// a flag in a mode that would ignore it ("honoured or refused").
std::string first_given(const boost::program_options::variables_map& vm, std::initializer_list<const char*> flags);

// Sets spdlog's level from "debug" | "info" | "warn" | "error"; false (and a
// message on stderr) for anything else, which spdlog would silently turn off.
bool set_log_level(const std::string& level, std::string_view prog);

// --ready-file: creates `path` (empty: nothing) for an orchestrator that
// waits for it.
void touch_ready_file(const std::string& path);

}  // namespace sf::app
