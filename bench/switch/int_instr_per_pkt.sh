#!/bin/bash
# Instructions per packet of SwitchNode::receive + transmit with INT off, on
# without INT frames, and on with HPCC frames (one record appended per frame),
# each from bench/switch/instr_per_pkt.sh (callgrind: unaffected by a loaded
# machine) over switch_int_bench; one JSON line per mode with the ratio
# against INT off in the same run (docs/performance.md "switch_int").
# Usage: bench/switch/int_instr_per_pkt.sh [BENCH] [--iters N] [--frames 64]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=${1:-build/bench/switch/switch_int_bench}
shift || true
iters=2000 frames=64
while [ $# -gt 0 ]; do
  case $1 in
    --iters) iters=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    *) echo "usage: $0 [BENCH] [--iters N] [--frames F]" >&2; exit 2 ;;
  esac
done
ref=
for mode in off noflag int; do
  line=$("$here/instr_per_pkt.sh" "$bench" --iters "$iters" --frames "$frames" --mode "$mode")
  v=$(echo "$line" | sed -n 's/.*"switch_instr_per_pkt":\([0-9.]*\).*/\1/p')
  [ -z "$ref" ] && ref=$v
  printf '{"bench":"switch_int_instr","mode":"%s","frame":%s,"value":%s,"unit":"instr/pkt","ref":%s,"ratio":%.3f}\n' \
    "$mode" "$frames" "$v" "$ref" "$(echo "$v / $ref" | bc -l)"
done
