// roce_floor: the least per-frame work of any correct RoCEv2 endpoint, over
// the same memif link as dpdk-testpmd txonly -> rxonly, so nic_bench.py can
// measure (not estimate) how close to testpmd a software RoCE NIC can get
// here, and how close sf-nic is to that floor.
//
//   --role tx   like testpmd txonly: frames of mbufs straight from the pool
//               (segments of the pool's data room, payload bytes as the pool
//               left them), plus what a RoCE sender cannot skip: a WRITE_MIDDLE
//               header with the next PSN and the ICRC over the frame.
//   --role rx   like testpmd rxonly, plus what a RoCE receiver cannot skip:
//               parse the headers, verify the ICRC, copy the payload into a
//               registered buffer (the same parse, check and copy sf-nic runs).
// No transport (no PSN check, no ACKs, no window, no timers, no CQ): what is
// left between roce_floor and sf-nic is the RC transport and the driver.
//
// Prints one JSON line per whole second of the run ({"t_s", "frames",
// "bytes"}: the receiver's received / the sender's accepted frames in that
// second) and a final one ({"role", "frames", "bytes", "seconds", "mpps",
// "frame_bytes", "icrc_bad", "parse_bad", "tx_refused"}). Exit 0; 1 when a
// frame failed its parse or ICRC check (rx) or the port failed; 2 for bad
// flags, before EAL starts.
//
// usage: roce_floor [EAL options] -- --role tx|rx --port DEVARGS [--seconds S]
//          [--payload-bytes N] [--mbuf-size BYTES] [--ready-file PATH] [--linger-ms MS]
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/dpdk/port.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/mbuf_icrc.h"
#include "nic/rc/chain_copy.h"

namespace {

using sf::dpdk::Port;

constexpr uint16_t kBurst = 32;
constexpr uint32_t kMrBytes = 1u << 20;  // the receiver's "MR": payloads land at rotating offsets
std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

struct Options {
  std::string role;
  std::string port;
  std::string ready_file;
  double seconds = 3;
  uint32_t payload_bytes = 4096;
  uint32_t mbuf_size = RTE_MBUF_DEFAULT_BUF_SIZE;
  uint32_t linger_ms = 300;  // tx: keep the port open this long after the run (see run())
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr,
               "roce_floor: %s\nusage: roce_floor [EAL options] -- --role tx|rx --port DEVARGS [--seconds S] "
               "[--payload-bytes N] [--mbuf-size BYTES] [--ready-file PATH] [--linger-ms MS]\n",
               what.c_str());
  std::exit(2);
}

// The frame every sent frame is a copy of: its headers (Eth, IPv4, UDP, BTH
// of an RC WRITE_MIDDLE, the PSN written per frame) and where things are.
struct FrameTemplate {
  std::vector<uint8_t> hdr;
  sf::wire::IcrcLayout layout{};
  uint32_t frame_bytes = 0;
  uint32_t ip_off = 0;   // the ICRC starts here
  uint32_t psn_off = 0;  // BTH bytes 9-11
};

// Pure (no EAL): parse() checks the flags against it before anything starts.
FrameTemplate frame_template(uint32_t payload) {
  sf::wire::RoceFrameSpec spec;
  spec.bth.opcode = sf::wire::Opcode::kRcWriteMiddle;
  spec.bth.dest_qp = 0x11;
  FrameTemplate t;
  t.hdr.resize(128);
  const sf::wire::BuildResult r = sf::wire::build_roce_headers(t.hdr, spec, payload);
  if (!r.ok()) usage_error(std::string("cannot build the header: ") + sf::wire::to_string(r.error));
  t.hdr.resize(r.header_bytes);
  t.frame_bytes = static_cast<uint32_t>(r.frame_bytes);
  // Offsets and the ICRC layout from a parse of a whole frame of this kind
  // (what the receiver sees), so both sides fold the same bytes.
  std::vector<uint8_t> f(r.frame_bytes);
  if (!sf::wire::build_roce_frame(f, spec, std::vector<uint8_t>(payload)).ok()) usage_error("cannot build a frame");
  const sf::wire::FrameInfo fi = sf::wire::parse_frame(f);
  if (!fi.ok()) usage_error("the template frame does not parse");
  t.layout = sf::wire::icrc_layout(fi);
  t.ip_off = fi.ip_offset;
  t.psn_off = fi.bth_offset + static_cast<uint32_t>(sf::wire::Bth::kOffPsn);
  return t;
}

