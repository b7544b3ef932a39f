// libsfrdmacm: librdmacm's ABI (Debian 12's rdma-core 44, RDMACM_1.0) in user
// space, for unmodified RDMA CM applications (perftest -R) over libsfverbs'
// device (docs/ibverbs.md "RDMA CM"). Preloaded beside libsfverbs.so:
//   LD_PRELOAD="libsfverbs.so libsfrdmacm.so"
// It is a plain verbs consumer: every device operation goes through the
// exported ibv_* calls (which libsfverbs serves under the preload).
//
// The CM exchange (REQ, REP, RTU, REJ, DREQ, DREP) runs over one TCP
// connection per connected cm_id, to the address and port the application
// names (rdma_listen's bound address, rdma_connect's resolved destination;
// SFVERBS_CM_HOSTS maps an RDMA address to the TCP address that reaches its
// process). A hardware CM sends MADs on QP1; this datapath has no QP1.
//
// Threading: one mutex guards every CM object. A service thread (started by
// the first rdma_listen / rdma_connect) polls the listening and connected
// sockets, handles each message under the mutex (moving QPs to RTR/RTS as
// librdmacm does on the connection's behalf) and queues events on their
// channel. A channel's fd is an eventfd that is readable while its queue is
// non-empty (level, not count), so the fd works with poll/epoll and
// rdma_destroy_id can drop an id's undelivered events.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>


