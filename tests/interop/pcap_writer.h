// PcapWriter: classic pcap (v2.4, microsecond timestamps, Ethernet) for the
// interop helpers, whose frames tshark and scapy then read. Test code only:
// the product writes pcaps through DPDK's pdump (switch capture) and reads
// them with tools/sf-decode/pcap_reader.h.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace sf::wire::test {

class PcapWriter {
 public:
  explicit PcapWriter(const std::string& path) : out_(path, std::ios::binary) {
    const uint32_t hdr[6] = {0xA1B2C3D4, 0x00040002, 0, 0, 65535, 1};  // magic, v2.4, zone, sigfigs, snaplen, Ethernet
    out_.write(reinterpret_cast<const char*>(hdr), sizeof(hdr));
  }
  // Frame k (from 0) is stamped k seconds.
  void write(const std::vector<uint8_t>& f) { write_at(f, n_, 0); }
  void write(const std::vector<uint8_t>& f, uint32_t ts_us) { write_at(f, ts_us / 1000000, ts_us % 1000000); }
  bool ok() const { return out_.good(); }

 private:
  void write_at(const std::vector<uint8_t>& f, uint32_t sec, uint32_t usec) {
    const uint32_t rec[4] = {sec, usec, static_cast<uint32_t>(f.size()), static_cast<uint32_t>(f.size())};
    ++n_;
    out_.write(reinterpret_cast<const char*>(rec), sizeof(rec));
    out_.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
  }

  std::ofstream out_;
  uint32_t n_ = 0;
};

}  // namespace sf::wire::test
