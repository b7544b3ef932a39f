// ConfigError: the one error type of configuration loading. Thrown at setup
// time only (never on the data path, STYLE G8); what() is "path: reason" so an
// operator sees exactly which JSON value is wrong and why.
#pragma once

#include <stdexcept>
#include <string>

namespace sf::config {

class ConfigError : public std::runtime_error {
 public:
  // `path` is the JSON path of the offending value ("PORT.Ethernet0.speed",
  // "links[2].a") or a file name; empty for the document root.
  ConfigError(std::string path, std::string reason)
      : std::runtime_error(path.empty() ? reason : path + ": " + reason),
        path_(std::move(path)),
        reason_(std::move(reason)) {}

  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

}  // namespace sf::config