namespace {

// ---- wire format of the CM messages (one TCP stream per connection) ----------------

enum class MsgType : uint8_t { kReq = 1, kRep = 2, kRtu = 3, kRej = 4, kDreq = 5, kDrep = 6 };

constexpr uint32_t kMagic = 0x5346434d;  // "SFCM"
constexpr uint8_t kVersion = 1;
constexpr size_t kMaxPrivate = 224;
// librdmacm's private data limits for RDMA_PS_TCP (rdma_connect(3), rdma_accept(3), rdma_reject(3)):
// the IB CM message's private data less the 36-byte CMA header on a REQ.
constexpr uint8_t kReqPrivate = 56;
constexpr uint8_t kRepPrivate = 196;
constexpr uint8_t kRejPrivate = 148;
// REJ reasons (IBA 12.6.7.2), the event's status as the kernel CM reports them.
constexpr int kRejInvalidServiceId = 8;   // no listener on the port
constexpr int kRejConsumerDefined = 28;   // rdma_reject
constexpr uint8_t kMaxRdAtomic = 16;      // the NIC's limit (ibv_query_device max_qp_rd_atom)

// Fixed size, every multi-byte field big-endian (written with hton*).
struct Msg {
  uint32_t magic;
  uint8_t version;
  uint8_t type;
  uint8_t pd_len;
  uint8_t responder_resources;
  uint8_t initiator_depth;
  uint8_t retry_count;
  uint8_t rnr_retry_count;
  uint8_t flow_control;
  uint8_t srq;
  uint8_t pad;
  uint16_t reason;  // REJ
  uint32_t qpn;
  uint32_t psn;
  uint8_t gid[16];
  uint32_t ip;  // the sender's RDMA IPv4 address (network order)
  uint8_t private_data[kMaxPrivate];
};
static_assert(sizeof(Msg) == 268, "CM message size is part of the wire format");

// ---- objects -----------------------------------------------------------------------

struct Channel;

struct Event {
  rdma_cm_event ev;
  uint8_t pdata[kMaxPrivate];
};

enum class IdState {
  kIdle,
  kBound,
  kListening,
  kAddrResolved,
  kRouteResolved,
  kTcpConnecting,  // rdma_connect: the TCP connection is being made
  kTcpRetry,       // refused (no listener yet): tried again at retry_at
  kReqSent,
  kAwaitReq,       // accepted TCP connection, REQ not yet read (internal)
  kReqRcvd,        // CONNECT_REQUEST reported
  kRepSent,
  kConnected,
  kDisconnecting,  // DREQ sent
  kDisconnected,
  kRejected,
};

struct Remote {
  uint32_t qpn = 0, psn = 0;
  ibv_gid gid{};
  uint8_t responder_resources = 0, initiator_depth = 0, retry_count = 0, rnr_retry_count = 0;
};

struct Id {
  rdma_cm_id id;  // first: rdma_cm_id* == Id*
  IdState st = IdState::kIdle;
  int fd = -1;
  Msg rx{};
  size_t rx_len = 0;
  Id* listen = nullptr;  // the listener an accepted id came from
  bool visible = true;   // handed to the application
  Remote rem;
  uint32_t psn = 0;
  uint8_t resp_res = 0, init_depth = 0, retry = 7, rnr_retry = 7;
  uint8_t tos = 0, timeout = 14;
  bool own_cqs = false;
  std::chrono::steady_clock::time_point refused_until{};  // a refusal before this is retried
  std::chrono::steady_clock::time_point retry_at{};
};

struct Channel {
  rdma_event_channel ch;  // first
  std::deque<Event*> q;
  bool signalled = false;  // the eventfd holds a non-zero count
};

struct State {
  std::mutex mu;
  std::vector<Id*> ids;
  std::vector<Channel*> channels;
  int wake_fd = -1;
  bool thread_started = false;
  // The device (the process's first, opened once).
  bool dev_tried = false;
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  uint32_t ip = 0;  // network order
  int gid_index = -1;
  ibv_gid gid{};
  ibv_mtu mtu = IBV_MTU_1024;
  // SFVERBS_CM_HOSTS
  bool hosts_parsed = false;
  bool hosts_ok = true;
  std::vector<std::pair<uint32_t, uint32_t>> hosts;
  int connect_ms = 1000;  // SFVERBS_CM_CONNECT_MS
  std::mt19937 rng{std::random_device{}()};
};

State& S() {
  static State* s = new State();  // never destroyed: the service thread may outlive static destruction
  return *s;
}

int fail(int e) {
  errno = e;
  return -1;
}

Id* id_of(rdma_cm_id* id) { return reinterpret_cast<Id*>(id); }
Channel* ch_of(rdma_event_channel* c) { return reinterpret_cast<Channel*>(c); }

bool live(State& s, Id* id) { return std::find(s.ids.begin(), s.ids.end(), id) != s.ids.end(); }

void wake(State& s) {
  if (s.wake_fd >= 0) {
    const uint64_t one = 1;
    (void)!write(s.wake_fd, &one, sizeof one);
  }
}

// SFVERBS_CM_HOSTS=RDMA_IP=TCP_IP,...: the TCP address that reaches the
// process owning an RDMA address (default: the address itself). Under mu.
bool parse_hosts(State& s) {
  if (s.hosts_parsed) return s.hosts_ok;
  s.hosts_parsed = true;
  if (const char* ms = getenv("SFVERBS_CM_CONNECT_MS"); ms != nullptr && *ms != '\0') {
    char* end = nullptr;
    const long n = strtol(ms, &end, 10);
    if (*end != '\0' || n < 0 || n > 600000) {
      std::fprintf(stderr, "libsfrdmacm: SFVERBS_CM_CONNECT_MS: '%s' is not 0..600000 (docs/ibverbs.md)\n", ms);
      s.hosts_ok = false;
      return false;
    }
    s.connect_ms = static_cast<int>(n);
  }
  const char* v = getenv("SFVERBS_CM_HOSTS");
  if (v == nullptr || *v == '\0') return true;
  std::string all(v);
  size_t pos = 0;
  while (pos <= all.size()) {
    const size_t comma = all.find(',', pos);
    const std::string item = all.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t eq = item.find('=');
    in_addr a{}, b{};
    if (eq == std::string::npos || inet_pton(AF_INET, item.substr(0, eq).c_str(), &a) != 1 ||
        inet_pton(AF_INET, item.substr(eq + 1).c_str(), &b) != 1) {
      std::fprintf(stderr, "libsfrdmacm: SFVERBS_CM_HOSTS: '%s' is not RDMA_IPv4=TCP_IPv4 (docs/ibverbs.md)\n",
                   item.c_str());
      s.hosts_ok = false;
      return false;
    }
    s.hosts.emplace_back(a.s_addr, b.s_addr);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

uint32_t tcp_addr(State& s, uint32_t rdma_ip) {
  for (const auto& [r, t] : s.hosts) {
    if (r == rdma_ip) return t;
  }
  return rdma_ip;
}

// Opens the process's device once (under mu): its context, a PD for ids
// (librdmacm's per-device PD), the IPv4 GID and the active MTU.
bool open_device(State& s) {
  if (s.dev_tried) return s.ctx != nullptr;
  s.dev_tried = true;
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n == 0) {
    if (list != nullptr) ibv_free_device_list(list);
    std::fprintf(stderr, "libsfrdmacm: no RDMA device (is libsfverbs.so preloaded with SFVERBS_PORT set?)\n");
    return false;
  }
  ibv_context* ctx = ibv_open_device(list[0]);
  ibv_free_device_list(list);
  if (ctx == nullptr) return false;
  for (int i = 0; i < 2; ++i) {
    ibv_gid g{};
    if (ibv_query_gid(ctx, 1, i, &g) != 0) continue;
    static const uint8_t kV4Prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(g.raw, kV4Prefix, 12) == 0) {
      s.gid = g;
      s.gid_index = i;
      std::memcpy(&s.ip, g.raw + 12, 4);
      break;
    }
  }
  if (s.gid_index < 0) {
    std::fprintf(stderr, "libsfrdmacm: the device has no IPv4 GID (SFVERBS_IP): the CM supports IPv4 only\n");
    ibv_close_device(ctx);
    return false;
  }
  ibv_port_attr pa{};
  if (ibv_query_port(ctx, 1, &pa) == 0) s.mtu = pa.active_mtu;
  s.pd = ibv_alloc_pd(ctx);
  if (s.pd == nullptr) {
    ibv_close_device(ctx);
    return false;
  }
  s.ctx = ctx;
  return true;
}

void attach_device(State& s, Id* id) {
  id->id.verbs = s.ctx;
  id->id.pd = s.pd;
  id->id.port_num = 1;
}

// Queues an event on the id's channel (under mu).
void queue_event(Id* id, rdma_cm_event_type type, int status, Id* listen = nullptr, const Msg* m = nullptr,
                 uint8_t pd_len = 0) {
  Channel* ch = ch_of(id->id.channel);
  if (ch == nullptr) return;
  auto* e = new (std::nothrow) Event();
  if (e == nullptr) return;
  e->ev.id = &id->id;
  e->ev.listen_id = listen != nullptr ? &listen->id : nullptr;
  e->ev.event = type;
  e->ev.status = status;
  if (m != nullptr) {
    rdma_conn_param& c = e->ev.param.conn;
    std::memcpy(e->pdata, m->private_data, std::min<size_t>(m->pd_len, kMaxPrivate));
    c.private_data = pd_len != 0 ? e->pdata : nullptr;
    c.private_data_len = pd_len;
    c.responder_resources = m->responder_resources;
    c.initiator_depth = m->initiator_depth;
    c.flow_control = m->flow_control;
    c.retry_count = m->retry_count;
    c.rnr_retry_count = m->rnr_retry_count;
    c.srq = m->srq;
    c.qp_num = ntohl(m->qpn);
  }
  ch->q.push_back(e);
  if (!ch->signalled) {
    const uint64_t one = 1;
    (void)!write(ch->ch.fd, &one, sizeof one);
    ch->signalled = true;
  }
}

// The service thread's poll may hold a reference to the socket: close()
// alone would leave a listener listening (a second rdma_listen on the port
// fails with EADDRINUSE) and a connection open (the peer's DISCONNECTED
// late) until that poll returns. shutdown() acts at once.
void close_fd(Id* id) {
  if (id->fd >= 0) {
    shutdown(id->fd, SHUT_RDWR);
    close(id->fd);
  }
  id->fd = -1;
  id->rx_len = 0;
}

bool send_msg(Id* id, MsgType t, const void* pdata, uint8_t pd_len, State& s, uint16_t reason = 0) {
  if (id->fd < 0) return false;
  Msg m{};
  m.magic = htonl(kMagic);
  m.version = kVersion;
  m.type = static_cast<uint8_t>(t);
  m.pd_len = pd_len;
  m.responder_resources = id->resp_res;
  m.initiator_depth = id->init_depth;
  m.retry_count = id->retry;
  m.rnr_retry_count = id->rnr_retry;
  m.reason = htons(reason);
  m.qpn = htonl(id->id.qp != nullptr ? id->id.qp->qp_num : 0);
  m.psn = htonl(id->psn);
  std::memcpy(m.gid, s.gid.raw, 16);
  m.ip = s.ip;
  if (pd_len != 0 && pdata != nullptr) std::memcpy(m.private_data, pdata, pd_len);
  const auto* p = reinterpret_cast<const uint8_t*>(&m);
  size_t off = 0;
  while (off < sizeof m) {
    const ssize_t n = send(id->fd, p + off, sizeof m - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd pf{id->fd, POLLOUT, 0};
      if (poll(&pf, 1, 1000) <= 0) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The QP's INIT -> RTR -> RTS, from the peer's REQ or REP (librdmacm's
// ucma_modify_qp_rtr / ucma_modify_qp_rts). Returns 0 or an errno.
int connect_qp(State& s, Id* id) {
  ibv_qp* qp = id->id.qp;
  if (qp == nullptr) return 0;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = s.mtu;
  a.dest_qp_num = id->rem.qpn;
  a.rq_psn = id->rem.psn;
  a.max_dest_rd_atomic = id->resp_res;
  a.min_rnr_timer = 12;  // 0.64 ms
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (id->resp_res != 0 ? IBV_ACCESS_REMOTE_READ : 0);
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = id->rem.gid;
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(s.gid_index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.grh.traffic_class = id->tos;
  a.ah_attr.port_num = 1;
  int r = ibv_modify_qp(qp, &a,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS);
  if (r != 0) return r;
  ibv_qp_attr b{};
  b.qp_state = IBV_QPS_RTS;
  b.sq_psn = id->psn;
  b.timeout = id->timeout;
  b.retry_cnt = id->retry;
  b.rnr_retry = id->rnr_retry;
  b.max_rd_atomic = id->init_depth;
  return ibv_modify_qp(qp, &b,
                       IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_MAX_QP_RD_ATOMIC);
}

void qp_to_err(Id* id) {
  if (id->id.qp == nullptr) return;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  (void)ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
}

void remember_remote(Id* id, const Msg& m) {
  id->rem.qpn = ntohl(m.qpn) & 0xffffff;
  id->rem.psn = ntohl(m.psn) & 0xffffff;
  std::memcpy(id->rem.gid.raw, m.gid, 16);
  id->rem.responder_resources = m.responder_resources;
  id->rem.initiator_depth = m.initiator_depth;
  id->rem.retry_count = m.retry_count;
  id->rem.rnr_retry_count = m.rnr_retry_count;
}

void free_id(State& s, Id* id);

// The peer's connection ended (EOF, error, or a message out of turn).
void lost(State& s, Id* id, int err) {
  close_fd(id);
  switch (id->st) {
    case IdState::kAwaitReq:
      free_id(s, id);  // never reported
      return;
    case IdState::kReqSent:
    case IdState::kTcpConnecting:
    case IdState::kTcpRetry:
      id->st = IdState::kRejected;
      queue_event(id, RDMA_CM_EVENT_UNREACHABLE, -err);
      return;
    case IdState::kRepSent:
      id->st = IdState::kDisconnected;
      queue_event(id, RDMA_CM_EVENT_CONNECT_ERROR, -err);
      return;
    case IdState::kConnected:
    case IdState::kDisconnecting:
      id->st = IdState::kDisconnected;
      queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
      return;
    default:
      return;
  }
}

void handle_msg(State& s, Id* id, const Msg& m) {
  if (ntohl(m.magic) != kMagic || m.version != kVersion || m.pd_len > kMaxPrivate) {
    std::fprintf(stderr, "libsfrdmacm: a CM message that is not ours (magic/version/length): connection dropped\n");
    lost(s, id, EPROTO);
    return;
  }
  const auto t = static_cast<MsgType>(m.type);
  if (t == MsgType::kReq && id->st == IdState::kAwaitReq) {
    remember_remote(id, m);
    Id* l = id->listen;
    id->st = IdState::kReqRcvd;
    id->visible = true;
    attach_device(s, id);
    id->id.channel = l->id.channel;
    id->id.context = l->id.context;
    id->id.ps = l->id.ps;
    id->id.qp_type = l->id.qp_type;
    id->id.route.addr.src_sin.sin_family = AF_INET;
    id->id.route.addr.src_sin.sin_addr.s_addr = s.ip;
    id->id.route.addr.src_sin.sin_port = l->id.route.addr.src_sin.sin_port;
    id->id.route.addr.dst_sin.sin_family = AF_INET;
    id->id.route.addr.dst_sin.sin_addr.s_addr = m.ip;
    // The passive side's QP takes the REQ's retry counts (IBA 12.7.27-28).
    id->retry = m.retry_count;
    id->rnr_retry = m.rnr_retry_count;
    queue_event(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0, l, &m, kReqPrivate);
  } else if (t == MsgType::kRep && id->st == IdState::kReqSent) {
    remember_remote(id, m);
    // The active side: the peer's answer fixes the READ depths; the REP's
    // RNR retry count is the one this side's QP uses.
    id->init_depth = std::min(id->init_depth, m.responder_resources);
    id->resp_res = std::min(id->resp_res, m.initiator_depth);
    id->rnr_retry = m.rnr_retry_count;
    const int r = connect_qp(s, id);
    if (r != 0) {
      send_msg(id, MsgType::kRej, nullptr, 0, s, kRejConsumerDefined);
      close_fd(id);
      id->st = IdState::kRejected;
      queue_event(id, RDMA_CM_EVENT_CONNECT_ERROR, -r);
      return;
    }
    send_msg(id, MsgType::kRtu, nullptr, 0, s);
    id->st = IdState::kConnected;
    queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0, nullptr, &m, kRepPrivate);
  } else if (t == MsgType::kRtu && id->st == IdState::kRepSent) {
    id->st = IdState::kConnected;
    queue_event(id, RDMA_CM_EVENT_ESTABLISHED, 0);
  } else if (t == MsgType::kRej && (id->st == IdState::kReqSent || id->st == IdState::kRepSent)) {
    close_fd(id);
    const bool active = id->st == IdState::kReqSent;
    id->st = IdState::kRejected;
    queue_event(id, active ? RDMA_CM_EVENT_REJECTED : RDMA_CM_EVENT_CONNECT_ERROR, ntohs(m.reason), nullptr, &m,
                kRejPrivate);
  } else if (t == MsgType::kDreq && (id->st == IdState::kConnected || id->st == IdState::kRepSent ||
                                     id->st == IdState::kDisconnecting)) {
    // The DREP goes at once (the kernel CM sends it when the application
    // disconnects or destroys the id; nobody waits on it here).
    send_msg(id, MsgType::kDrep, nullptr, 0, s);
    close_fd(id);
    id->st = IdState::kDisconnected;
    queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
  } else if (t == MsgType::kDrep && id->st == IdState::kDisconnecting) {
    close_fd(id);
    id->st = IdState::kDisconnected;
    queue_event(id, RDMA_CM_EVENT_DISCONNECTED, 0);
  } else {
    std::fprintf(stderr, "libsfrdmacm: CM message type %u out of turn: connection dropped\n", m.type);
    lost(s, id, EPROTO);
  }
}

void on_listener(State& s, Id* l) {
  for (;;) {
    const int fd = accept4(l->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto* id = new (std::nothrow) Id();
    if (id == nullptr) {
      close(fd);
      return;
    }
    std::memset(&id->id, 0, sizeof id->id);
    id->fd = fd;
    id->st = IdState::kAwaitReq;
    id->listen = l;
    id->visible = false;
    id->psn = s.rng() & 0xffffff;
    id->tos = l->tos;
    id->timeout = l->timeout;
    s.ids.push_back(id);
  }
}

void on_readable(State& s, Id* id) {
  for (;;) {
    auto* p = reinterpret_cast<uint8_t*>(&id->rx);
    const ssize_t n = recv(id->fd, p + id->rx_len, sizeof(Msg) - id->rx_len, 0);
    if (n == 0) {
      lost(s, id, ECONNRESET);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return;
      lost(s, id, errno);
      return;
    }
    id->rx_len += static_cast<size_t>(n);
    if (id->rx_len == sizeof(Msg)) {
      id->rx_len = 0;
      const Msg m = id->rx;
      handle_msg(s, id, m);
      if (!live(s, id) || id->fd < 0) return;
    }
  }
}

// A TCP connection that failed: refused while the window is open (the
// peer's listener may be moments away, as perftest's server re-listens after
// its first connection) is tried again in 20 ms; else the CM's event.
void refused(State& /*s*/, Id* id, int err) {
  close_fd(id);
  const auto now = std::chrono::steady_clock::now();
  if (err == ECONNREFUSED && now < id->refused_until) {
    id->st = IdState::kTcpRetry;
    id->retry_at = now + std::chrono::milliseconds(20);
    return;
  }
  id->st = IdState::kRejected;
  if (err == ECONNREFUSED) {
    // No listener: the peer's CM would answer the REQ with REJ (invalid service ID).
    queue_event(id, RDMA_CM_EVENT_REJECTED, kRejInvalidServiceId);
  } else {
    queue_event(id, RDMA_CM_EVENT_UNREACHABLE, -err);
  }
}

// Starts the TCP connection to the destination's CM (under mu).
void tcp_connect(State& s, Id* x) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    refused(s, x, errno);
    return;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in t = x->id.route.addr.dst_sin;
  t.sin_addr.s_addr = tcp_addr(s, t.sin_addr.s_addr);
  x->fd = fd;
  x->st = IdState::kTcpConnecting;
  if (connect(fd, reinterpret_cast<sockaddr*>(&t), sizeof t) != 0 && errno != EINPROGRESS) refused(s, x, errno);
}

void on_connected(State& s, Id* id) {
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(id->fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err == EINPROGRESS) return;
  if (err != 0) {
    refused(s, id, err);
    return;
  }
  id->st = IdState::kReqSent;
  if (!send_msg(id, MsgType::kReq, id->rx.private_data, id->rx.pd_len, s)) lost(s, id, EPIPE);
}

void service_main() {
  State& s = S();
  std::vector<pollfd> pfds;
  std::vector<Id*> who;
  for (;;) {
    int timeout_ms = -1;
    {
      std::lock_guard<std::mutex> g(s.mu);
      const auto now = std::chrono::steady_clock::now();
      for (Id* id : s.ids) {
        if (id->st != IdState::kTcpRetry) continue;
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(id->retry_at - now).count() + 1;
        timeout_ms = timeout_ms < 0 ? static_cast<int>(std::max<int64_t>(ms, 0))
                                    : std::min(timeout_ms, static_cast<int>(std::max<int64_t>(ms, 0)));
      }
      pfds.assign(1, pollfd{s.wake_fd, POLLIN, 0});
      who.assign(1, nullptr);
      for (Id* id : s.ids) {
        if (id->fd < 0) continue;
        pfds.push_back(pollfd{id->fd, static_cast<short>(id->st == IdState::kTcpConnecting ? POLLOUT : POLLIN), 0});
        who.push_back(id);
      }
    }
    if (poll(pfds.data(), pfds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    std::lock_guard<std::mutex> g(s.mu);
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < s.ids.size(); ++i) {  // tcp_connect may not add or remove ids
      Id* id = s.ids[i];
      if (id->st == IdState::kTcpRetry && id->retry_at <= now) tcp_connect(s, id);
    }
    if ((pfds[0].revents & POLLIN) != 0) {
      uint64_t v;
      (void)!read(s.wake_fd, &v, sizeof v);
    }
    for (size_t i = 1; i < pfds.size(); ++i) {
      Id* id = who[i];
      if (pfds[i].revents == 0 || !live(s, id) || id->fd != pfds[i].fd) continue;
      if (id->st == IdState::kListening) {
        on_listener(s, id);
      } else if (id->st == IdState::kTcpConnecting) {
        on_connected(s, id);
      } else {
        on_readable(s, id);
      }
    }
  }
}

// Under mu.
bool start_service(State& s) {
  if (s.thread_started) return true;
  s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s.wake_fd < 0) return false;
  std::thread(service_main).detach();  // runs until the process exits
  s.thread_started = true;
  return true;
}

// Drops the id's undelivered events from its channel (under mu).
void drop_events(Id* id) {
  Channel* ch = ch_of(id->id.channel);
  if (ch == nullptr) return;
  for (auto it = ch->q.begin(); it != ch->q.end();) {
    if ((*it)->ev.id == &id->id || (*it)->ev.listen_id == &id->id) {
      delete *it;
      it = ch->q.erase(it);
    } else {
      ++it;
    }
  }
  if (ch->q.empty() && ch->signalled) {
    uint64_t v;
    (void)!read(ch->ch.fd, &v, sizeof v);
    ch->signalled = false;
  }
}

void free_id(State& s, Id* id) {
  close_fd(id);
  s.ids.erase(std::remove(s.ids.begin(), s.ids.end(), id), s.ids.end());
  delete id;
}

bool is_v4(const sockaddr* a) { return a != nullptr && a->sa_family == AF_INET; }
const sockaddr_in* v4(const sockaddr* a) { return reinterpret_cast<const sockaddr_in*>(a); }

// CQs for rdma_create_qp when the application gives none (librdmacm's ucma_create_cqs).
int create_cqs(Id* id, uint32_t send_wr, uint32_t recv_wr) {
  ibv_context* ctx = id->id.verbs;
  if (recv_wr != 0) {
    id->id.recv_cq_channel = ibv_create_comp_channel(ctx);
    if (id->id.recv_cq_channel == nullptr) return -1;
    id->id.recv_cq = ibv_create_cq(ctx, static_cast<int>(recv_wr), id, id->id.recv_cq_channel, 0);
    if (id->id.recv_cq == nullptr) return -1;
  }
  if (send_wr != 0) {
    id->id.send_cq_channel = ibv_create_comp_channel(ctx);
    if (id->id.send_cq_channel == nullptr) return -1;
    id->id.send_cq = ibv_create_cq(ctx, static_cast<int>(send_wr), id, id->id.send_cq_channel, 0);
    if (id->id.send_cq == nullptr) return -1;
  }
  id->own_cqs = true;
  return 0;
}

void destroy_cqs(Id* id) {
  if (!id->own_cqs) return;
  if (id->id.send_cq != nullptr) ibv_destroy_cq(id->id.send_cq);
  if (id->id.recv_cq != nullptr) ibv_destroy_cq(id->id.recv_cq);
  if (id->id.send_cq_channel != nullptr) ibv_destroy_comp_channel(id->id.send_cq_channel);
  if (id->id.recv_cq_channel != nullptr) ibv_destroy_comp_channel(id->id.recv_cq_channel);
  id->id.send_cq = id->id.recv_cq = nullptr;
  id->id.send_cq_channel = id->id.recv_cq_channel = nullptr;
  id->own_cqs = false;
}

const char* const kEventNames[] = {
    "RDMA_CM_EVENT_ADDR_RESOLVED",    "RDMA_CM_EVENT_ADDR_ERROR",       "RDMA_CM_EVENT_ROUTE_RESOLVED",
    "RDMA_CM_EVENT_ROUTE_ERROR",      "RDMA_CM_EVENT_CONNECT_REQUEST",  "RDMA_CM_EVENT_CONNECT_RESPONSE",
    "RDMA_CM_EVENT_CONNECT_ERROR",    "RDMA_CM_EVENT_UNREACHABLE",      "RDMA_CM_EVENT_REJECTED",
    "RDMA_CM_EVENT_ESTABLISHED",      "RDMA_CM_EVENT_DISCONNECTED",     "RDMA_CM_EVENT_DEVICE_REMOVAL",
    "RDMA_CM_EVENT_MULTICAST_JOIN",   "RDMA_CM_EVENT_MULTICAST_ERROR",  "RDMA_CM_EVENT_ADDR_CHANGE",
    "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};

}  // namespace

#define SF_EXPORT extern "C" __attribute__((visibility("default")))

SF_EXPORT rdma_event_channel* rdma_create_event_channel(void) {
  auto* c = new (std::nothrow) Channel();
  if (c == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  c->ch.fd = eventfd(0, EFD_CLOEXEC);
  if (c->ch.fd < 0) {
    delete c;
    return nullptr;
  }
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  s.channels.push_back(c);
  return &c->ch;
}

SF_EXPORT void rdma_destroy_event_channel(rdma_event_channel* channel) {
  if (channel == nullptr) return;
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Channel* c = ch_of(channel);
  for (Event* e : c->q) delete e;
  c->q.clear();
  for (Id* id : s.ids) {
    if (id->id.channel == channel) id->id.channel = nullptr;  // no more events for it
  }
  close(c->ch.fd);
  s.channels.erase(std::remove(s.channels.begin(), s.channels.end(), c), s.channels.end());
  delete c;
}

SF_EXPORT int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context, rdma_port_space ps) {
  if (id == nullptr) return fail(EINVAL);
  // Synchronous mode (no channel: every call blocks until its event) is not offered.
  if (channel == nullptr) return fail(EOPNOTSUPP);
  if (ps != RDMA_PS_TCP && ps != RDMA_PS_IB) return fail(EOPNOTSUPP);  // UD port spaces: no UD QPs here
  auto* x = new (std::nothrow) Id();
  if (x == nullptr) return fail(ENOMEM);
  std::memset(&x->id, 0, sizeof x->id);
  x->id.channel = channel;
  x->id.context = context;
  x->id.ps = ps;
  x->id.qp_type = IBV_QPT_RC;
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  x->psn = s.rng() & 0xffffff;
  s.ids.push_back(x);
  *id = &x->id;
  return 0;
}

SF_EXPORT int rdma_destroy_id(rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);
  // A listener's connections the application never saw: accepted sockets
  // whose REQ has not come, and requests whose CONNECT_REQUEST is still
  // queued (those are rejected, as a kernel CM rejects them). The ones
  // reported are the application's.
  std::vector<Id*> orphans;
  if (Channel* ch = ch_of(x->id.channel); ch != nullptr) {
    for (Event* e : ch->q) {
      if (e->ev.listen_id == &x->id) id_of(e->ev.id)->visible = false;
    }
  }
  drop_events(x);
  for (Id* o : s.ids) {
    if (o->listen == x) {
      if (o->visible) {
        o->listen = nullptr;
      } else {
        orphans.push_back(o);
      }
    }
  }
  for (Id* o : orphans) {
    if (o->st == IdState::kReqRcvd) send_msg(o, MsgType::kRej, nullptr, 0, s, kRejConsumerDefined);
    free_id(s, o);
  }
  destroy_cqs(x);
  free_id(s, x);  // closing the socket: a connected peer sees DISCONNECTED
  return 0;
}

SF_EXPORT int rdma_bind_addr(rdma_cm_id* id, sockaddr* addr) {
  if (id == nullptr || addr == nullptr) return fail(EINVAL);
  if (!is_v4(addr)) return fail(EAFNOSUPPORT);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kIdle) return fail(EINVAL);
  if (!parse_hosts(s)) return fail(EINVAL);
  const sockaddr_in* a = v4(addr);
  if (a->sin_addr.s_addr != htonl(INADDR_ANY)) {
    if (!open_device(s)) return fail(ENODEV);
    if (a->sin_addr.s_addr != s.ip) return fail(EADDRNOTAVAIL);  // not the device's address
    attach_device(s, x);
  }
  id->route.addr.src_sin = *a;
  x->st = IdState::kBound;
  return 0;
}

SF_EXPORT int rdma_listen(rdma_cm_id* id, int backlog) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kBound) return fail(EINVAL);
  // The CM's connection requests come from any address of the process's
  // device: a listener needs the device (its GID goes into the REP).
  if (!open_device(s)) return fail(ENODEV);
  sockaddr_in t = id->route.addr.src_sin;
  if (t.sin_addr.s_addr != htonl(INADDR_ANY)) t.sin_addr.s_addr = tcp_addr(s, t.sin_addr.s_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&t), sizeof t) != 0 || listen(fd, backlog > 0 ? backlog : 16) != 0) {
    const int e = errno;
    close(fd);
    return fail(e);
  }
  socklen_t len = sizeof t;
  getsockname(fd, reinterpret_cast<sockaddr*>(&t), &len);
  id->route.addr.src_sin.sin_port = t.sin_port;  // port 0: the one the system chose
  if (!start_service(s)) {
    close(fd);
    return fail(ENOMEM);
  }
  x->fd = fd;
  x->st = IdState::kListening;
  wake(s);
  return 0;
}

