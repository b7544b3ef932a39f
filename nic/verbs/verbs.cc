// Verbs enums as text (rdma-core libibverbs/enum_strs.c) and small helpers. See verbs.h.
#include "nic/verbs/verbs.h"

namespace sf::nic::verbs {

const char* wc_status_str(int status) {
  // rdma-core enum_strs.c, ibv_wc_status_str(): exact strings.
  static const char* const kStr[] = {
      "success",
      "local length error",
      "local QP operation error",
      "local EE context operation error",
      "local protection error",
      "Work Request Flushed Error",
      "memory management operation error",
      "bad response error",
      "local access error",
      "remote invalid request error",
      "remote access error",
      "remote operation error",
      "transport retry counter exceeded",
      "RNR retry counter exceeded",
      "local RDD violation error",
      "remote invalid RD request",
      "aborted error",
      "invalid EE context number",
      "invalid EE context state",
      "fatal error",
      "response timeout error",
      "general error",
      "TM error",
      "TM software rendezvous",
  };
  if (status < 0 || status >= static_cast<int>(sizeof(kStr) / sizeof(kStr[0]))) return "unknown";
  return kStr[status];
}

const char* to_string(WcStatus s) { return wc_status_str(static_cast<int>(s)); }

const char* to_string(WcOpcode op) {
  switch (op) {
    case WcOpcode::kSend: return "SEND";
    case WcOpcode::kRdmaWrite: return "RDMA_WRITE";
    case WcOpcode::kRdmaRead: return "RDMA_READ";
    case WcOpcode::kCompSwap: return "COMP_SWAP";
    case WcOpcode::kFetchAdd: return "FETCH_ADD";
    case WcOpcode::kBindMw: return "BIND_MW";
    case WcOpcode::kLocalInv: return "LOCAL_INV";
    case WcOpcode::kTso: return "TSO";
    case WcOpcode::kRecv: return "RECV";
    case WcOpcode::kRecvRdmaWithImm: return "RECV_RDMA_WITH_IMM";
  }
  return "UNKNOWN";
}

const char* to_string(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite: return "RDMA_WRITE";
    case WrOpcode::kRdmaWriteWithImm: return "RDMA_WRITE_WITH_IMM";
    case WrOpcode::kSend: return "SEND";
    case WrOpcode::kSendWithImm: return "SEND_WITH_IMM";
    case WrOpcode::kRdmaRead: return "RDMA_READ";
  }
  return "UNKNOWN";
}

const char* to_string(QpState s) {
  switch (s) {
    case QpState::kReset: return "RESET";
    case QpState::kInit: return "INIT";
    case QpState::kRtr: return "RTR";
    case QpState::kRts: return "RTS";
    case QpState::kSqd: return "SQD";
    case QpState::kSqe: return "SQE";
    case QpState::kErr: return "ERR";
    case QpState::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

uint32_t mtu_bytes(Mtu m) {
  const auto v = static_cast<uint8_t>(m);
  return v >= 1 && v <= 5 ? 128u << v : 0u;
}

Gid gid_from_ipv4(const wire::Ipv4Addr& ip) {
  Gid g;
  g.bytes[10] = 0xFF;
  g.bytes[11] = 0xFF;
  for (int i = 0; i < 4; ++i) g.bytes[12 + i] = ip.bytes[i];
  return g;
}


}  // namespace sf::nic::verbs