Options parse(const std::vector<std::string>& a) {
  Options o;
  for (size_t i = 1; i < a.size(); ++i) {
    auto value = [&]() -> const std::string& {
      if (i + 1 >= a.size()) usage_error(a[i] + " needs a value");
      return a[++i];
    };
    auto number = [&](double lo, double hi, bool integer) {
      const std::string& v = value();
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(x >= lo && x <= hi) || (integer && x != static_cast<uint32_t>(x))) {
        usage_error(a[i - 1] + " must be " + (integer ? "an integer" : "a number") + " in [" +
                    std::to_string(static_cast<uint32_t>(lo)) + ", " + std::to_string(static_cast<uint32_t>(hi)) + "]");
      }
      return x;
    };
    if (a[i] == "--role") {
      o.role = value();
    } else if (a[i] == "--port") {
      o.port = value();
    } else if (a[i] == "--ready-file") {
      o.ready_file = value();
    } else if (a[i] == "--seconds") {
      o.seconds = number(0.1, 3600, false);
    } else if (a[i] == "--payload-bytes") {
      o.payload_bytes = static_cast<uint32_t>(number(4, 4096, true));
    } else if (a[i] == "--linger-ms") {
      o.linger_ms = static_cast<uint32_t>(number(0, 60000, true));
    } else if (a[i] == "--mbuf-size") {
      o.mbuf_size = static_cast<uint32_t>(number(640, 65535, true));
    } else {
      usage_error("unknown argument '" + a[i] + "'");
    }
  }
  if (o.role != "tx" && o.role != "rx") usage_error("--role must be tx or rx");
  if (o.port.empty()) usage_error("--port is required");
  if (o.payload_bytes % 4 != 0) usage_error("--payload-bytes must be a multiple of 4 (no pad)");
  (void)frame_template(o.payload_bytes);  // a payload the builder refuses is a flag error too
  return o;
}

struct Totals {
  uint64_t frames = 0;
  uint64_t bytes = 0;
  uint64_t icrc_bad = 0;
  uint64_t parse_bad = 0;
  uint64_t tx_refused = 0;
};

// One frame as a chain of pool mbufs of `seg` bytes each (testpmd txonly's
// --txpkts split), the header written into the first (seg >= 512 > any
// header); a last segment under 4 B takes bytes from the one before, so the
// ICRC lies in one segment. nullptr when the pool is short.
rte_mbuf* alloc_chain(rte_mempool* pool, uint32_t frame_bytes, uint32_t seg) {
  std::array<rte_mbuf*, 16> s{};
  const uint32_t n = (frame_bytes + seg - 1) / seg;
  if (n > s.size() || rte_pktmbuf_alloc_bulk(pool, s.data(), n) != 0) return nullptr;
  const uint32_t tail = frame_bytes - (n - 1) * seg;  // 1..seg
  const uint32_t short_by = tail < 4 && n > 1 ? 4 - tail : 0;
  uint32_t left = frame_bytes;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t k = std::min(left, seg);
    if (i + 2 == n) k -= short_by;
    s[i]->data_len = static_cast<uint16_t>(k);
    s[i]->next = i + 1 < n ? s[i + 1] : nullptr;
    left -= k;
  }
  s[0]->nb_segs = static_cast<uint16_t>(n);
  s[0]->pkt_len = frame_bytes;
  return s[0];
}