SF_EXPORT int rdma_resolve_addr(rdma_cm_id* id, sockaddr* src_addr, sockaddr* dst_addr, int /*timeout_ms*/) {
  if (id == nullptr || dst_addr == nullptr) return fail(EINVAL);
  if (!is_v4(dst_addr) || (src_addr != nullptr && !is_v4(src_addr))) return fail(EAFNOSUPPORT);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kIdle && x->st != IdState::kBound) return fail(EINVAL);
  if (!parse_hosts(s)) return fail(EINVAL);
  if (!open_device(s)) return fail(ENODEV);
  const in_addr_t want = src_addr != nullptr ? v4(src_addr)->sin_addr.s_addr
                                             : id->route.addr.src_sin.sin_addr.s_addr;
  if (want != htonl(INADDR_ANY) && want != s.ip) return fail(EADDRNOTAVAIL);
  attach_device(s, x);
  id->route.addr.src_sin.sin_family = AF_INET;
  id->route.addr.src_sin.sin_addr.s_addr = s.ip;
  id->route.addr.dst_sin = *v4(dst_addr);
  x->st = IdState::kAddrResolved;
  queue_event(x, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
  return 0;
}

SF_EXPORT int rdma_resolve_route(rdma_cm_id* id, int /*timeout_ms*/) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kAddrResolved) return fail(EINVAL);
  x->st = IdState::kRouteResolved;
  queue_event(x, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
  return 0;
}

