# Shared by the bench scripts: where the binary is, a scratch directory, and
# best-of-N wall time and peak RSS of a command.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
ST=${ST:-$ROOT/build/cli/shardtool}
WORK=${WORK:-$ROOT/bench/work}
mkdir -p "$WORK"
if [ ! -x "$ST" ]; then
  echo "no shardtool at $ST: build it (meson setup build -Dbuildtype=release && ninja -C build) or set ST" >&2
  exit 2
fi

# The CPU every figure comes from: model and the flags that choose code
# paths (CRC32C, deflate, hashing), printed once per bench run.
cpu_flags() {
  local model flags
  model=$(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)
  flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
          grep -E '^(sse4_2|pclmulqdq|avx|avx2|avx512f|avx512bw|avx512vl|avx512_vbmi2|avx512_vnni|vpclmulqdq|sha_ni|bmi2)$' |
          tr '\n' ' ')
  echo "cpu: $model, $(nproc) cores; flags: $flags"
}
cpu_flags

# best_of N CMD...: prints the best wall time in seconds; the largest peak
# RSS seen (GNU time) is then given by peak_mb.
best_of() {
  local n=$1; shift
  local best="" t rss start end
  local PEAK_KB=0
  for _ in $(seq "$n"); do
    start=$(date +%s%N)
    /usr/bin/time -f "%M" -o "$WORK/.time" "$@" > /dev/null 2> "$WORK/.stderr" || {
      cat "$WORK/.stderr" >&2; return 1; }
    end=$(date +%s%N)
    t=$(awk "BEGIN{printf \"%.3f\", ($end - $start) / 1e9}")
    read -r rss < "$WORK/.time"
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    [ "$rss" -gt "$PEAK_KB" ] && PEAK_KB=$rss
  done
  echo "$PEAK_KB" > "$WORK/.peak"
  echo "$best"
}
peak_mb() { echo $(( $(cat "$WORK/.peak") / 1024 )); }

ratio() { awk "BEGIN{printf \"%.2f\", $1 / $2}"; }
rate() { awk "BEGIN{printf \"%.0f\", $1 / $2 / 1e6}"; }

# median_of N CMD...: like best_of, but prints the median wall time (the
# machine is shared: a median says more than the best run); peak_mb then
# gives the largest peak RSS of the N runs, and cpu_s the median CPU time
# (user + system, children included), which other load on the machine
# disturbs far less than wall time.
median_of() {
  local n=$1; shift
  local times=() cpus=() t rss usr sys start end
  local PEAK_KB=0
  for _ in $(seq "$n"); do
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$WORK/.time" "$@" > /dev/null 2> "$WORK/.stderr" || {
      cat "$WORK/.stderr" >&2; return 1; }
    end=$(date +%s%N)
    t=$(awk "BEGIN{printf \"%.3f\", ($end - $start) / 1e9}")
    times+=("$t")
    read -r rss usr sys < <(tail -n 1 "$WORK/.time")
    cpus+=("$(awk "BEGIN{printf \"%.2f\", $usr + $sys}")")
    [ "$rss" -gt "$PEAK_KB" ] && PEAK_KB=$rss
  done
  echo "$PEAK_KB" > "$WORK/.peak"
  printf '%s\n' "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}' > "$WORK/.cpu"
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'
}
cpu_s() { cat "$WORK/.cpu"; }

# Rounds of a peer comparison: `round_timed NAME CMD...` appends "NAME wall cpu
# rss_kb" to $WORK/.rounds (cleared by rounds_reset); the scripts run
# shardtool and its peer in turns, and a round's ratio compares two runs
# made under about the same load.  round_median NAME FIELD gives the median
# of a field (2 wall, 3 CPU), round_max_mb NAME the largest peak RSS, and
# round_ratio A B FIELD the median over rounds of A's figure / B's.
rounds_reset() { : > "$WORK/.rounds"; }
round_timed() {
  local name=$1 start end; shift
  start=$(date +%s%N)
  /usr/bin/time -f "%M %U %S" -o "$WORK/.time" "$@" > /dev/null 2> "$WORK/.stderr" || {
    cat "$WORK/.stderr" >&2; return 1; }
  end=$(date +%s%N)
  read -r rss usr sys < <(tail -n 1 "$WORK/.time")
  awk -v n="$name" -v w="$(( end - start ))" -v u="$usr" -v s="$sys" -v m="$rss" \
    'BEGIN{printf "%s %.3f %.2f %d\n", n, w / 1e9, u + s, m}' >> "$WORK/.rounds"
}
median_stdin() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
round_col() { awk -v n="$1" -v c="$2" '$1==n{print $c}' "$WORK/.rounds"; }
round_median() { round_col "$1" "$2" | median_stdin; }
round_max_mb() { echo $(( $(round_col "$1" 4 | sort -g | tail -n 1) / 1024 )); }
round_ratio() {
  paste <(round_col "$1" "$3") <(round_col "$2" "$3") | awk '{print $1 / $2}' | median_stdin |
    xargs printf '%.2f'
}
# The load on the machine while the figures were taken.
load_avg() { cut -d' ' -f1-3 /proc/loadavg; }