// What a sender must do to a frame beyond testpmd txonly: its PSN, then the
// ICRC over every covered byte, stored in the last 4.
void finish_frame(rte_mbuf* m, const FrameTemplate& t, uint32_t psn) {
  auto* d = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(d, t.hdr.data(), t.hdr.size());
  d[t.psn_off] = static_cast<uint8_t>(psn >> 16);
  d[t.psn_off + 1] = static_cast<uint8_t>(psn >> 8);
  d[t.psn_off + 2] = static_cast<uint8_t>(psn);
  sf::wire::IcrcAccumulator acc;
  // Cannot fail: the first segment holds the headers (checked in parse()).
  (void)acc.begin({d + t.ip_off, m->data_len - t.ip_off}, t.layout);
  uint32_t left = m->pkt_len - t.ip_off - t.layout.masked_bytes() - 4;  // covered bytes after the masked block
  uint32_t off = t.ip_off + t.layout.masked_bytes();
  rte_mbuf* s = m;
  uint8_t* icrc_at = nullptr;
  while (s != nullptr) {
    const uint32_t k = std::min(left, s->data_len - off);
    acc.update({rte_pktmbuf_mtod_offset(s, const uint8_t*, off), k});
    left -= k;
    if (left == 0) {
      // The ICRC's 4 bytes follow in this segment or start the next (the
      // last holds >= 4: alloc_chain's split).
      icrc_at = off + k < s->data_len ? rte_pktmbuf_mtod_offset(s, uint8_t*, off + k)
                                      : rte_pktmbuf_mtod(s->next, uint8_t*);
      break;
    }
    off = 0;
    s = s->next;
  }
  const uint32_t v = acc.value();
  std::memcpy(icrc_at, &v, 4);  // little-endian on the wire, as build_roce_frame stores it
}

void report_second(double t, uint64_t frames, uint64_t bytes) {
  std::printf("{\"t_s\":%.0f,\"frames\":%llu,\"bytes\":%llu}\n", t, static_cast<unsigned long long>(frames),
              static_cast<unsigned long long>(bytes));
  std::fflush(stdout);
}