SF_EXPORT int rdma_set_option(rdma_cm_id* id, int level, int optname, void* optval, size_t optlen) {
  if (id == nullptr || optval == nullptr) return fail(EINVAL);
  if (level != RDMA_OPTION_ID) return fail(ENOSYS);  // RDMA_OPTION_IB (path records): no SA here
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  switch (optname) {
    case RDMA_OPTION_ID_TOS:
      if (optlen != sizeof(uint8_t)) return fail(EINVAL);
      x->tos = *static_cast<uint8_t*>(optval);
      return 0;
    case RDMA_OPTION_ID_ACK_TIMEOUT:
      if (optlen != sizeof(uint8_t)) return fail(EINVAL);
      x->timeout = std::min<uint8_t>(*static_cast<uint8_t*>(optval), 31);
      return 0;
    case RDMA_OPTION_ID_REUSEADDR:  // listeners always reuse (SO_REUSEADDR)
    case RDMA_OPTION_ID_AFONLY:     // IPv4 only anyway
      if (optlen != sizeof(int)) return fail(EINVAL);
      return 0;
    default:
      return fail(ENOSYS);
  }
}

SF_EXPORT int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr) {
  if (id == nullptr || attr == nullptr) return fail(EINVAL);
  if ((attr->comp_mask & ~static_cast<uint32_t>(IBV_QP_INIT_ATTR_PD)) != 0 || attr->qp_type != IBV_QPT_RC)
    return fail(EOPNOTSUPP);  // extended QP features and non-RC QPs are not offered
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (id->verbs == nullptr || id->qp != nullptr) return fail(EINVAL);
  ibv_pd* pd = (attr->comp_mask & IBV_QP_INIT_ATTR_PD) != 0 && attr->pd != nullptr ? attr->pd : id->pd;
  if (pd == nullptr || pd->context != id->verbs) return fail(EINVAL);
  if ((id->recv_cq != nullptr && attr->recv_cq != nullptr && id->recv_cq != attr->recv_cq) ||
      (id->send_cq != nullptr && attr->send_cq != nullptr && id->send_cq != attr->send_cq))
    return fail(EINVAL);
  if (create_cqs(x, attr->send_cq != nullptr || id->send_cq != nullptr ? 0 : attr->cap.max_send_wr,
                 attr->recv_cq != nullptr || id->recv_cq != nullptr ? 0 : attr->cap.max_recv_wr) != 0) {
    const int e = errno;
    destroy_cqs(x);
    return fail(e != 0 ? e : ENOMEM);
  }
  ibv_qp_init_attr ia{};
  ia.qp_context = attr->qp_context;
  ia.send_cq = attr->send_cq != nullptr ? attr->send_cq : id->send_cq;
  ia.recv_cq = attr->recv_cq != nullptr ? attr->recv_cq : id->recv_cq;
  ia.srq = attr->srq != nullptr ? attr->srq : id->srq;
  ia.cap = attr->cap;
  ia.qp_type = IBV_QPT_RC;
  ia.sq_sig_all = attr->sq_sig_all;
  ibv_qp* qp = ibv_create_qp(pd, &ia);
  if (qp == nullptr) {
    const int e = errno;
    destroy_cqs(x);
    return fail(e);
  }
  // INIT (librdmacm's ucma_init_conn_qp): remote access is granted at RTR
  // from the negotiated responder resources.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = 0;
  const int r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (r != 0) {
    ibv_destroy_qp(qp);
    destroy_cqs(x);
    return fail(r);
  }
  attr->cap = ia.cap;
  attr->send_cq = ia.send_cq;
  attr->recv_cq = ia.recv_cq;
  attr->pd = pd;
  id->pd = pd;
  id->qp = qp;
  return 0;
}

