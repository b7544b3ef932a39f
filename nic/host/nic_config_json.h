// NicConfig from a JSON document (docs/nic.md "Configuration"), with errors
// that name the JSON path (common/config ConfigNode):
//
//   {
//     "PORT": {"Ethernet0": {"devargs": "net_memif0", "speed": 100}},   // common PORT table
//     "NIC_HOST": {
//       "h0": {"mac": "02:00:00:00:00:01", "ipv4": "10.0.0.1", "ipv6": "fd00::1",
//              "ports": ["Ethernet0"], "max_qps": 64, "max_mrs": 64, "max_cqs": 64, "max_pds": 16,
//              "rc": {"max_unacked_psns": 128, "ack_req_every_pkts": 64,
//                     "cnp_interval": "50us", "cnp_dscp": 48, "ecn": true}}
//     },
//     "NIC_PORT": {                                                          // optional, per PORT name
//       "Ethernet0": {"rx_drain_rate": "25G", "rx_ring_pkts": 1024, "pfc_honour": true,
//                     "pfc_generate": [3], "pfc_xoff": 65536, "pfc_xon": 32768, "pfc_quanta": 65535}
//     }
//   }
//
// Node port i is PORT entry i (file order); its line rate is the PORT speed.
// Every port belongs to exactly one host. Throws config::ConfigError.
#pragma once

#include "common/config/config_node.h"
#include "common/config/port_config.h"
#include "nic/host/nic_config.h"

namespace sf::nic {

struct NicDocument {
  config::PortsConfig ports;  // the PORT table (devargs for the driver)
  NicConfig nic;
};

NicDocument parse_nic_config(const config::Json& doc);

}  // namespace sf::nic
