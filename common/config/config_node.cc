// ConfigNode: typed getters, unit parsing and unknown-key detection.
#include "common/config/config_node.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace sf::config {

namespace detail {

std::string describe_type(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number " + num_str(j.get<double>());
    default: return "unsupported value";
  }
}

}  // namespace detail

namespace {

// Levenshtein distance, for "did you mean" on unknown keys (keys are short).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Splits "16MiB" into 16 and "MiB" ("<digits>[.<digits>]" then the rest, with
// optional blanks between). Returns false when there is no leading number.
bool split_number_unit(std::string_view s, double* number, std::string_view* unit, bool allow_fraction) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return false;
  if (allow_fraction && i < s.size() && s[i] == '.') {
    size_t k = i + 1;
    while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
    if (k == i + 1) return false;
    i = k;
  }
  if (i > 20) return false;  // longer than any uint64_t: certainly out of range
  *number = std::stod(std::string(s.substr(0, i)));
  size_t u = i;
  while (u < s.size() && s[u] == ' ') ++u;
  *unit = s.substr(u);
  return true;
}

}  // namespace

std::string ConfigNode::key_path(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  std::string p = path_;
  p += '.';
  p += key;
  return p;
}

std::string ConfigNode::index_path(size_t index) const { return path_ + "[" + std::to_string(index) + "]"; }

void ConfigNode::fail(std::string_view reason) const { throw ConfigError(path_, std::string(reason)); }

void ConfigNode::fail_key(std::string_view key, std::string_view reason) const {
  throw ConfigError(key_path(key), std::string(reason));
}

const ConfigNode& ConfigNode::expect_object() const {
  if (!json_->is_object()) fail("expected object, got " + detail::describe_type(*json_));
  return *this;
}

