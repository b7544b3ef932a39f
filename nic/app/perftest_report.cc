// perftest's report formats (linux-rdma/perftest src/perftest_parameters.{h,c}).
#include "nic/app/perftest_report.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

namespace sf::nic {
namespace {

// printf into a std::string (report code, control thread).
__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string s(static_cast<size_t>(std::max(n, 0)), '\0');
  std::vsnprintf(s.data(), s.size() + 1, f, ap2);
  va_end(ap2);
  return s;
}

constexpr std::string_view kResultLine =
    "---------------------------------------------------------------------------------------\n";

int rtt_factor(PerftestVerb v) { return v == PerftestVerb::kRead ? 1 : 2; }

std::string_view verb_word(PerftestVerb v) {
  switch (v) {
    case PerftestVerb::kSend: return "send";
    case PerftestVerb::kWrite: return "write";
    case PerftestVerb::kRead: return "read";
  }
  return "?";
}

}  // namespace

std::string_view to_string(PerftestVerb v) {
  switch (v) {
    case PerftestVerb::kSend: return "Send";
    case PerftestVerb::kWrite: return "RDMA_Write";
    case PerftestVerb::kRead: return "RDMA_Read";
  }
  return "?";
}

std::string_view to_string(PerftestKind k) { return k == PerftestKind::kBw ? "bw" : "lat"; }

std::string to_string(const PerftestTest& t) {
  return std::string(verb_word(t.verb)) + "_" + std::string(to_string(t.kind));
}

std::optional<PerftestTest> perftest_test_from_string(std::string_view s) {
  if (s.substr(0, 3) == "ib_") s.remove_prefix(3);
  for (PerftestVerb v : {PerftestVerb::kSend, PerftestVerb::kWrite, PerftestVerb::kRead}) {
    for (PerftestKind k : {PerftestKind::kBw, PerftestKind::kLat}) {
      const PerftestTest t{v, k};
      if (s == to_string(t)) return t;
    }
  }
  return std::nullopt;
}

std::string_view result_line() { return kResultLine; }

std::string format_banner(const PerftestBanner& b) {
  std::string s(kResultLine);
  s += "                    ";
  s += fmt("%s ", std::string(to_string(b.test.verb)).c_str());
  if (b.test.kind == PerftestKind::kBw) {
    if (b.bidirectional) s += "Bidirectional ";
    s += "BW ";
  } else {
    s += "Latency ";
  }
  s += "Test\n";
  s += fmt(" Dual-port       : %s\t\tDevice         : %s\n", "OFF", b.device.c_str());
  s += fmt(" Number of qps   : %u\t\tTransport type : %s\n", b.num_qps, b.transport_type.c_str());
  s += fmt(" Connection type : %s\t\tUsing SRQ      : %s\n", b.connection_type.c_str(), b.use_srq ? "ON" : "OFF");
  if (b.role == PerftestRole::kClient || b.bidirectional) s += fmt(" TX depth        : %u\n", b.tx_depth);
  if (b.test.verb == PerftestVerb::kSend && (b.role == PerftestRole::kServer || b.bidirectional)) {
    s += fmt(" RX depth        : %u\n", b.rx_depth);
  }
  if (b.test.kind == PerftestKind::kBw) s += fmt(" CQ Moderation   : %u\n", b.cq_moderation);
  s += fmt(" Mtu             : %u[B]\n", b.mtu_bytes);
  s += fmt(" Link type       : %s\n", b.link_type.c_str());
  if (b.gid_index != -1) s += fmt(" GID index       : %d\n", b.gid_index);
  if (b.test.verb != PerftestVerb::kRead) {
    s += fmt(" Max inline data : %u[B]\n", b.max_inline_bytes);
  } else {
    s += fmt(" Outstand reads  : %u\n", b.outstanding_reads);
  }
  s += " rdma_cm QPs\t : OFF\n";
  s += " Data ex. method : Ethernet\n";
  s += kResultLine;
  return s;
}