SF_EXPORT int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  if (id == nullptr || qp_init_attr == nullptr) return fail(EINVAL);
  ibv_qp_init_attr_ex ax{};
  ax.qp_context = qp_init_attr->qp_context;
  ax.send_cq = qp_init_attr->send_cq;
  ax.recv_cq = qp_init_attr->recv_cq;
  ax.srq = qp_init_attr->srq;
  ax.cap = qp_init_attr->cap;
  ax.qp_type = qp_init_attr->qp_type;
  ax.sq_sig_all = qp_init_attr->sq_sig_all;
  ax.comp_mask = IBV_QP_INIT_ATTR_PD;
  ax.pd = pd;
  const int r = rdma_create_qp_ex(id, &ax);
  if (r != 0) return r;
  qp_init_attr->send_cq = ax.send_cq;
  qp_init_attr->recv_cq = ax.recv_cq;
  qp_init_attr->cap = ax.cap;
  return 0;
}

SF_EXPORT void rdma_destroy_qp(rdma_cm_id* id) {
  if (id == nullptr) return;
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  if (!live(s, id_of(id)) || id->qp == nullptr) return;
  ibv_destroy_qp(id->qp);
  id->qp = nullptr;
  destroy_cqs(id_of(id));
}

SF_EXPORT int rdma_connect(rdma_cm_id* id, rdma_conn_param* p) {
  if (id == nullptr) return fail(EINVAL);
  if (p != nullptr && p->private_data_len > kReqPrivate) return fail(EINVAL);
  if (p != nullptr && p->private_data_len != 0 && p->private_data == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);  // an id destroyed or never created
  if (x->st != IdState::kRouteResolved) return fail(EINVAL);
  if (id->qp == nullptr && (p == nullptr || p->qp_num == 0)) return fail(EINVAL);
  x->resp_res = p != nullptr ? std::min(p->responder_resources, kMaxRdAtomic) : kMaxRdAtomic;
  x->init_depth = p != nullptr ? std::min(p->initiator_depth, kMaxRdAtomic) : kMaxRdAtomic;
  x->retry = p != nullptr ? std::min<uint8_t>(p->retry_count, 7) : 7;
  x->rnr_retry = p != nullptr ? std::min<uint8_t>(p->rnr_retry_count, 7) : 7;
  // The REQ's private data waits in rx (unused on an active id until the REP) until TCP connects.
  std::memset(&x->rx, 0, sizeof x->rx);
  if (p != nullptr && p->private_data_len != 0) std::memcpy(x->rx.private_data, p->private_data, p->private_data_len);
  x->rx.pd_len = p != nullptr ? p->private_data_len : 0;
  if (!start_service(s)) return fail(ENOMEM);
  // A refusal is reported as the event (as the CM reports a REJ), after the retry window.
  x->refused_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.connect_ms);
  tcp_connect(s, x);
  wake(s);  // the service thread completes the connection and sends the REQ
  return 0;
}

