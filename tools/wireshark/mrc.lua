-- Wireshark / tshark dissector for softfabric's MRC (Multipath Reliable
-- Connection) headers, layered on Wireshark's own RoCEv2 (InfiniBand)
-- dissector: Eth / IP (/ IPv6-in-IPv6 for SRv6) / UDP and the BTH are
-- Wireshark's; this adds METH, RETH, ImmDt, AETH, SETH + CC state, NETH,
-- PETH, ERTH, EETH, the payload, and the ICRC position for MRC opcodes.
-- The format (our choices where the public facts stop) is docs/mrc.md.
--
--   tshark -X lua_script:tools/wireshark/mrc.lua -r FILE.pcap -T json
--   tshark -X lua_script:tools/wireshark/mrc.lua -o mrc.udp_port:4792 -o mrc.opcode_base:224 ...
--   wireshark: copy to ~/.local/lib/wireshark/plugins/ (or -X lua_script:...).
--
-- It registers on the UDP port (preference mrc.udp_port, default 4791, the
-- RoCEv2 port) in place of Wireshark's handler, hands every packet to that
-- handler first (so non-MRC RoCE is dissected exactly as before), then, when
-- the BTH opcode's transport bits equal mrc.opcode_base (default 0xC0 = 192),
-- dissects the MRC headers after the 12-byte BTH. Tested by
-- tests/interop/mrc_interop.py on Wireshark 4.0 (Debian 12).

local mrc = Proto("mrc", "MRC (Multipath Reliable Connection)")

mrc.prefs.udp_port = Pref.uint("UDP port", 4791, "UDP destination port of MRC frames (RoCEv2's 4791 by default)")
mrc.prefs.opcode_base = Pref.uint("Opcode base", 192,
  "BTH opcode transport bits of MRC: 192 (0xC0, transport 110, default) or 224 (0xE0, vendor)")

local OPS = {
  [0x06] = "RDMA_WRITE_FIRST", [0x07] = "RDMA_WRITE_MIDDLE", [0x08] = "RDMA_WRITE_LAST",
  [0x09] = "RDMA_WRITE_LAST_WITH_IMMEDIATE", [0x0A] = "RDMA_WRITE_ONLY",
  [0x0B] = "RDMA_WRITE_ONLY_WITH_IMMEDIATE", [0x11] = "ACKNOWLEDGE",
  [0x18] = "ENDPOINT_REQUEST", [0x19] = "ENDPOINT_RESPONSE",
  [0x1C] = "SACK", [0x1D] = "NACK", [0x1E] = "PROBE",
}
local SKIP = { [0] = "NONE", [1] = "SKIP_ONCE", [2] = "ALWAYS_SKIP", [3] = "reserved" }
local NACK = {
  [0x01] = "TRIMMED", [0x02] = "TRIMMED_LASTHOP", [0x06] = "NO_BITMAP", [0x07] = "NO_PKT_BUFFER",
  [0x0A] = "NO_RESOURCE", [0x0B] = "PSN_OOR_WINDOW", [0x19] = "UNEXP_EVENT",
  [0x20] = "ACCESS_ERROR", [0x21] = "INVALID_REQUEST", [0x22] = "WIMM_OVERFLOW",
}
local EP_OP = { [0] = "PORT_STATUS", [1] = "EV_PROBE" }
local EP_STATUS = { [0] = "OK", [1] = "UNSUPPORTED", [2] = "REJECTED" }
local CC_TYPE = { [0] = "NONE", [1] = "NSCC" }

