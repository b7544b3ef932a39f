// sf-decode: prints one JSON line per frame of a classic pcap file with every
// decoded header field, the ICRC status and, for rejected frames, the reason.
// Exit status: 0 all frames read, 2 unreadable/bad pcap (usage errors too).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "tools/sf-decode/frame_json.h"
#include "tools/sf-decode/pcap_reader.h"

namespace {

constexpr int kExitBadInput = 2;

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: sf-decode [MRC OPTIONS] FILE.pcap\n"
               "Decode every frame of a classic pcap file (Ethernet link type; usec or nsec\n"
               "timestamps, either byte order; not pcapng) with softfabric's wire parsers.\n"
               "Prints one JSON object per line: frame index, timestamp, every decoded header\n"
               "(eth, vlan, ipv4|ipv6, outer_ipv6 for SRv6, udp, bth, reth, aeth, immdt, ieth,\n"
               "deth, atomic_eth, atomic_ack_eth, mac_control; for MRC frames mrc, meth, seth,\n"
               "cc_state, neth, peth, erth, eeth), \"icrc\": ok|bad|not_roce and, when the\n"
               "frame is rejected, \"error\": <reason>.\n"
               "MRC options (docs/mrc.md):\n"
               "  --mrc-port N          UDP destination port of MRC frames (default 4791)\n"
               "  --mrc-opcode-base B   0xC0 (default) or 0xE0\n"
               "  --mrc-trim-dscp D     DSCP D (0..63) marks trimmed MRC data frames (repeatable)\n"
               "  --no-mrc              MRC opcodes are unknown_opcode\n"
               "Exit status: 0 on success, 2 if the file cannot be read or is not a valid pcap\n"
               "or an option is invalid.\n");
}

// An unsigned number (decimal or 0x hex) in [0, max], or -1.
long parse_num(const std::string& s, long max) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 0);
  if (s.empty() || end == nullptr || *end != '\0' || v < 0 || v > max) return -1;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    usage(stdout);
    return 0;
  }
  sf::wire::ParseOptions opt;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    long v = -1;
    if (a == "--no-mrc") {
      opt.mrc.enabled = false;
    } else if (a == "--mrc-port" && has_value && (v = parse_num(argv[++i], 65535)) > 0) {
      opt.mrc.udp_port = static_cast<uint16_t>(v);
    } else if (a == "--mrc-opcode-base" && has_value && (v = parse_num(argv[++i], 255)) >= 0) {
      opt.mrc.opcode_base = static_cast<uint8_t>(v);
    } else if (a == "--mrc-trim-dscp" && has_value && (v = parse_num(argv[++i], 63)) >= 0) {
      opt.mrc.trimmed_dscp_mask |= uint64_t{1} << v;
    } else if (a.rfind("--", 0) == 0 || !path.empty()) {
      std::fprintf(stderr, "sf-decode: bad argument '%s'%s\n", argv[i],
                   a.rfind("--mrc-", 0) == 0 ? " (missing or out-of-range value)" : "");
      usage(stderr);
      return kExitBadInput;
    } else {
      path = a;
    }
  }
  if (const char* e = sf::wire::mrc_wire_config_error(opt.mrc)) {
    std::fprintf(stderr, "sf-decode: --mrc-opcode-base/--mrc-port: %s\n", e);
    return kExitBadInput;
  }
  if (path.empty()) {
    usage(stderr);
    return kExitBadInput;
  }
  sf::tools::PcapReader reader;
  if (!reader.open(path)) {
    std::fprintf(stderr, "sf-decode: %s\n", reader.error().c_str());
    return kExitBadInput;
  }
  uint64_t index = 0;
  while (auto rec = reader.next()) {
    auto j = sf::tools::frame_to_json(rec->data, opt);
    j["frame"] = index++;
    j["ts_ns"] = rec->ts_ns;
    if (rec->orig_len != rec->data.size()) j["orig_len"] = rec->orig_len;
    std::cout << j.dump() << '\n';
  }
  if (!reader.error().empty()) {
    std::fprintf(stderr, "sf-decode: %s: %s\n", path.c_str(), reader.error().c_str());
    return kExitBadInput;
  }
  return 0;
}
