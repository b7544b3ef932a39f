// Classic pcap reader (https://www.tcpdump.org/manpages/pcap-savefile.5.html).
#include "tools/sf-decode/pcap_reader.h"

#include <fstream>
#include <iterator>

namespace sf::tools {

namespace {
constexpr uint32_t kMagicUsec = 0xA1B2C3D4;
constexpr uint32_t kMagicNsec = 0xA1B23C4D;
constexpr uint32_t kMagicPcapng = 0x0A0D0D0A;
constexpr uint32_t kLinkTypeEthernet = 1;
constexpr std::size_t kFileHeaderBytes = 24;
constexpr std::size_t kRecordHeaderBytes = 16;
constexpr uint32_t kMaxRecordBytes = 256 * 1024;

uint32_t bswap32(uint32_t v) { return __builtin_bswap32(v); }
}  // namespace

uint32_t PcapReader::u32(std::size_t off) const {
  const uint32_t v = static_cast<uint32_t>(buf_[off]) | (static_cast<uint32_t>(buf_[off + 1]) << 8) |
                     (static_cast<uint32_t>(buf_[off + 2]) << 16) | (static_cast<uint32_t>(buf_[off + 3]) << 24);
  return swapped_ ? bswap32(v) : v;
}

bool PcapReader::open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error_ = "cannot open '" + path + "'";
    return false;
  }
  buf_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (buf_.size() < kFileHeaderBytes) {
    error_ = "'" + path + "' is not a pcap file (shorter than the 24-byte header)";
    return false;
  }
  swapped_ = false;
  const uint32_t magic = u32(0);
  if (magic == kMagicPcapng) {
    error_ = "'" + path + "' is pcapng; convert it with: editcap -F pcap in.pcapng out.pcap";
    return false;
  }
  if (magic == kMagicUsec || magic == kMagicNsec) {
    nsec_ = magic == kMagicNsec;
  } else if (bswap32(magic) == kMagicUsec || bswap32(magic) == kMagicNsec) {
    swapped_ = true;
    nsec_ = bswap32(magic) == kMagicNsec;
  } else {
    error_ = "'" + path + "' is not a pcap file (bad magic)";
    return false;
  }
  const uint32_t linktype = u32(20) & 0x0FFFFFFFu;
  if (linktype != kLinkTypeEthernet) {
    error_ = "'" + path + "' has link type " + std::to_string(linktype) + ", only Ethernet (1) is supported";
    return false;
  }
  pos_ = kFileHeaderBytes;
  return true;
}

std::optional<PcapRecord> PcapReader::next() {
  if (pos_ == buf_.size()) return std::nullopt;
  if (buf_.size() - pos_ < kRecordHeaderBytes) {
    error_ = "truncated record header at byte " + std::to_string(pos_);
    return std::nullopt;
  }
  PcapRecord r;
  const uint64_t sec = u32(pos_);
  const uint64_t frac = u32(pos_ + 4);
  const uint32_t incl = u32(pos_ + 8);
  r.orig_len = u32(pos_ + 12);
  if (incl > kMaxRecordBytes) {
    error_ = "corrupt record at byte " + std::to_string(pos_) + " (captured length " + std::to_string(incl) + ")";
    return std::nullopt;
  }
  if (buf_.size() - pos_ - kRecordHeaderBytes < incl) {
    error_ = "truncated record data at byte " + std::to_string(pos_);
    return std::nullopt;
  }
  r.ts_ns = sec * 1000000000ull + (nsec_ ? frac : frac * 1000);
  r.data = std::span<const uint8_t>(buf_.data() + pos_ + kRecordHeaderBytes, incl);
  pos_ += kRecordHeaderBytes + incl;
  return r;
}

}  // namespace sf::tools