SF_EXPORT int rdma_accept(rdma_cm_id* id, rdma_conn_param* p) {
  if (id == nullptr) return fail(EINVAL);
  if (p != nullptr && p->private_data_len > kRepPrivate) return fail(EINVAL);
  if (p != nullptr && p->private_data_len != 0 && p->private_data == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x) || x->st != IdState::kReqRcvd) return fail(EINVAL);
  if (id->qp == nullptr && (p == nullptr || p->qp_num == 0)) return fail(EINVAL);
  // READ depths: the application's (librdmacm: the REQ's, bounded by the device, when it gives none).
  x->resp_res = p != nullptr ? std::min(p->responder_resources, kMaxRdAtomic)
                             : std::min(x->rem.initiator_depth, kMaxRdAtomic);
  x->init_depth = p != nullptr ? std::min(p->initiator_depth, kMaxRdAtomic)
                               : std::min(x->rem.responder_resources, kMaxRdAtomic);
  const int r = connect_qp(s, x);
  if (r != 0) {
    send_msg(x, MsgType::kRej, nullptr, 0, s, kRejConsumerDefined);
    close_fd(x);
    x->st = IdState::kRejected;
    return fail(r);
  }
  // The REP tells the active side the RNR retry count its QP is to use.
  const uint8_t own_rnr = x->rnr_retry;
  x->rnr_retry = p != nullptr ? std::min<uint8_t>(p->rnr_retry_count, 7) : 7;
  const bool ok = send_msg(x, MsgType::kRep, p != nullptr ? p->private_data : nullptr,
                           p != nullptr ? p->private_data_len : 0, s);
  x->rnr_retry = own_rnr;
  if (!ok) {
    lost(s, x, EPIPE);
    return fail(ECONNRESET);
  }
  x->st = IdState::kRepSent;
  return 0;
}

