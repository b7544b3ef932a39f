// JSON loading with positioned syntax errors and duplicate-key detection.
#include "common/config/json_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sf::config {

namespace {

// Tracks the path of the value being parsed, through the parser callback, so
// that a duplicate key can be reported with its JSON path.
class DuplicateKeyChecker {
 public:
  bool on_event(Json::parse_event_t event, const Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: frames_.push_back(Frame{false, 0, {}, {}}); break;
      case Json::parse_event_t::array_start: frames_.push_back(Frame{true, 0, {}, {}}); break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        element_done();
        break;
      case Json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        for (const auto& k : f.keys) {
          if (k == f.key) throw ConfigError(parent_path(), "duplicate key \"" + f.key + "\"");
        }
        f.keys.push_back(f.key);
        break;
      }
      case Json::parse_event_t::value: element_done(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array;
    size_t index;                   // array: index of the element being parsed
    std::string key;                // object: key of the member being parsed
    std::vector<std::string> keys;  // object: keys seen so far
  };

  void element_done() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
  }

  // Path of the innermost open object (the one holding the duplicate).
  std::string parent_path() const {
    std::string p;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      if (f.is_array) {
        p += "[" + std::to_string(f.index) + "]";
      } else {
        if (!p.empty()) p += '.';
        p += f.key;
      }
    }
    return p;
  }

  std::vector<Frame> frames_;
};

// nlohmann messages look like "[json.exception.parse_error.101] parse error at
// line 1, column 2: syntax error ..."; keep the part after the position.
std::string strip_nlohmann_prefix(const std::string& what) {
  const size_t pos = what.find(": ");
  return pos == std::string::npos ? what : what.substr(pos + 2);
}

}  // namespace

Json parse_text(std::string_view text, std::string_view source) {
  DuplicateKeyChecker checker;
  try {
    return Json::parse(text.begin(), text.end(),
                       [&checker](int /*depth*/, Json::parse_event_t event, Json& parsed) {
                         return checker.on_event(event, parsed);
                       });
  } catch (const Json::parse_error& e) {
    // e.byte is the 1-based offset of the offending character.
    size_t line = 1;
    size_t column = 1;
    const size_t end = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw ConfigError(std::string(source), "line " + std::to_string(line) + ", column " + std::to_string(column) +
                                               ": " + strip_nlohmann_prefix(e.what()));
  } catch (const Json::exception& e) {
    throw ConfigError(std::string(source), strip_nlohmann_prefix(e.what()));
  }
}

Json load_file(const std::string& file_path) {
  std::ifstream in(file_path, std::ios::binary);
  if (!in) throw ConfigError(file_path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ConfigError(file_path, "read error");
  return parse_text(ss.str(), file_path);
}

}  // namespace sf::config