std::string format_qp_address(const QpConnInfo& qp, bool remote, PerftestVerb verb, int gid_index,
                              uint32_t outstanding_reads) {
  std::string s = fmt(" %s address: LID %#04x QPN %#06x PSN %#06x", remote ? "remote" : "local", qp.lid, qp.qpn,
                      qp.psn);
  if (verb == PerftestVerb::kRead) s += fmt(" OUT %#04x", outstanding_reads);
  if (verb != PerftestVerb::kSend) {
    s += fmt(" RKey %#08x VAddr %#016llx", qp.rkey, static_cast<unsigned long long>(qp.va));
  }
  s += "\n";
  if (gid_index > -1) {
    s += " GID: ";
    for (size_t i = 0; i < qp.gid.size(); ++i) {
      if (i > 0) s += ":";
      s += fmt("%02d", qp.gid[i]);
    }
    s += "\n";
  }
  return s;
}

// ---- bandwidth ----

BwReport compute_bw(const BwResults& r, BwUnits units) {
  if (r.elapsed <= TimeNs::zero()) throw std::invalid_argument("compute_bw: elapsed must be > 0");
  // perftest's format_factor: bytes/s per unit.
  const double factor = units == BwUnits::kGbps ? 125000000.0 : 1048576.0;
  const double sec = static_cast<double>(r.elapsed.ns()) / 1e9;
  BwReport out;
  out.size_bytes = r.size_bytes;
  out.iterations = r.iterations;
  out.units = units;
  out.bw_avg = static_cast<double>(r.size_bytes) * static_cast<double>(r.iterations) / sec / factor;
  out.msg_rate_mpps = static_cast<double>(r.iterations) / sec / 1e6;
  out.bw_peak = r.best_msg_time > TimeNs::zero()
                    ? static_cast<double>(r.size_bytes) * 1e9 / (static_cast<double>(r.best_msg_time.ns()) * factor)
                    : 0.0;
  return out;
}

TimeNs perftest_peak_msg_time(std::span<const TimeNs> posted, std::span<const TimeNs> completed, uint32_t cq_mod) {
  const size_t n = std::min(posted.size(), completed.size());
  if (n == 0) throw std::invalid_argument("perftest_peak_msg_time: no messages");
  const size_t mod = std::max<uint32_t>(1, cq_mod);
  int64_t best = std::numeric_limits<int64_t>::max();
  auto consider = [&](size_t i, size_t j) {
    const int64_t t = (completed[j] - posted[i]).ns() / static_cast<int64_t>(j - i + 1);
    best = std::min(best, t);
  };
  for (size_t i = 0; i < n; ++i) {
    // ROUND_UP(i + 1, cq_mod) - 1: the first CQE-generating message at or after i.
    for (size_t j = (i + 1 + mod - 1) / mod * mod - 1; j < n; j += mod) consider(i, j);
    if (n % mod != 0) consider(i, n - 1);  // the last message is always signalled
  }
  return TimeNs(best);
}

std::string bw_header(BwUnits units) {
  return units == BwUnits::kGbps
             ? " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
             : " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n";
}

std::string format_bw_row(const BwReport& r) {
  const unsigned long size = r.size_bytes;
  const unsigned long iters = r.iterations;
  if (r.bw_avg < 0.1 && r.units == BwUnits::kGbps) {  // perftest's inc_accuracy
    return fmt(" %-7lu    %lu           %-7.6lf            %-7.6lf            %-7.6lf\n", size, iters, r.bw_peak,
               r.bw_avg, r.msg_rate_mpps);
  }
  return fmt(" %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf\n", size, iters, r.bw_peak, r.bw_avg,
             r.msg_rate_mpps);
}

std::string format_bw_json(const PerftestTest& t, const BwReport& r) {
  const char* unit = r.units == BwUnits::kGbps ? "gbps" : "mbps";
  return fmt("{\"test\":\"%s\",\"bytes\":%llu,\"iterations\":%llu,\"bw_peak_%s\":%.6f,\"bw_avg_%s\":%.6f,"
             "\"msg_rate_mpps\":%.6f}\n",
             to_string(t).c_str(), static_cast<unsigned long long>(r.size_bytes),
             static_cast<unsigned long long>(r.iterations), unit, r.bw_peak, unit, r.bw_avg, r.msg_rate_mpps);
}

// ---- latency ----

