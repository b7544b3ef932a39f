// ConfigNode: a schema-reading cursor over one JSON value and its path. Every
// later layer (switch SONiC-style tables, NIC hosts, lab topologies) writes its
// schema with it, so that all configuration errors look alike:
//
//   PORT.Ethernet0.speed: expected integer, got string
//   PORT.Ethernet4: unknown key "sped" (did you mean "speed"?)
//   BUFFER_PROFILE.lossless_p3.xoff: 900000 exceeds pool size 16777216
//
// Usage, for an object {"speed": 100, "mtu": 9100}:
//
//   ConfigNode n(json, "PORT.Ethernet0");
//   auto speed = n.req<uint32_t>("speed", in_range<uint32_t>(1, 800));
//   auto mtu = n.opt<uint32_t>("mtu", 9100, in_range<uint32_t>(68, 9216));
//   n.finish();  // every key not read above is an error
//
// Every key asked for (present or not) is remembered as known; finish() reports
// the first key in document order that nobody asked for. Getters throw
// ConfigError (setup time only). Documents are nlohmann::ordered_json so that
// member order (e.g. port order) is the file's order.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/config/config_error.h"
#include "common/time.h"

namespace sf::config {

using Json = nlohmann::ordered_json;

// Inclusive range check for numeric getters.
template <class T>
struct Range {
  T min;
  T max;
};
template <class T>
constexpr Range<T> in_range(T min, T max) {
  return Range<T>{min, max};
}

// One allowed spelling of an enum value, for req_enum/opt_enum.
template <class E>
struct EnumName {
  std::string_view name;
  E value;
};

namespace detail {
// Short description of a JSON value's type for "expected X, got Y".
std::string describe_type(const Json& j);
// Number formatting for messages (1.5, not 1.500000).
template <class T>
std::string num_str(T v) {
  std::ostringstream os;
  if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}
// BitRate has no stream operator; messages print it as Gb/s.
template <>
inline std::string num_str<BitRate>(BitRate v) {
  return num_str(v.gbps_value()) + "G";
}
}  // namespace detail

class ConfigNode {
 public:
  // `json` must outlive this node and every node derived from it.
  ConfigNode(const Json& json, std::string path) : json_(&json), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  const Json& json() const { return *json_; }
  bool is_object() const { return json_->is_object(); }
  bool is_array() const { return json_->is_array(); }

  // Path of a member of this object / an element of this array.
  std::string key_path(std::string_view key) const;
  std::string index_path(size_t index) const;

  // ---- errors ------------------------------------------------------------
  // "path: reason" for this value.
  [[noreturn]] void fail(std::string_view reason) const;
  // "path.key: reason" for a member (cross-field checks, e.g. xoff > pool).
  [[noreturn]] void fail_key(std::string_view key, std::string_view reason) const;

  // ---- this value --------------------------------------------------------
  // Throws unless this node is an object / an array.
  const ConfigNode& expect_object() const;
  const ConfigNode& expect_array() const;

  // This value converted to T: bool, std::string, double/float, or any integer
  // type (range-checked against T). Integers never accept floats or strings.
  template <class T>
  T as() const;
  template <class T>
  T as(Range<T> range) const;
  // An integer given as a JSON integer or as a decimal string (SONiC writes
  // numbers as strings), within [lo, hi].
  int64_t as_int_or_string(int64_t lo, int64_t hi) const;

  // ---- object members ----------------------------------------------------
  // Whether the member exists (marks the key as known).
  bool has(std::string_view key);
  // Required member value; "missing required key" if absent.
  template <class T>
  T req(std::string_view key);
  template <class T>
  T req(std::string_view key, Range<T> range);
  // Optional member value; `def` when absent (explicit null is a type error).
  template <class T>
  T opt(std::string_view key, T def);
  template <class T>
  T opt(std::string_view key, T def, Range<T> range);
  // A member as a child cursor (for nested objects and arrays).
  ConfigNode child(std::string_view key);
  std::optional<ConfigNode> opt_child(std::string_view key);

  // Enum from string; the error lists every allowed spelling.
  template <class E>
  E req_enum(std::string_view key, std::span<const EnumName<E>> names);
  template <class E>
  E opt_enum(std::string_view key, E def, std::span<const EnumName<E>> names);

  // Byte sizes: an integer, or a string "<int>[unit]" with unit B, KB/MB/GB
  // (powers of 1000) or KiB/MiB/GiB (powers of 1024), e.g. "16MiB", "4096".
  uint64_t req_bytes(std::string_view key, Range<uint64_t> range = kAnyU64);
  uint64_t opt_bytes(std::string_view key, uint64_t def, Range<uint64_t> range = kAnyU64);

