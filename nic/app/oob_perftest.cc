// perftest's out-of-band message codec. See oob_perftest.h.
#include "nic/app/oob_perftest.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "nic/app/oob_exchange.h"

namespace sf::nic {
namespace {

[[noreturn]] void bad(std::string_view what, const std::string& why, std::string_view msg) {
  throw OobError(std::string(what) + ": " + why + " (got '" + printable(msg) + "')");
}

void want_size(std::string_view msg, size_t n, std::string_view what) {
  if (msg.size() != n) bad(what, "want " + std::to_string(n) + " bytes, got " + std::to_string(msg.size()), msg);
}

// `digits` lower-case hex digits at msg[pos], then ':'.
uint64_t hex_field(std::string_view msg, size_t& pos, size_t digits, std::string_view what, const char* field) {
  uint64_t v = 0;
  for (size_t i = 0; i < digits; ++i) {
    const int d = hex_value(msg[pos + i]);  // perftest prints lower case (%x)
    if (d < 0) bad(what, std::string(field) + ": not a hex digit at byte " + std::to_string(pos + i), msg);
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  pos += digits;
  if (msg[pos] != ':') bad(what, std::string(field) + ": want ':' at byte " + std::to_string(pos), msg);
  ++pos;
  return v;
}

void put_be64(std::string& out, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out += static_cast<char>((v >> s) & 0xff);
}

uint64_t get_be64(std::string_view m, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(m[at + i]);
  return v;
}

}  // namespace

std::optional<PerftestPlan> perftest_plan(std::string_view test) {
  PerftestPlan p;
  if (test == "write_bw" || test == "read_bw") {
    p.after_traffic = 1;
    p.bw_report = true;
  } else if (test == "send_bw") {
    p.between_rounds = 1;
  } else if (test == "read_lat" || test == "send_lat" || test == "write_lat") {
    p.before_traffic = 2;
    p.close = test != "write_lat";  // ib_send_lat closes as ib_read_lat does
    p.slot1_address = test != "send_lat";
  } else {
    return std::nullopt;
  }
  return p;
}

std::string encode_perftest_version() {
  std::string m(kPerftestVersionBytes, '\0');
  std::memcpy(m.data(), kPerftestVersion.data(), kPerftestVersion.size());
  return m;
}

std::string parse_perftest_version(std::string_view msg, std::string_view what) {
  want_size(msg, kPerftestVersionBytes, what);
  const size_t len = msg.find('\0');
  const std::string_view v = msg.substr(0, len);
  // perftest's VERSION: "MAJOR.MINOR", digits.
  const size_t dot = v.find('.');
  const bool digits = !v.empty() && v.find_first_not_of("0123456789.") == std::string_view::npos;
  if (!digits || dot == 0 || dot == std::string_view::npos || dot + 1 == v.size()) {
    bad(what, "not perftest's version string (is the peer sf-nic without --oob-format perftest?)", msg);
  }
  return std::string(v);
}

std::string encode_perftest_u32(uint32_t v) {
  std::string m(4, '\0');
  for (int i = 0; i < 4; ++i) m[static_cast<size_t>(i)] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  return m;
}

uint32_t parse_perftest_u32(std::string_view msg, std::string_view what) {
  want_size(msg, 4, what);
  uint32_t v = 0;
  for (char c : msg) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

std::string encode_perftest_mtu(uint32_t mtu_bytes) {
  int e = 1;  // IBV_MTU_256
  for (uint32_t m = 256; m < mtu_bytes && e < 5; m <<= 1) ++e;
  return std::string{static_cast<char>('0' + e), '\0'};
}

uint32_t parse_perftest_mtu(std::string_view msg, std::string_view what) {
  want_size(msg, 2, what);
  if (msg[0] < '1' || msg[0] > '5' || msg[1] != '\0') bad(what, "MTU: want an IBV_MTU value 1..5", msg);
  return 256u << (msg[0] - '1');
}

std::string encode_perftest_dest(const PerftestDest& d) {
  char b[kPerftestDestBytes + 1];
  int n = std::snprintf(b, sizeof b, "%04x:%04x:%06x:%06x:%08x:%016llx:", d.lid, d.out_reads, d.qpn & 0xffffff,
                        d.psn & 0xffffff, d.rkey, static_cast<unsigned long long>(d.vaddr));
  for (uint8_t g : d.gid) n += std::snprintf(b + n, sizeof b - static_cast<size_t>(n), "%02x:", g);
  n += std::snprintf(b + n, sizeof b - static_cast<size_t>(n), "%08x:", d.srqn);
  return std::string(b, static_cast<size_t>(n) + 1);  // with the NUL
}

PerftestDest parse_perftest_dest(std::string_view msg, std::string_view what) {
  want_size(msg, kPerftestDestBytes, what);
  if (msg.back() != '\0') bad(what, "QP info: want a NUL at byte 107", msg);
  PerftestDest d;
  size_t pos = 0;
  d.lid = static_cast<uint16_t>(hex_field(msg, pos, 4, what, "lid"));
  d.out_reads = static_cast<uint16_t>(hex_field(msg, pos, 4, what, "out_reads"));
  d.qpn = static_cast<uint32_t>(hex_field(msg, pos, 6, what, "qpn"));
  d.psn = static_cast<uint32_t>(hex_field(msg, pos, 6, what, "psn"));
  d.rkey = static_cast<uint32_t>(hex_field(msg, pos, 8, what, "rkey"));
  d.vaddr = hex_field(msg, pos, 16, what, "vaddr");
  for (uint8_t& g : d.gid) g = static_cast<uint8_t>(hex_field(msg, pos, 2, what, "gid"));
  d.srqn = static_cast<uint32_t>(hex_field(msg, pos, 8, what, "srqn"));
  if (d.qpn == 0) bad(what, "qpn: 0 is not an RC QP", msg);
  return d;
}

std::string encode_perftest_bw_rep(const PerftestBwRep& r) {
  std::string m;
  m.reserve(kPerftestBwRepBytes);
  put_be64(m, r.size);
  put_be64(m, r.iters);
  put_be64(m, std::bit_cast<uint64_t>(r.bw_peak));
  put_be64(m, std::bit_cast<uint64_t>(r.bw_avg));
  put_be64(m, std::bit_cast<uint64_t>(r.msg_rate_mpps));
  return m;
}

PerftestBwRep parse_perftest_bw_rep(std::string_view msg, std::string_view what) {
  want_size(msg, kPerftestBwRepBytes, what);
  PerftestBwRep r;
  r.size = get_be64(msg, 0);
  r.iters = get_be64(msg, 8);
  r.bw_peak = std::bit_cast<double>(get_be64(msg, 16));
  r.bw_avg = std::bit_cast<double>(get_be64(msg, 24));
  r.msg_rate_mpps = std::bit_cast<double>(get_be64(msg, 32));
  return r;
}

PerftestDest to_perftest_dest(const QpConnInfo& q, uint16_t out_reads) {
  PerftestDest d;
  d.lid = q.lid;
  d.out_reads = out_reads;
  d.qpn = q.qpn;
  d.psn = q.psn;
  d.rkey = q.rkey;
  d.vaddr = q.va;
  d.gid = q.gid;
  return d;
}

QpConnInfo to_conn_info(const PerftestDest& d, uint32_t mtu_bytes, uint64_t msg_size_bytes) {
  QpConnInfo q;
  q.lid = d.lid;
  q.qpn = d.qpn;
  q.psn = d.psn;
  q.rkey = d.rkey;
  q.va = d.vaddr;
  q.gid = d.gid;
  q.mtu_bytes = mtu_bytes;
  q.msg_size_bytes = msg_size_bytes;
  q.out_reads = static_cast<uint8_t>(std::min<uint16_t>(d.out_reads, 255));
  q.port_gid[0] = d.gid;
  return q;
}

}  // namespace sf::nic