LatReport compute_lat(const LatResults& r) {
  constexpr size_t kTail = 2;  // LAT_MEASURE_TAIL
  if (r.deltas_ns.size() < kTail + 1) {
    throw std::invalid_argument("compute_lat: need at least 3 samples, got " + std::to_string(r.deltas_ns.size()));
  }
  std::vector<int64_t> d(r.deltas_ns.begin(), r.deltas_ns.end());
  std::sort(d.begin(), d.end());
  const size_t m = d.size() - kTail;
  const double q = 1000.0 * rtt_factor(r.verb);  // ns -> us, halved for WRITE/SEND round trips
  // get_median(): n even -> mean of the two middle values (integer), n odd -> the middle one.
  const int64_t median = (m % 2 == 0) ? (d[m / 2] + d[m / 2 - 1]) / 2 : d[m / 2];
  double sum = 0;
  for (size_t i = 0; i < m; ++i) sum += static_cast<double>(d[i]) / q;
  const double avg = sum / static_cast<double>(m);
  double var_sum = 0;
  for (size_t i = 0; i < m; ++i) {
    const double dev = avg - static_cast<double>(d[i]) / q;
    var_sum += dev * dev;
  }
  const auto i99 = static_cast<size_t>(std::ceil(static_cast<double>(m) * 0.99));
  const auto i999 = static_cast<size_t>(std::ceil(static_cast<double>(m) * 0.999));
  LatReport out;
  out.size_bytes = r.size_bytes;
  out.iterations = r.iterations;
  out.t_min_us = static_cast<double>(d[0]) / q;
  out.t_max_us = static_cast<double>(d[m]) / q;
  out.t_typical_us = static_cast<double>(median) / q;
  out.t_avg_us = avg;
  out.t_stdev_us = std::sqrt(var_sum / static_cast<double>(m));
  out.p99_us = static_cast<double>(d[std::min(i99, d.size() - 1)]) / q;
  out.p999_us = static_cast<double>(d[std::min(i999, d.size() - 1)]) / q;
  return out;
}

std::string lat_header() {
  return " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
         "99% percentile[usec]   99.9% percentile[usec] \n";
}

std::string format_lat_row(const LatReport& r) {
  return fmt(" %-7lu %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
             static_cast<unsigned long>(r.size_bytes), static_cast<int>(r.iterations), r.t_min_us, r.t_max_us,
             r.t_typical_us, r.t_avg_us, r.t_stdev_us, r.p99_us, r.p999_us);
}

std::string format_lat_json(const PerftestTest& t, const LatReport& r) {
  return fmt("{\"test\":\"%s\",\"bytes\":%llu,\"iterations\":%llu,\"t_min_us\":%.6f,\"t_max_us\":%.6f,"
             "\"t_typical_us\":%.6f,\"t_avg_us\":%.6f,\"t_stdev_us\":%.6f,\"p99_us\":%.6f,\"p99_9_us\":%.6f}\n",
             to_string(t).c_str(), static_cast<unsigned long long>(r.size_bytes),
             static_cast<unsigned long long>(r.iterations), r.t_min_us, r.t_max_us, r.t_typical_us, r.t_avg_us,
             r.t_stdev_us, r.p99_us, r.p999_us);
}

LatDurationReport compute_lat_duration(const LatDurationResults& r) {
  if (r.elapsed <= TimeNs::zero() || r.iterations == 0) {
    throw std::invalid_argument("compute_lat_duration: elapsed and iterations must be > 0");
  }
  LatDurationReport out;
  out.size_bytes = r.size_bytes;
  out.iterations = r.iterations;
  const double elapsed_us = static_cast<double>(r.elapsed.ns()) / 1000.0;
  out.t_avg_us = elapsed_us / rtt_factor(r.verb) / static_cast<double>(r.iterations);
  out.tps = static_cast<double>(r.iterations) / (elapsed_us / 1e6);
  return out;
}

std::string lat_duration_header() { return " #bytes        #iterations       t_avg[usec]    tps average\n"; }

std::string format_lat_duration_row(const LatDurationReport& r) {
  return fmt(" %-7lu       %d            %-7.2f        %-7.2f\n", static_cast<unsigned long>(r.size_bytes),
             static_cast<int>(r.iterations), r.t_avg_us, r.tps);
}

}  // namespace sf::nic
