// Result<T>: a value or an error message naming the object and the failed step
// (STYLE G14: init steps return errors, never rte_exit). Control path only;
// the message is a std::string, so never construct one on the data path.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace sf::dpdk {

struct Error {
  std::string message;  // e.g. "port net_memif0: rte_eth_dev_configure: Invalid argument (-22)"
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error.message)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& error() const { return err_; }

 private:
  std::string err_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace sf::dpdk