int run(const Options& o, rte_mempool* pool, Port& port) {
  using Clock = std::chrono::steady_clock;
  const FrameTemplate t = frame_template(o.payload_bytes);  // checked in parse()
  const uint32_t frame_bytes = t.frame_bytes;
  const uint32_t seg = o.mbuf_size - RTE_PKTMBUF_HEADROOM;
  const bool tx = o.role == "tx";  // once: not a string compare per burst
  if (tx && frame_bytes > seg && !port.multi_seg_tx()) {
    std::fprintf(stderr, "roce_floor: port %s cannot send chained mbufs; give --mbuf-size %u or more\n",
                 port.name().c_str(), frame_bytes + RTE_PKTMBUF_HEADROOM);
    return 1;
  }
  std::vector<uint8_t> mr(kMrBytes + 8192);
  Totals tot;
  uint64_t sec_frames = 0, sec_bytes = 0;
  uint32_t psn = 0;
  uint32_t mr_off = 0;
  std::array<rte_mbuf*, kBurst> b{};
  // Ready once the port is open (a memif server's socket exists); the run
  // starts when the peer is there.
  if (!o.ready_file.empty()) std::ofstream(o.ready_file) << "ready\n";
  if (auto st = port.wait_link_up(sf::TimeNs::from_s(30)); !st) {
    std::fprintf(stderr, "roce_floor: %s\n", st.error().c_str());
    return 1;
  }
  const auto t0 = Clock::now();
  auto next_second = t0 + std::chrono::seconds(1);
  double second = 1;
  const auto end = t0 + std::chrono::duration<double>(o.seconds);
  uint32_t iter = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    if ((++iter & 63u) == 0) {
      const auto now = Clock::now();
      if (now >= next_second) {
        report_second(second, sec_frames, sec_bytes);
        sec_frames = sec_bytes = 0;
        second += 1;
        next_second += std::chrono::seconds(1);
      }
      if (now >= end) break;
    }
    if (tx) {
      uint16_t n = 0;
      while (n < kBurst) {
        rte_mbuf* m = alloc_chain(pool, frame_bytes, seg);
        if (m == nullptr) break;
        finish_frame(m, t, psn);
        psn = (psn + 1) & 0xFFFFFFu;
        b[n++] = m;
      }
      const uint16_t sent = port.tx_burst({b.data(), n});
      if (sent < n) {
        rte_pktmbuf_free_bulk(b.data() + sent, n - sent);  // testpmd txonly drops what the ring refused
        tot.tx_refused += n - sent;
      }
      tot.frames += sent;
      tot.bytes += uint64_t{sent} * o.payload_bytes;
      sec_frames += sent;
      sec_bytes += uint64_t{sent} * o.payload_bytes;
    } else {
      const uint16_t n = port.rx_burst({b.data(), kBurst});
      for (uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = b[i];
        const sf::wire::FrameInfo fi = sf::wire::parse_mbuf(m);
        if (!fi.ok() || fi.bth == nullptr) {
          ++tot.parse_bad;
          continue;
        }
        if (sf::wire::icrc_verify_mbuf(m, fi) != sf::wire::IcrcStatus::kOk) {
          ++tot.icrc_bad;
          continue;
        }
        if (!sf::nic::rc::copy_from_chain(m, fi.payload_offset, fi.payload_bytes, mr.data() + mr_off)) {
          ++tot.parse_bad;
          continue;
        }
        mr_off = (mr_off + fi.payload_bytes) % kMrBytes;
        ++tot.frames;
        tot.bytes += fi.payload_bytes;
        ++sec_frames;
        sec_bytes += fi.payload_bytes;
      }
      if (n > 0) rte_pktmbuf_free_bulk(b.data(), n);
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  // A sender that is the memif client owns the shared memory: closing its
  // port takes the frames still in the ring with it. Stay until the
  // receiver had time to drain them (1024 descriptors; `--linger-ms`).
  if (tx && o.linger_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.linger_ms));
  std::printf(
      "{\"role\":\"%s\",\"frames\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"mpps\":%.4f,\"frame_bytes\":%u,"
      "\"icrc_bad\":%llu,\"parse_bad\":%llu,\"tx_refused\":%llu}\n",
      o.role.c_str(), static_cast<unsigned long long>(tot.frames), static_cast<unsigned long long>(tot.bytes), secs,
      tot.frames / secs / 1e6, frame_bytes, static_cast<unsigned long long>(tot.icrc_bad),
      static_cast<unsigned long long>(tot.parse_bad), static_cast<unsigned long long>(tot.tx_refused));
  std::fflush(stdout);
  return tot.icrc_bad + tot.parse_bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const sf::dpdk::SplitArgs args = sf::dpdk::split_args(argc, argv);
  const Options o = parse(args.app);
  auto eal = sf::dpdk::init_eal(args.eal);
  if (!eal) {
    std::fprintf(stderr, "roce_floor: %s\n", eal.error().c_str());
    return 1;
  }
  int rc = 1;
  {
    sf::dpdk::MempoolSizing sz;
    sz.extra = 4096;
    auto pool = sf::dpdk::create_pktmbuf_pool("roce_floor", sz, static_cast<uint16_t>(o.mbuf_size));
    if (!pool) {
      std::fprintf(stderr, "roce_floor: %s\n", pool.error().c_str());
      sf::dpdk::cleanup_eal();
      return 1;
    }
    sf::dpdk::PortConfig pc;
    pc.devargs = o.port;
    // As sf-nic opens its port for a 4096 B path MTU: memif then gets bsize
    // 8192 (one descriptor per frame) and keeps its own MTU limit.
    pc.mtu = static_cast<uint16_t>(4096 + 128);
    pc.mtu_best_effort = true;
    pc.link_wait = sf::dpdk::LinkWait::kSkip;  // run() waits, after the ready file
    auto port = Port::open(pc, *pool);
    if (!port) {
      std::fprintf(stderr, "roce_floor: %s\n", port.error().c_str());
    } else {
      std::signal(SIGINT, on_signal);
      std::signal(SIGTERM, on_signal);
      rc = run(o, *pool, *port);
      port->close();
    }
    rte_mempool_free(*pool);
  }
  sf::dpdk::cleanup_eal();
  return rc;
}