SF_EXPORT int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  if (id == nullptr || private_data_len > kRejPrivate) return fail(EINVAL);
  if (private_data_len != 0 && private_data == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x) || x->st != IdState::kReqRcvd) return fail(EINVAL);
  send_msg(x, MsgType::kRej, private_data, private_data_len, s, kRejConsumerDefined);
  close_fd(x);
  x->st = IdState::kRejected;
  return 0;
}

SF_EXPORT int rdma_disconnect(rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  State& s = S();
  std::lock_guard<std::mutex> g(s.mu);
  Id* x = id_of(id);
  if (!live(s, x)) return fail(EINVAL);
  switch (x->st) {
    case IdState::kConnected:
    case IdState::kRepSent:
      qp_to_err(x);  // as librdmacm: the QP stops before the DREQ goes
      if (!send_msg(x, MsgType::kDreq, nullptr, 0, s)) {
        lost(s, x, EPIPE);
        return 0;
      }
      x->st = IdState::kDisconnecting;
      return 0;
    case IdState::kDisconnected:  // the peer disconnected first: its DREP went already
    case IdState::kDisconnecting:
      qp_to_err(x);
      return 0;
    default:
      return fail(EINVAL);
  }
}

SF_EXPORT int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
  if (channel == nullptr || event == nullptr) return fail(EINVAL);
  State& s = S();
  Channel* c = ch_of(channel);
  for (;;) {
    {
      std::lock_guard<std::mutex> g(s.mu);
      if (!c->q.empty()) {
        Event* e = c->q.front();
        c->q.pop_front();
        if (c->q.empty() && c->signalled) {
          uint64_t v;
          (void)!read(c->ch.fd, &v, sizeof v);
          c->signalled = false;
        }
        *event = &e->ev;
        return 0;
      }
    }
    const int fl = fcntl(channel->fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK) != 0) return fail(EAGAIN);
    pollfd pf{channel->fd, POLLIN, 0};
    if (poll(&pf, 1, -1) < 0 && errno != EINTR) return -1;
  }
}

