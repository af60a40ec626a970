#!/usr/bin/env bash
# convert of a 2M-row x 13-column CSV (~207 MB) into 8 shards with 2 threads,
# against DuckDB reading the same CSV and writing snappy Parquet with 2
# threads, in the same run.  Target: ratio shardtool/DuckDB <= 0.6 (issue
# 15), peak RSS under 300 MB.  The two run in turns, RUNS rounds (default
# 5), and the ratio printed is the median of the rounds' ratios: on a
# shared machine the load changes within seconds, and a round compares
# runs made under about the same load.  CPU time (user + system) is
# printed beside wall time: it says more there.  Put WORK on tmpfs
# (WORK=/dev/shm/...) to take the disk out.  Needs npm's @duckdb/node-api
# (tests/install-npm-deps.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
bytes=$(stat -L -c %s "$csv")
cat "$csv" > /dev/null
export NODE_PATH=$ROOT/tests/interop/node_modules

# timed NAME CMD...: appends "NAME wall cpu rss_kb" to $WORK/.rounds.
timed() {
  local name=$1 start end; shift
  start=$(date +%s%N)
  /usr/bin/time -f "%M %U %S" -o "$WORK/.time" "$@" > /dev/null 2> "$WORK/.stderr" || {
    cat "$WORK/.stderr" >&2; return 1; }
  end=$(date +%s%N)
  read -r rss usr sys < <(tail -n 1 "$WORK/.time")
  awk -v n="$name" -v w="$(( end - start ))" -v u="$usr" -v s="$sys" -v m="$rss" \
    'BEGIN{printf "%s %.3f %.2f %d\n", n, w / 1e9, u + s, m}' >> "$WORK/.rounds"
}

runs=${RUNS:-5}
: > "$WORK/.rounds"
for _ in $(seq "$runs"); do
  timed st "$ST" convert "$csv" -o "$WORK/out/x" --shards 8 --jobs 2 --force --quiet
  timed db node "$BENCH_DIR/duckdb_copy.mjs" \
    "COPY (SELECT * FROM read_csv('$csv')) TO '$WORK/x.parquet' (FORMAT parquet, COMPRESSION snappy)"
done
median() { sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
col() { awk -v n="$1" -v c="$2" '$1==n{print $c}' "$WORK/.rounds"; }
t_st=$(col st 2 | median); cpu_st=$(col st 3 | median)
t_db=$(col db 2 | median); cpu_db=$(col db 3 | median)
rss_st=$(( $(col st 4 | sort -g | tail -n 1) / 1024 ))
# Round k's ratio: the k-th st line against the k-th db line.
r_wall=$(paste <(col st 2) <(col db 2) | awk '{print $1 / $2}' | median)
r_cpu=$(paste <(col st 3) <(col db 3) | awk '{print $1 / $2}' | median)
echo "input: $csv ($bytes bytes, $rows rows); $runs rounds, medians"
echo "shardtool convert --shards 8 --jobs 2: ${t_st} s ($(rate "$bytes" "$t_st") MB/s, $(awk "BEGIN{printf \"%.2f\", $rows/$t_st/1e6}") M records/s), CPU ${cpu_st} s, peak RSS ${rss_st} MB"
echo "DuckDB read_csv -> snappy Parquet (2 threads): ${t_db} s ($(rate "$bytes" "$t_db") MB/s), CPU ${cpu_db} s"
echo "ratio shardtool / DuckDB (median of the rounds) = $(printf '%.2f' "$r_wall") wall, $(printf '%.2f' "$r_cpu") CPU  (target <= 0.6; RSS target < 300 MB)"
