#!/bin/bash
# Instructions per packet of SwitchNode::receive + transmit (callgrind, which
# counts instructions deterministically: unaffected by a loaded machine).
# Runs switch_node_bench under callgrind for N and 2N bursts of 32 frames and
# prints (I(2N) - I(N)) / (N x 32), so set-up and warm-up cancel out; also the
# whole bench loop's figure (alloc + copy + free + switch).
# --mix multi: the frames of switch_node_bench --flows multi (16 destinations
# x 64 UDP source ports, consecutive frames differ); default single.
# Usage: bench/switch/instr_per_pkt.sh [BENCH] [--iters N] [--frames 64] [--mode l2] [--mix single|multi]
set -euo pipefail
bench=${1:-build/bench/switch/switch_node_bench}
shift || true
iters=5000 frames=64 mode=l2 mix=single
while [ $# -gt 0 ]; do
  case $1 in
    --iters) iters=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --mix) mix=$2; shift 2 ;;
    *) echo "usage: $0 [BENCH] [--iters N] [--frames F] [--mode l2|l3] [--mix single|multi]" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
total() {  # total Ir of a callgrind file
  callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}'
}
run() {  # $1 iters, $2 out prefix
  valgrind --tool=callgrind --callgrind-out-file="$dir/$2.sw" \
    --toggle-collect='sf::sw::SwitchNode::receive(*' --toggle-collect='sf::sw::SwitchNode::transmit(*' \
    "$bench" --iters "$1" --frames "$frames" --mode "$mode" --flows "$mix" >/dev/null 2>"$dir/$2.log"
  valgrind --tool=callgrind --callgrind-out-file="$dir/$2.all" \
    "$bench" --iters "$1" --frames "$frames" --mode "$mode" --flows "$mix" >/dev/null 2>>"$dir/$2.log"
}
run "$iters" a
run $((2 * iters)) b
pkts=$((iters * 32))
sw=$(( $(total "$dir/b.sw") - $(total "$dir/a.sw") ))
all=$(( $(total "$dir/b.all") - $(total "$dir/a.all") ))
# The whole-program run has both loops (reference and switch): 2 x pkts packets.
printf '{"bench":"switch_node_instr","mode":"%s","mix":"%s","frame":%s,"switch_instr_per_pkt":%.1f,"bench_loops_instr_per_pkt":%.1f}\n' \
  "$mode" "$mix" "$frames" "$(echo "$sw / $pkts" | bc -l)" "$(echo "$all / $pkts" | bc -l)"
[ -n "${SF_KEEP_CALLGRIND:-}" ] && cp "$dir"/b.sw "$SF_KEEP_CALLGRIND" || true