SF_EXPORT int rdma_ack_cm_event(rdma_cm_event* event) {
  if (event == nullptr) return fail(EINVAL);
  delete reinterpret_cast<Event*>(event);
  return 0;
}

SF_EXPORT const char* rdma_event_str(rdma_cm_event_type event) {
  const auto i = static_cast<size_t>(event);
  return i < sizeof kEventNames / sizeof kEventNames[0] ? kEventNames[i] : "UNKNOWN EVENT";
}

// Numeric IPv4 hosts and numeric ports only (what perftest passes); a name
// is refused with EAI_NONAME (errno EINVAL), as no resolver is consulted.
SF_EXPORT int rdma_getaddrinfo(const char* node, const char* service, const rdma_addrinfo* hints,
                               rdma_addrinfo** res) {
  if (res == nullptr) return fail(EINVAL);
  *res = nullptr;
  const bool passive = hints != nullptr && (hints->ai_flags & RAI_PASSIVE) != 0;
  if (hints != nullptr && hints->ai_family != 0 && hints->ai_family != AF_INET) {
    errno = EINVAL;
    return EAI_FAMILY;
  }
  if (hints != nullptr && hints->ai_port_space != 0 && hints->ai_port_space != RDMA_PS_TCP &&
      hints->ai_port_space != RDMA_PS_IB) {
    errno = EINVAL;
    return EAI_SOCKTYPE;
  }
  if (node == nullptr && !passive) {
    errno = EINVAL;
    return EAI_NONAME;
  }
  in_addr a{};
  a.s_addr = htonl(INADDR_ANY);
  if (node != nullptr && inet_pton(AF_INET, node, &a) != 1) {
    errno = EINVAL;
    return EAI_NONAME;
  }
  uint16_t port = 0;
  if (service != nullptr) {
    char* end = nullptr;
    const long v = strtol(service, &end, 10);
    if (*service == '\0' || *end != '\0' || v < 0 || v > 65535) {
      errno = EINVAL;
      return EAI_SERVICE;
    }
    port = static_cast<uint16_t>(v);
  }
  auto* r = static_cast<rdma_addrinfo*>(calloc(1, sizeof(rdma_addrinfo)));
  auto* sin = static_cast<sockaddr_in*>(calloc(1, sizeof(sockaddr_in)));
  if (r == nullptr || sin == nullptr) {
    free(r);
    free(sin);
    errno = ENOMEM;
    return EAI_MEMORY;
  }
  r->ai_flags = hints != nullptr ? hints->ai_flags : 0;
  r->ai_family = AF_INET;
  r->ai_qp_type = IBV_QPT_RC;
  r->ai_port_space = hints != nullptr && hints->ai_port_space != 0 ? hints->ai_port_space : RDMA_PS_TCP;
  sin->sin_family = AF_INET;
  sin->sin_addr = a;
  sin->sin_port = htons(port);
  if (passive) {
    r->ai_src_addr = reinterpret_cast<sockaddr*>(sin);
    r->ai_src_len = sizeof *sin;
  } else {
    r->ai_dst_addr = reinterpret_cast<sockaddr*>(sin);
    r->ai_dst_len = sizeof *sin;
    if (hints != nullptr && is_v4(hints->ai_src_addr)) {
      auto* src = static_cast<sockaddr_in*>(calloc(1, sizeof(sockaddr_in)));
      if (src != nullptr) {
        *src = *v4(hints->ai_src_addr);
        r->ai_src_addr = reinterpret_cast<sockaddr*>(src);
        r->ai_src_len = sizeof *src;
      }
    }
  }
  *res = r;
  return 0;
}

SF_EXPORT void rdma_freeaddrinfo(rdma_addrinfo* res) {
  while (res != nullptr) {
    rdma_addrinfo* next = res->ai_next;
    free(res->ai_src_addr);
    free(res->ai_dst_addr);
    free(res->ai_src_canonname);
    free(res->ai_dst_canonname);
    free(res->ai_route);
    free(res->ai_connect);
    free(res);
    res = next;
  }
}