  // Bit rates: a number of Gb/s (100, 2.5), or a string "<number><unit>" with
  // unit K, M, G or T optionally followed by "bps" ("100G", "25Gbps", "100M").
  BitRate req_rate(std::string_view key, Range<BitRate> range = kAnyRate);
  BitRate opt_rate(std::string_view key, BitRate def, Range<BitRate> range = kAnyRate);

  // Durations: an integer of ns, or a string "<int><unit>" with unit ns, us,
  // ms or s ("200us", "1ms").
  TimeNs req_duration(std::string_view key);
  TimeNs opt_duration(std::string_view key, TimeNs def);

  // ---- iteration ---------------------------------------------------------
  // Members of this object in document order, each key marked known; each
  // child's path is "path.key". Throws unless this is an object.
  std::vector<std::pair<std::string, ConfigNode>> members();
  // Elements of this array, paths "path[i]". Throws unless this is an array.
  std::vector<ConfigNode> elements() const;

  // Reports the first member (document order) whose key was never asked for:
  // `path: unknown key "k"` (with a suggestion when a known key is close).
  // No-op for non-objects.
  void finish() const;

  static constexpr Range<uint64_t> kAnyU64{0, std::numeric_limits<uint64_t>::max()};
  static constexpr Range<BitRate> kAnyRate{BitRate(1), BitRate(std::numeric_limits<uint64_t>::max())};

 private:
  void mark_known(std::string_view key);
  // The member or nullptr (marks the key known).
  const Json* find(std::string_view key);
  const Json& require(std::string_view key);

  const Json* json_;
  std::string path_;
  std::vector<std::string> known_;  // keys asked for; few per object, linear search
};

// ---- template implementations -------------------------------------------

template <class T>
T ConfigNode::as() const {
  const Json& j = *json_;
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) fail("expected boolean, got " + detail::describe_type(j));
    return j.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) fail("expected string, got " + detail::describe_type(j));
    return j.get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) fail("expected number, got " + detail::describe_type(j));
    return j.get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j.is_number_integer()) fail("expected integer, got " + detail::describe_type(j));
    constexpr T kMin = std::numeric_limits<T>::min();
    constexpr T kMax = std::numeric_limits<T>::max();
    const std::string range = " out of range [" + detail::num_str(kMin) + ", " + detail::num_str(kMax) + "]";
    if (j.is_number_unsigned()) {
      const uint64_t v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(kMax)) fail(detail::num_str(v) + range);
      return static_cast<T>(v);
    }
    const int64_t v = j.get<int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (v < static_cast<int64_t>(kMin) || v > static_cast<int64_t>(kMax)) fail(detail::num_str(v) + range);
    } else {
      if (v < 0 || static_cast<uint64_t>(v) > static_cast<uint64_t>(kMax)) fail(detail::num_str(v) + range);
    }
    return static_cast<T>(v);
  } else {
    static_assert(std::is_same_v<T, bool>, "ConfigNode::as<T>: unsupported type");
  }
}

template <class T>
T ConfigNode::as(Range<T> range) const {
  const T v = as<T>();
  if (v < range.min || v > range.max) {
    fail(detail::num_str(v) + " out of range [" + detail::num_str(range.min) + ", " + detail::num_str(range.max) +
         "]");
  }
  return v;
}

template <class T>
T ConfigNode::req(std::string_view key) {
  return ConfigNode(require(key), key_path(key)).as<T>();
}

template <class T>
T ConfigNode::req(std::string_view key, Range<T> range) {
  return ConfigNode(require(key), key_path(key)).as<T>(range);
}

template <class T>
T ConfigNode::opt(std::string_view key, T def) {
  const Json* j = find(key);
  return j == nullptr ? def : ConfigNode(*j, key_path(key)).as<T>();
}

template <class T>
T ConfigNode::opt(std::string_view key, T def, Range<T> range) {
  const Json* j = find(key);
  return j == nullptr ? def : ConfigNode(*j, key_path(key)).as<T>(range);
}

template <class E>
E ConfigNode::req_enum(std::string_view key, std::span<const EnumName<E>> names) {
  const std::string s = req<std::string>(key);
  for (const auto& n : names) {
    if (n.name == s) return n.value;
  }
  std::string allowed;
  for (const auto& n : names) {
    if (!allowed.empty()) allowed += ", ";
    allowed += "\"" + std::string(n.name) + "\"";
  }
  fail_key(key, "\"" + s + "\" is not one of " + allowed);
}

template <class E>
E ConfigNode::opt_enum(std::string_view key, E def, std::span<const EnumName<E>> names) {
  return has(key) ? req_enum<E>(key, names) : def;
}

}  // namespace sf::config
