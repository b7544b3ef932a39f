// Minimal classic-pcap reader (tool side, allocates freely): both byte orders,
// microsecond (0xA1B2C3D4) and nanosecond (0xA1B23C4D) magics, Ethernet link
// type only. pcapng is rejected with a clear message.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sf::tools {

struct PcapRecord {
  uint64_t ts_ns = 0;
  uint32_t orig_len = 0;
  std::span<const uint8_t> data;  // incl_len bytes, valid while the reader lives
};

class PcapReader {
 public:
  // Loads and validates the file header. On failure error() says why.
  bool open(const std::string& path);
  // Next record, or nullopt at end of file or on a corrupt record (error() set).
  std::optional<PcapRecord> next();
  const std::string& error() const { return error_; }
  bool nanosecond() const { return nsec_; }

 private:
  uint32_t u32(std::size_t off) const;

  std::vector<uint8_t> buf_;
  std::size_t pos_ = 0;
  bool swapped_ = false;
  bool nsec_ = false;
  std::string error_;
};

}  // namespace sf::tools
