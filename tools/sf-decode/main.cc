// sf-decode: prints one JSON line per frame of a classic pcap file with every
// decoded header field, the ICRC status and, for rejected frames, the reason.
// Exit status: 0 all frames read, 2 unreadable/bad pcap (usage errors too).
#include <cstdio>
#include <iostream>
#include <string>

#include "tools/sf-decode/frame_json.h"
#include "tools/sf-decode/pcap_reader.h"

namespace {

constexpr int kExitBadInput = 2;

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: sf-decode FILE.pcap\n"
               "Decode every frame of a classic pcap file (Ethernet link type; usec or nsec\n"
               "timestamps, either byte order; not pcapng) with softfabric's wire parsers.\n"
               "Prints one JSON object per line: frame index, timestamp, every decoded header\n"
               "(eth, vlan, ipv4|ipv6, outer_ipv6 for SRv6, udp, bth, reth, aeth, immdt, ieth,\n"
               "deth, atomic_eth, atomic_ack_eth, mac_control), \"icrc\": ok|bad|not_roce and,\n"
               "when the frame is rejected, \"error\": <reason>.\n"
               "Exit status: 0 on success, 2 if the file cannot be read or is not a valid pcap.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    usage(stdout);
    return 0;
  }
  if (argc != 2) {
    usage(stderr);
    return kExitBadInput;
  }
  sf::tools::PcapReader reader;
  if (!reader.open(argv[1])) {
    std::fprintf(stderr, "sf-decode: %s\n", reader.error().c_str());
    return kExitBadInput;
  }
  uint64_t index = 0;
  while (auto rec = reader.next()) {
    auto j = sf::tools::frame_to_json(rec->data);
    j["frame"] = index++;
    j["ts_ns"] = rec->ts_ns;
    if (rec->orig_len != rec->data.size()) j["orig_len"] = rec->orig_len;
    std::cout << j.dump() << '\n';
  }
  if (!reader.error().empty()) {
    std::fprintf(stderr, "sf-decode: %s: %s\n", argv[1], reader.error().c_str());
    return kExitBadInput;
  }
  return 0;
}
