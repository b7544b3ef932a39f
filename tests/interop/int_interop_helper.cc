// Interop helper for tests/interop/int_interop.py (docs/switch.md "INT"):
//   int-interop-helper gen OUT.pcap
// builds RoCEv2 requests of an HPCC flow (BTH INT flag, ICRC, empty shim:
// what sf-nic sends), passes them through a SwitchNode with INT on the
// egress queue (one or two hops), and writes what the switch sent to
// OUT.pcap; prints one JSON manifest line per frame (headers as built, the
// hops expected, the sender's frame before its shim as hex).
#include <rte_mbuf.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config/json_loader.h"
#include "common/dpdk/eal.h"
#include "common/dpdk/mempool.h"
#include "common/wire/frame_builder.h"
#include "common/wire/frame_parser.h"
#include "common/wire/icrc.h"
#include "common/wire/int_shim.h"
#include "switch/config/switch_config.h"
#include "switch/pipeline/switch_node.h"
#include "tests/interop/pcap_writer.h"
#include "tests/support/mbuf_chain.h"

namespace {

using namespace sf;

rte_mempool* g_pool = nullptr;

constexpr const char* kDoc = R"({
  "PORT": {"Ethernet0": {"devargs": "a", "speed": 400, "mtu": 9100},
           "Ethernet4": {"devargs": "b", "speed": 400, "mtu": 9100},
           "Ethernet8": {"devargs": "c", "speed": 100, "mtu": 9100}},
  "FDB": {"02:00:00:00:00:0b": {"port": "Ethernet4"}},
  "INT": {"Ethernet4|0-7": {"enable": "true"}}
})";

const wire::MacAddr kA{{0x02, 0, 0, 0, 0, 0x0A}};
const wire::MacAddr kB{{0x02, 0, 0, 0, 0, 0x0B}};

std::string hex(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t c : b) {
    s.push_back(d[c >> 4]);
    s.push_back(d[c & 15]);
  }
  return s;
}

struct Case {
  std::string name;
  bool v6 = false;
  wire::Opcode op = wire::Opcode::kRcWriteOnly;
  size_t payload = 256;
  int hops = 1;  // switch passes
};

int gen(const std::string& path) {
  const sw::SwitchConfig cfg = sw::parse_switch_config(config::parse_text(kDoc));
  const std::vector<std::array<uint8_t, 6>> macs(3, {0x02, 0x53, 0x46, 0, 0, 1});
  sw::SwitchNode node(cfg, macs, g_pool);
  sf::wire::test::PcapWriter pcap(path);
  const Case cases[] = {{"v4_write_only", false, wire::Opcode::kRcWriteOnly, 256, 1},
                        {"v4_write_first", false, wire::Opcode::kRcWriteFirst, 4096, 1},
                        {"v4_send_only_2hops", false, wire::Opcode::kRcSendOnly, 1000, 2},
                        {"v6_write_only", true, wire::Opcode::kRcWriteOnly, 512, 1},
                        {"v6_write_only_imm_2hops", true, wire::Opcode::kRcWriteOnlyImm, 64, 2},
                        {"v4_write_only_odd", false, wire::Opcode::kRcWriteOnly, 37, 1}};
  uint32_t psn = 100;
  int64_t t_ns = 1000;
  for (const Case& c : cases) {
    wire::RoceFrameSpec s;
    s.l2 = {kB, kA, std::nullopt};
    if (c.v6) {
      wire::Ipv6Spec ip;
      ip.src.bytes[15] = 1;
      ip.dst.bytes[15] = 2;
      ip.dscp = 26;
      ip.ecn = wire::Ecn::kEct0;
      ip.flow_label = 0x12345;
      s.l3 = ip;
    } else {
      wire::Ipv4Spec ip;
      ip.src.bytes = {10, 0, 0, 1};
      ip.dst.bytes = {10, 0, 0, 2};
      ip.dscp = 26;
      ip.ecn = wire::Ecn::kEct0;
      s.l3 = ip;
    }
    s.bth.opcode = c.op;
    s.bth.dest_qp = 0x00ABCD;
    s.bth.psn = wire::Psn(psn++);
    s.ext.reth_va = 0x7f00'1234'5000ULL;
    s.ext.reth_rkey = 0x1122'3344;
    s.ext.reth_dma_length = static_cast<uint32_t>(c.payload);
    s.ext.immdt = 0xCAFEF00D;
    std::vector<uint8_t> buf(c.payload + 512);
    const auto r = wire::build_roce_frame(buf, s, std::vector<uint8_t>(c.payload, 0x5A));
    if (!r.ok()) {
      std::fprintf(stderr, "%s: build failed\n", c.name.c_str());
      return 1;
    }
    uint32_t len = static_cast<uint32_t>(r.frame_bytes);
    const wire::FrameInfo f = wire::parse_frame(std::span<const uint8_t>(buf.data(), len));
    wire::set_bth_int_flag(*const_cast<wire::Bth*>(f.bth), true);
    wire::icrc_store(std::span<uint8_t>(buf.data(), len), f);
    const std::vector<uint8_t> sent(buf.begin(), buf.begin() + len);  // what the sender's ICRC covers
    if (wire::int_open(buf, len, wire::int_frame_ref(f), wire::kIntDefaultMaxHops) != wire::IntStatus::kOk) return 1;
    std::vector<uint8_t> frame(buf.begin(), buf.begin() + len);
    for (int h = 0; h < c.hops; ++h) {
      rte_mbuf* m = sf::test::make_mbuf_chain(g_pool, frame);  // chained past the data room (the 4 KiB case)
      if (m == nullptr) return 1;
      rte_mbuf* one[1] = {m};
      node.receive(h == 0 ? 0 : 2, one, TimeNs(t_ns));
      t_ns += 500;
      rte_mbuf* out[4];
      if (node.transmit(1, out, TimeNs(t_ns)) != 1) {
        std::fprintf(stderr, "%s: switch sent nothing\n", c.name.c_str());
        return 1;
      }
      frame = sf::test::take_bytes(out[0]);
    }
    pcap.write(frame);
    nlohmann::json j = {{"name", c.name}, {"l3", c.v6 ? "ipv6" : "ipv4"}, {"opcode", static_cast<int>(c.op)},
                        {"dest_qp", 0xABCD}, {"psn", psn - 1}, {"hops", c.hops}, {"payload", c.payload},
                        {"reth", {{"va", s.ext.reth_va}, {"rkey", s.ext.reth_rkey}, {"dma_length", c.payload}}},
                        {"sent", hex(sent)}, {"frame_bytes", frame.size()}};
    std::printf("%s\n", j.dump().c_str());
  }
  const sw::PortCounters& pc = node.counters(1);
  std::fprintf(stderr, "int_records %llu\n", static_cast<unsigned long long>(pc.int_records));
  return pcap.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "gen") {
    std::fprintf(stderr, "usage: int-interop-helper gen OUT.pcap\n");
    return 2;
  }
  sf::dpdk::EalOptions opts;
  opts.no_telemetry = true;
  auto eal = sf::dpdk::init_eal({argv[0], "--no-huge", "--no-pci", "--log-level", "*:warning"}, opts);
  if (!eal) {
    std::fprintf(stderr, "%s\n", eal.error().c_str());
    return 1;
  }
  auto mp = sf::dpdk::create_pktmbuf_pool("int_interop", 1023, 0);
  if (!mp) {
    std::fprintf(stderr, "%s\n", mp.error().c_str());
    return 1;
  }
  g_pool = *mp;
  const int rc = gen(argv[2]);
  sf::dpdk::cleanup_eal();
  return rc;
}