local f = {
  op = ProtoField.uint8("mrc.op", "Operation", base.HEX, OPS, 0x1F),
  trimmed = ProtoField.bool("mrc.trimmed", "Trimmed (headers only)"),
  -- METH
  meth = ProtoField.bytes("mrc.meth", "METH"),
  meth_rtx = ProtoField.bool("mrc.meth.rtx", "RTX", 8, nil, 0x80),
  meth_last = ProtoField.bool("mrc.meth.last", "LAST", 8, nil, 0x40),
  meth_ts = ProtoField.bool("mrc.meth.ts_valid", "TS valid", 8, nil, 0x20),
  meth_rqmsn = ProtoField.uint16("mrc.meth.rqmsn", "RQMSN", base.DEC),
  meth_msn = ProtoField.uint32("mrc.meth.msn", "MSN", base.DEC),
  meth_msg_offset = ProtoField.uint32("mrc.meth.msg_offset", "Message offset", base.DEC),
  meth_ev = ProtoField.uint32("mrc.meth.ev", "EV", base.HEX),
  meth_tx_ts = ProtoField.uint32("mrc.meth.tx_ts", "TX timestamp", base.DEC),
  -- RETH / ImmDt / AETH (MRC placement: RETH in every data packet)
  reth_va = ProtoField.uint64("mrc.reth.va", "RETH virtual address", base.HEX),
  reth_rkey = ProtoField.uint32("mrc.reth.rkey", "RETH R_Key", base.HEX),
  reth_dma_length = ProtoField.uint32("mrc.reth.dma_length", "RETH DMA length", base.DEC),
  immdt = ProtoField.uint32("mrc.immdt", "Immediate data", base.HEX),
  aeth_syndrome = ProtoField.uint8("mrc.aeth.syndrome", "AETH syndrome", base.HEX),
  aeth_msn = ProtoField.uint24("mrc.aeth.msn", "AETH MSN", base.DEC),
  -- SETH + CC state
  seth = ProtoField.bytes("mrc.seth", "SETH"),
  seth_skip = ProtoField.uint8("mrc.seth.skip", "M (skip)", base.DEC, SKIP, 0xC0),
  seth_pr = ProtoField.bool("mrc.seth.probe_response", "PR (probe response)", 8, nil, 0x20),
  seth_ce = ProtoField.bool("mrc.seth.ce", "CE", 8, nil, 0x10),
  seth_cack = ProtoField.uint24("mrc.seth.cack_psn", "CACK PSN (BTH PSN)", base.DEC),
  seth_ack_off = ProtoField.int16("mrc.seth.ack_psn_offset", "ACK PSN offset / probe id", base.DEC),
  seth_ack_psn = ProtoField.uint24("mrc.seth.ack_psn", "ACK PSN", base.DEC),
  seth_ev = ProtoField.uint32("mrc.seth.ev", "Reflected EV", base.HEX),
  seth_sack_off = ProtoField.int16("mrc.seth.sack_offset", "SACK offset", base.DEC),
  seth_base = ProtoField.uint24("mrc.seth.sack_base_psn", "SACK base PSN", base.DEC),
  seth_mpr = ProtoField.uint16("mrc.seth.mpr", "MPR", base.DEC),
  seth_bitmap = ProtoField.uint64("mrc.seth.bitmap", "SACK bitmap", base.HEX),
  cc = ProtoField.bytes("mrc.cc", "CC state"),
  cc_ts_echo = ProtoField.uint32("mrc.cc.ts_echo", "TS echo", base.DEC),
  cc_rcvd_bytes = ProtoField.uint32("mrc.cc.rcvd_bytes", "Received bytes", base.DEC),
  cc_ecn_count = ProtoField.uint16("mrc.cc.ecn_count", "ECN count", base.DEC),
  cc_ooo_count = ProtoField.uint16("mrc.cc.ooo_count", "OOO count", base.DEC),
  cc_pen = ProtoField.uint8("mrc.cc.rcv_cwnd_pen", "rcv_cwnd_pen", base.DEC),
  cc_type = ProtoField.uint8("mrc.cc.cc_type", "CC type", base.DEC, CC_TYPE),
  cc_service_time = ProtoField.uint16("mrc.cc.service_time", "Service time (ns)", base.DEC),
  -- NETH
  neth = ProtoField.bytes("mrc.neth", "NETH"),
  neth_reason = ProtoField.uint8("mrc.neth.reason", "Reason", base.HEX, NACK),
  neth_ce = ProtoField.bool("mrc.neth.ce", "CE", 8, nil, 0x80),
  neth_rtx = ProtoField.bool("mrc.neth.rtx", "RTX", 8, nil, 0x40),
  neth_vendor = ProtoField.uint8("mrc.neth.vendor_code", "Vendor code", base.HEX),
  neth_ev = ProtoField.uint32("mrc.neth.ev", "Reflected EV", base.HEX),
  neth_psn = ProtoField.uint24("mrc.neth.nack_psn", "NACK PSN", base.DEC),
  neth_ts_echo = ProtoField.uint32("mrc.neth.ts_echo", "TS echo", base.DEC),
  -- PETH
  peth = ProtoField.bytes("mrc.peth", "PETH"),
  peth_id = ProtoField.uint16("mrc.peth.probe_id", "Probe id", base.DEC),
  peth_ev = ProtoField.uint32("mrc.peth.ev", "EV", base.HEX),
  peth_tx_ts = ProtoField.uint32("mrc.peth.tx_ts", "TX timestamp", base.DEC),
  -- ERTH / EETH
  erth = ProtoField.bytes("mrc.erth", "ERTH"),
  erth_op = ProtoField.uint8("mrc.erth.op", "Op", base.DEC, EP_OP),
  erth_ports = ProtoField.uint8("mrc.erth.num_ports", "Ports", base.DEC),
  erth_id = ProtoField.uint16("mrc.erth.request_id", "Request id", base.DEC),
  erth_ev = ProtoField.uint32("mrc.erth.ev", "EV", base.HEX),
  erth_mask = ProtoField.uint32("mrc.erth.port_status_mask", "Port status mask", base.HEX),
  erth_tx_ts = ProtoField.uint32("mrc.erth.tx_ts", "TX timestamp", base.DEC),
  eeth = ProtoField.bytes("mrc.eeth", "EETH"),
  eeth_op = ProtoField.uint8("mrc.eeth.op", "Op", base.DEC, EP_OP),
  eeth_status = ProtoField.uint8("mrc.eeth.status", "Status", base.DEC, EP_STATUS),
  eeth_id = ProtoField.uint16("mrc.eeth.request_id", "Request id", base.DEC),
  eeth_ev = ProtoField.uint32("mrc.eeth.ev", "EV", base.HEX),
  eeth_mask = ProtoField.uint32("mrc.eeth.port_status_mask", "Port status mask", base.HEX),
  eeth_ts_echo = ProtoField.uint32("mrc.eeth.ts_echo", "TS echo", base.DEC),
  -- rest
  payload = ProtoField.bytes("mrc.payload", "Payload"),
  payload_len = ProtoField.uint32("mrc.payload_length", "Payload length", base.DEC),
  pad = ProtoField.uint8("mrc.pad", "Pad bytes", base.DEC),
  icrc = ProtoField.uint32("mrc.icrc", "ICRC (little-endian on the wire)", base.HEX),
}
local list = {}
for _, v in pairs(f) do list[#list + 1] = v end
mrc.fields = list

local e_short = ProtoExpert.new("mrc.short", "MRC headers truncated", expert.group.MALFORMED, expert.severity.ERROR)
local e_trim = ProtoExpert.new("mrc.trimmed.expert", "Trimmed MRC packet (payload and ICRC cut by a switch)",
  expert.group.SEQUENCE, expert.severity.NOTE)
mrc.experts = { e_short, e_trim }

-- Header sizes after the BTH per op.
local METH, RETH, IMM, AETH, SETH, CC, NETH, PETH, ERTH, EETH = 20, 16, 4, 4, 20, 16, 16, 16, 16, 16
local function ext_bytes(op)
  if op >= 0x06 and op <= 0x0B then
    return METH + RETH + ((op == 0x09 or op == 0x0B) and IMM or 0), true
  end
  if op == 0x11 then return AETH, false end
  if op == 0x1C then return SETH + CC, false end
  if op == 0x1D then return NETH, false end
  if op == 0x1E then return PETH, false end
  return ERTH, false  -- 0x18 / 0x19: same size
end

local PSN_MOD = 16777216
local function psn_add(psn, off) return (psn + off) % PSN_MOD end

local udp_table = DissectorTable.get("udp.port")
local roce = udp_table:get_dissector(4791) or Dissector.get("infiniband")

function mrc.dissector(tvb, pinfo, tree)
  -- Wireshark's RoCEv2 dissector first: the BTH (and all of non-MRC RoCE).
  if roce ~= nil then roce:call(tvb, pinfo, tree) end
  local len = tvb:len()
  if len < 12 then return len end
  local opcode = tvb(0, 1):uint()
  local base_ = mrc.prefs.opcode_base
  local op = opcode % 32
  if opcode - op ~= base_ or OPS[op] == nil then return len end

  local ext, data = ext_bytes(op)
  local hdr_end = 12 + ext
  local t = tree:add(mrc, tvb(), "MRC " .. OPS[op])
  t:add(f.op, tvb(0, 1))
  pinfo.cols.protocol = "MRC"
  if len < hdr_end then
    t:add_proto_expert_info(e_short)
    return len
  end
  local trimmed = data and len < hdr_end + 4
  t:add(f.trimmed, trimmed)
  local psn = tvb(9, 3):uint()
  local info = "MRC " .. OPS[op] .. " QP=" .. tvb(5, 3):uint() .. " PSN=" .. psn
  local o = 12
  if data then
    local m = t:add(f.meth, tvb(o, METH))
    m:add(f.meth_rtx, tvb(o, 1)); m:add(f.meth_last, tvb(o, 1)); m:add(f.meth_ts, tvb(o, 1))
    m:add(f.meth_rqmsn, tvb(o + 2, 2)); m:add(f.meth_msn, tvb(o + 4, 4))
    m:add(f.meth_msg_offset, tvb(o + 8, 4)); m:add(f.meth_ev, tvb(o + 12, 4))
    m:add(f.meth_tx_ts, tvb(o + 16, 4))
    info = info .. " MSN=" .. tvb(o + 4, 4):uint() .. " off=" .. tvb(o + 8, 4):uint() ..
      string.format(" EV=0x%x", tvb(o + 12, 4):uint())
    if tvb(o, 1):uint() >= 0x80 then info = info .. " RTX" end
    o = o + METH
    t:add(f.reth_va, tvb(o, 8)); t:add(f.reth_rkey, tvb(o + 8, 4)); t:add(f.reth_dma_length, tvb(o + 12, 4))
    o = o + RETH
    if op == 0x09 or op == 0x0B then
      t:add(f.immdt, tvb(o, 4)); o = o + IMM
    end
    if trimmed then
      t:add_proto_expert_info(e_trim)
      info = info .. " [TRIMMED]"
    else
      local pad = math.floor(tvb(1, 1):uint() / 16) % 4
      local n = len - 4 - o - pad
      if n < 0 then n = 0 end
      t:add(f.payload_len, n)
      if n > 0 then t:add(f.payload, tvb(o, n)) end
      t:add(f.pad, pad)
    end
  elseif op == 0x11 then
    t:add(f.aeth_syndrome, tvb(o, 1)); t:add(f.aeth_msn, tvb(o + 1, 3))
  elseif op == 0x1C then
    local s = t:add(f.seth, tvb(o, SETH))
    s:add(f.seth_skip, tvb(o, 1)); s:add(f.seth_pr, tvb(o, 1)); s:add(f.seth_ce, tvb(o, 1))
    s:add(f.seth_cack, tvb(9, 3))
    s:add(f.seth_ack_off, tvb(o + 2, 2))
    if math.floor(tvb(o, 1):uint() / 32) % 2 == 0 then
      s:add(f.seth_ack_psn, psn_add(psn, tvb(o + 2, 2):int())):set_generated()
    end
    s:add(f.seth_ev, tvb(o + 4, 4)); s:add(f.seth_sack_off, tvb(o + 8, 2))
    s:add(f.seth_base, psn_add(psn, tvb(o + 8, 2):int())):set_generated()
    s:add(f.seth_mpr, tvb(o + 10, 2)); s:add(f.seth_bitmap, tvb(o + 12, 8))
    local c = t:add(f.cc, tvb(o + SETH, CC))
    local q = o + SETH
    c:add(f.cc_ts_echo, tvb(q, 4)); c:add(f.cc_rcvd_bytes, tvb(q + 4, 4))
    c:add(f.cc_ecn_count, tvb(q + 8, 2)); c:add(f.cc_ooo_count, tvb(q + 10, 2))
    c:add(f.cc_pen, tvb(q + 12, 1)); c:add(f.cc_type, tvb(q + 13, 1)); c:add(f.cc_service_time, tvb(q + 14, 2))
    info = info .. " CACK=" .. psn .. string.format(" EV=0x%x bitmap=0x%s", tvb(o + 4, 4):uint(),
      tvb(o + 12, 8):uint64():tohex())
  elseif op == 0x1D then
    local n = t:add(f.neth, tvb(o, NETH))
    n:add(f.neth_reason, tvb(o, 1)); n:add(f.neth_ce, tvb(o + 1, 1)); n:add(f.neth_rtx, tvb(o + 1, 1))
    n:add(f.neth_vendor, tvb(o + 2, 1)); n:add(f.neth_ev, tvb(o + 4, 4)); n:add(f.neth_psn, tvb(o + 9, 3))
    n:add(f.neth_ts_echo, tvb(o + 12, 4))
    info = info .. " " .. (NACK[tvb(o, 1):uint()] or "UNKNOWN") .. " NACK_PSN=" .. tvb(o + 9, 3):uint()
  elseif op == 0x1E then
    local p = t:add(f.peth, tvb(o, PETH))
    p:add(f.peth_id, tvb(o + 2, 2)); p:add(f.peth_ev, tvb(o + 4, 4)); p:add(f.peth_tx_ts, tvb(o + 8, 4))
    info = info .. " id=" .. tvb(o + 2, 2):uint()
  elseif op == 0x18 then
    local r = t:add(f.erth, tvb(o, ERTH))
    r:add(f.erth_op, tvb(o, 1)); r:add(f.erth_ports, tvb(o + 1, 1)); r:add(f.erth_id, tvb(o + 2, 2))
    r:add(f.erth_ev, tvb(o + 4, 4)); r:add(f.erth_mask, tvb(o + 8, 4)); r:add(f.erth_tx_ts, tvb(o + 12, 4))
    info = info .. " " .. (EP_OP[tvb(o, 1):uint()] or "?") .. " id=" .. tvb(o + 2, 2):uint()
  else
    local r = t:add(f.eeth, tvb(o, EETH))
    r:add(f.eeth_op, tvb(o, 1)); r:add(f.eeth_status, tvb(o + 1, 1)); r:add(f.eeth_id, tvb(o + 2, 2))
    r:add(f.eeth_ev, tvb(o + 4, 4)); r:add(f.eeth_mask, tvb(o + 8, 4)); r:add(f.eeth_ts_echo, tvb(o + 12, 4))
    info = info .. " " .. (EP_OP[tvb(o, 1):uint()] or "?") .. " id=" .. tvb(o + 2, 2):uint()
  end
  if not trimmed and len >= hdr_end + 4 then t:add_le(f.icrc, tvb(len - 4, 4)) end
  pinfo.cols.info = info
  return len
end

local registered = nil
local function register()
  if registered == mrc.prefs.udp_port then return end
  if registered ~= nil then
    if registered == 4791 and roce ~= nil then udp_table:add(4791, roce) else udp_table:remove(registered, mrc) end
  end
  udp_table:add(mrc.prefs.udp_port, mrc)
  registered = mrc.prefs.udp_port
end
mrc.prefs_changed = register
register()
