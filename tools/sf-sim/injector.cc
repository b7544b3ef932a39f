// sf-sim's frame injector. See injector.h.
#include "tools/sf-sim/injector.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace sf::simlab {

namespace {

constexpr size_t kMaxFrame = 16384;

uint32_t rd32(const uint8_t* p, bool swap) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}

}  // namespace

Frames read_pcap_frames(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  const std::vector<uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (b.size() < 24) throw std::runtime_error(path + ": not a pcap file (shorter than its 24-byte header)");
  uint32_t magic;
  std::memcpy(&magic, b.data(), 4);
  bool swap;
  if (magic == 0xA1B2C3D4u || magic == 0xA1B23C4Du) {
    swap = false;
  } else if (magic == 0xD4C3B2A1u || magic == 0x4D3CB2A1u) {
    swap = true;
  } else {
    throw std::runtime_error(path + ": not a classic pcap file (magic)");
  }
  if (rd32(b.data() + 20, swap) != 1) throw std::runtime_error(path + ": link type is not Ethernet (1)");
  Frames out;
  size_t off = 24;
  while (off < b.size()) {
    if (b.size() - off < 16) throw std::runtime_error(path + ": truncated record header at byte " + std::to_string(off));
    const uint32_t len = rd32(b.data() + off + 8, swap);
    off += 16;
    if (len == 0 || len > kMaxFrame) {
      throw std::runtime_error(path + ": frame " + std::to_string(out.size()) + " of " + std::to_string(len) +
                               " bytes (want 1.." + std::to_string(kMaxFrame) + ")");
    }
    if (b.size() - off < len) throw std::runtime_error(path + ": truncated frame " + std::to_string(out.size()));
    out.emplace_back(b.begin() + static_cast<std::ptrdiff_t>(off), b.begin() + static_cast<std::ptrdiff_t>(off + len));
    off += len;
  }
  if (out.empty()) throw std::runtime_error(path + ": no frame");
  return out;
}

void Injector::add(Burst b) {
  if (!b.frames || b.frames->empty()) throw std::invalid_argument("an inject burst needs at least one frame");
  if (b.count == 0) throw std::invalid_argument("an inject burst needs count >= 1");
  const auto pos = std::upper_bound(bursts_.begin(), bursts_.end(), b.at,
                                    [](TimeNs t, const Burst& x) { return t < x.at; });
  bursts_.insert(pos, std::move(b));
}

uint64_t Injector::frames_planned() const {
  uint64_t n = 0;
  for (const Burst& b : bursts_) n += b.count;
  return n;
}

void Injector::receive(PortId /*port*/, std::span<rte_mbuf*> pkts, TimeNs /*now*/) {
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
  stats_.received += pkts.size();
}

rte_mbuf* Injector::build(const std::vector<uint8_t>& frame) {
  rte_mbuf* head = nullptr;
  rte_mbuf* last = nullptr;
  size_t off = 0;
  do {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) {
      rte_pktmbuf_free(head);  // null-safe
      return nullptr;
    }
    const auto n = static_cast<uint16_t>(std::min<size_t>(frame.size() - off, rte_pktmbuf_tailroom(m)));
    std::memcpy(rte_pktmbuf_mtod(m, uint8_t*), frame.data() + off, n);
    m->data_len = n;
    off += n;
    if (head == nullptr) {
      head = m;
      head->pkt_len = n;
    } else {
      last->next = m;
      ++head->nb_segs;
      head->pkt_len += n;
    }
    last = m;
  } while (off < frame.size());
  return head;
}

uint16_t Injector::transmit(PortId /*port*/, std::span<rte_mbuf*> out, TimeNs now) {
  if (out.empty() || sending_done()) return 0;
  const Burst& b = bursts_[idx_];
  if (now < b.at || now < next_tx_) return 0;
  const std::vector<uint8_t>& f = (*b.frames)[sent_in_burst_ % b.frames->size()];
  rte_mbuf* m = build(f);
  if (m == nullptr) return 0;  // the pool ran dry (sf-sim counts it): asked again when the wire frees
  if (sent_in_burst_ == 0) ++stats_.bursts;
  ++stats_.sent;
  stats_.sent_bytes += f.size();
  // The next frame: after this one's serialisation at the burst's rate, and
  // never before the wire is free (so next_wakeup never asks for a busy wire).
  const uint32_t wire = wire_bytes(static_cast<uint32_t>(f.size()));
  TimeNs gap = line_rate_.tx_time(wire);
  if (b.rate.bps() != 0) gap = std::max(gap, b.rate.tx_time(wire));
  next_tx_ = now + gap;
  if (++sent_in_burst_ == b.count) {
    ++idx_;
    sent_in_burst_ = 0;
  }
  out[0] = m;
  return 1;
}

TimeNs Injector::next_wakeup(TimeNs /*now*/) const {
  if (sending_done()) return TimeNs::max();
  return std::max(bursts_[idx_].at, next_tx_);
}

}  // namespace sf::simlab