int64_t ConfigNode::as_int_or_string(int64_t lo, int64_t hi) const {
  int64_t v = 0;
  if (json_->is_string()) {
    const std::string s = json_->get<std::string>();
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) fail("expected integer, got string \"" + s + "\"");
  } else {
    v = as<int64_t>();
  }
  if (v < lo || v > hi) {
    fail(std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

const ConfigNode& ConfigNode::expect_array() const {
  if (!json_->is_array()) fail("expected array, got " + detail::describe_type(*json_));
  return *this;
}

void ConfigNode::mark_known(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

const Json* ConfigNode::find(std::string_view key) {
  expect_object();
  mark_known(key);
  const auto it = json_->find(key);
  return it == json_->end() ? nullptr : &*it;
}

const Json& ConfigNode::require(std::string_view key) {
  const Json* j = find(key);
  if (j == nullptr) fail("missing required key \"" + std::string(key) + "\"");
  return *j;
}

bool ConfigNode::has(std::string_view key) { return find(key) != nullptr; }

ConfigNode ConfigNode::child(std::string_view key) { return ConfigNode(require(key), key_path(key)); }

std::optional<ConfigNode> ConfigNode::opt_child(std::string_view key) {
  const Json* j = find(key);
  if (j == nullptr) return std::nullopt;
  return ConfigNode(*j, key_path(key));
}

uint64_t ConfigNode::req_bytes(std::string_view key, Range<uint64_t> range) {
  ConfigNode v(require(key), key_path(key));
  uint64_t bytes = 0;
  if (v.json().is_string()) {
    const std::string s = v.json().get<std::string>();
    double n = 0;
    std::string_view unit;
    if (!split_number_unit(s, &n, &unit, false)) v.fail("\"" + s + "\" is not a size (e.g. 4096, \"64KiB\", \"16MB\")");
    double mult = 0;
    if (unit.empty() || unit == "B") mult = 1;
    else if (unit == "KB") mult = 1e3;
    else if (unit == "MB") mult = 1e6;
    else if (unit == "GB") mult = 1e9;
    else if (unit == "KiB") mult = 1024.0;
    else if (unit == "MiB") mult = 1024.0 * 1024;
    else if (unit == "GiB") mult = 1024.0 * 1024 * 1024;
    else v.fail("unknown size unit \"" + std::string(unit) + "\" (use B, KB, MB, GB, KiB, MiB or GiB)");
    const double total = n * mult;
    if (total > 1.8e19) v.fail("\"" + s + "\" is too large");
    bytes = static_cast<uint64_t>(total);
  } else {
    bytes = v.as<uint64_t>();
  }
  if (bytes < range.min || bytes > range.max) {
    v.fail(detail::num_str(bytes) + " bytes out of range [" + detail::num_str(range.min) + ", " +
           detail::num_str(range.max) + "]");
  }
  return bytes;
}

uint64_t ConfigNode::opt_bytes(std::string_view key, uint64_t def, Range<uint64_t> range) {
  return has(key) ? req_bytes(key, range) : def;
}

BitRate ConfigNode::req_rate(std::string_view key, Range<BitRate> range) {
  ConfigNode v(require(key), key_path(key));
  double bps = 0;
  if (v.json().is_string()) {
    const std::string s = v.json().get<std::string>();
    double n = 0;
    std::string_view unit;
    if (!split_number_unit(s, &n, &unit, true)) v.fail("\"" + s + "\" is not a rate (e.g. \"100G\", \"25Gbps\")");
    if (unit.size() > 3 && unit.substr(unit.size() - 3) == "bps") unit.remove_suffix(3);
    double mult = 0;
    if (unit == "K") mult = 1e3;
    else if (unit == "M") mult = 1e6;
    else if (unit == "G") mult = 1e9;
    else if (unit == "T") mult = 1e12;
    else v.fail("unknown rate unit in \"" + s + "\" (use K, M, G or T, optionally followed by bps)");
    bps = n * mult;
  } else {
    bps = v.as<double>() * 1e9;
  }
  if (!(bps >= static_cast<double>(range.min.bps()) && bps <= static_cast<double>(range.max.bps()))) {
    v.fail(detail::num_str(bps / 1e9) + "G out of range [" + detail::num_str(range.min) + ", " +
           detail::num_str(range.max) + "]");
  }
  return BitRate(static_cast<uint64_t>(std::llround(bps)));
}

BitRate ConfigNode::opt_rate(std::string_view key, BitRate def, Range<BitRate> range) {
  return has(key) ? req_rate(key, range) : def;
}

TimeNs ConfigNode::req_duration(std::string_view key) {
  ConfigNode v(require(key), key_path(key));
  if (!v.json().is_string()) return TimeNs(v.as<int64_t>(in_range<int64_t>(0, std::numeric_limits<int64_t>::max())));
  const std::string s = v.json().get<std::string>();
  double n = 0;
  std::string_view unit;
  if (!split_number_unit(s, &n, &unit, false)) v.fail("\"" + s + "\" is not a duration (e.g. 1500, \"200us\")");
  double mult = 0;
  if (unit == "ns") mult = 1;
  else if (unit == "us") mult = 1e3;
  else if (unit == "ms") mult = 1e6;
  else if (unit == "s") mult = 1e9;
  else v.fail("unknown duration unit in \"" + s + "\" (use ns, us, ms or s)");
  if (n * mult > 9.2e18) v.fail("\"" + s + "\" is too large");
  return TimeNs(static_cast<int64_t>(n * mult));
}

TimeNs ConfigNode::opt_duration(std::string_view key, TimeNs def) { return has(key) ? req_duration(key) : def; }

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::members() {
  expect_object();
  std::vector<std::pair<std::string, ConfigNode>> out;
  out.reserve(json_->size());
  for (auto it = json_->begin(); it != json_->end(); ++it) {
    mark_known(it.key());
    out.emplace_back(it.key(), ConfigNode(it.value(), key_path(it.key())));
  }
  return out;
}

std::vector<ConfigNode> ConfigNode::elements() const {
  expect_array();
  std::vector<ConfigNode> out;
  out.reserve(json_->size());
  for (size_t i = 0; i < json_->size(); ++i) out.emplace_back((*json_)[i], index_path(i));
  return out;
}

void ConfigNode::finish() const {
  if (!json_->is_object()) return;
  for (auto it = json_->begin(); it != json_->end(); ++it) {
    const std::string& key = it.key();
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    std::string reason = "unknown key \"" + key + "\"";
    const std::string* best = nullptr;
    size_t best_d = 3;  // suggest only close matches (<= 2 edits)
    for (const auto& k : known_) {
      const size_t d = edit_distance(key, k);
      if (d < best_d) {
        best_d = d;
        best = &k;
      }
    }
    if (best != nullptr) reason += " (did you mean \"" + *best + "\"?)";
    fail(reason);
  }
}

}  // namespace sf::config
