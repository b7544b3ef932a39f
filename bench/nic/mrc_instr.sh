#!/bin/bash
# Instructions and simulated cache misses per data frame, MRC WRITE against
# RC WRITE (mrc_node_bench --only rc|mrc --frames N): deterministic where the
# timed mrc_node bench is not on a loaded machine. Runs under callgrind with
# its cache simulator (--cache-sim=yes: the same I1 / D1 / LL model as
# cachegrind: 32 KiB 8-way I1 and D1 and the host's LL unless valgrind is
# told otherwise), collecting only inside the measured calls (NicNode
# transmit / receive / advance, poll_cq, post_send), for N and 2N data frames
# and prints (count(2N) - count(N)) / N, so set-up and warm-up cancel out.
# One JSON line per message size:
#  {"bench":"mrc_instr","size":4096,"frames":N,"rc_instr":..,"mrc_instr":..,
#   "ratio_instr":rc/mrc,"rc_d1_miss":..,"mrc_d1_miss":..,"rc_ll_miss":..,
#   "mrc_ll_miss":..,"rc_i1_miss":..,"mrc_i1_miss":..}
# (d1 = D1 read + write misses, ll = LL data read + write misses, i1 = I1
# misses, each per data frame).
# Usage: bench/nic/mrc_instr.sh [BENCH] [--frames N] [--sizes 65536,4096]
set -euo pipefail
bench=${1:-build/bench/nic/mrc_node_bench}
shift || true
frames=16000 sizes=65536,4096
while [ $# -gt 0 ]; do
  case $1 in
    --frames) frames=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    *) echo "usage: $0 [BENCH] [--frames N] [--sizes 65536,4096]" >&2; exit 2 ;;
  esac
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() {  # $1 rc|mrc, $2 size, $3 frames, $4 out file
  valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no --callgrind-out-file="$4" \
    --toggle-collect='sf::nic::NicNode::transmit*' --toggle-collect='sf::nic::NicNode::receive*' \
    --toggle-collect='sf::nic::NicNode::advance*' --toggle-collect='sf::nic::verbs::poll_cq*' \
    --toggle-collect='sf::nic::verbs::post_send*' \
    "$bench" --only "$1" --sizes "$2" --frames "$3" >/dev/null 2>>"$dir/log"
}
# "events:" names the columns of the "summary:" line; prints name=value pairs.
counts() {
  awk '/^events:/ {for (i = 2; i <= NF; ++i) name[i] = $i}
       /^summary:/ {for (i = 2; i <= NF; ++i) printf "%s=%s ", name[i], $i; print ""}' "$1"
}
get() {  # $1 counts line, $2 event
  echo "$1" | tr ' ' '\n' | awk -F= -v e="$2" '$1 == e {print $2}'
}
IFS=, read -ra size_list <<< "$sizes"
for size in "${size_list[@]}"; do
  declare -A per
  for t in rc mrc; do
    run "$t" "$size" "$frames" "$dir/$t.a"
    run "$t" "$size" $((2 * frames)) "$dir/$t.b"
    a=$(counts "$dir/$t.a")
    b=$(counts "$dir/$t.b")
    d() { echo "scale=2; ($(get "$b" "$1") - $(get "$a" "$1")) / $frames" | bc -l; }
    d2() { echo "scale=2; ($(get "$b" "$1") + $(get "$b" "$2") - $(get "$a" "$1") - $(get "$a" "$2")) / $frames" | bc -l; }
    per[$t.ir]=$(d Ir)
    per[$t.d1]=$(d2 D1mr D1mw)
    per[$t.ll]=$(d2 DLmr DLmw)
    per[$t.i1]=$(d I1mr)
  done
  printf '{"bench":"mrc_instr","size":%s,"frames":%s,"rc_instr":%.1f,"mrc_instr":%.1f,"ratio_instr":%.3f,"rc_d1_miss":%.2f,"mrc_d1_miss":%.2f,"rc_ll_miss":%.2f,"mrc_ll_miss":%.2f,"rc_i1_miss":%.2f,"mrc_i1_miss":%.2f}\n' \
    "$size" "$frames" "${per[rc.ir]}" "${per[mrc.ir]}" "$(echo "${per[rc.ir]} / ${per[mrc.ir]}" | bc -l)" \
    "${per[rc.d1]}" "${per[mrc.d1]}" "${per[rc.ll]}" "${per[mrc.ll]}" "${per[rc.i1]}" "${per[mrc.i1]}"
  if [ -n "${SF_KEEP_CALLGRIND:-}" ]; then
    cp "$dir/rc.b" "$SF_KEEP_CALLGRIND.rc.$size"
    cp "$dir/mrc.b" "$SF_KEEP_CALLGRIND.mrc.$size"
  fi
  unset per
done
