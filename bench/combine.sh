#!/usr/bin/env bash
# `shardtool combine` over 10,000 task manifests (TASKS=...), each a copy of
# a real task manifest of `convert --task I/N --shards 2` (the taxi sample:
# 2 shards, 17 features) with its own numbers, beside empty (sparse) shards
# of the sizes listed, with the inodes and change times a task records: the
# combine step reads only manifests (and proves each listed shard by one
# lstat), so its time must grow with their number, not with the data.
# Target: under 2 s for 10,000.  A benchmark, not a test.
#
# usage: bench/combine.sh [SHARDTOOL]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
st=${1:-$here/build/cli/shardtool}
ST=$st source "$here/bench/lib.sh"   # prints the CPU and its flags
tasks=${TASKS:-10000}
work=$(mktemp -d /tmp/st-bench-combine-XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

"$st" convert "$here/tests/data/csv/tfx/chicago_taxi_data.csv" -o "$work/seed/x" --task 0/2 --shards 2 -q
python3 - "$work/seed/x-task00000-of-00002.manifest.json" "$work/set/train" "$tasks" <<'PY'
import json, os, sys
seed, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(seed))
os.makedirs(os.path.dirname(prefix), exist_ok=True)
base = os.path.basename(prefix)
total = 2 * n
for i in range(n):
    m["shards"][0]["path"] = "%s-%05d-of-%05d.tfrecord" % (base, 2 * i, total)
    m["shards"][1]["path"] = "%s-%05d-of-%05d.tfrecord" % (base, 2 * i + 1, total)
    m["options"]["task"] = "%d/%d" % (i, n)
    m["options"]["inputs"] = ["s3://lake/train/part-%05d.csv" % i]
    m["options"]["task_share"] = {"task": i, "tasks": n, "first_shard": 2 * i, "shards": 2, "total_shards": total}
    for s in m["shards"]:
        path = os.path.join(os.path.dirname(prefix), s["path"])
        with open(path, "wb") as f:
            f.truncate(s["bytes"])
        # the witnesses a task records once its shards have their names:
        # with them combine proves each shard by one lstat, not by reading
        st = os.lstat(path)
        s["inode"], s["ctime_ns"] = st.st_ino, st.st_ctime_ns
    with open("%s-task%05d-of-%05d.manifest.json" % (prefix, i, n), "w") as f:
        json.dump(m, f, indent=2)
PY
bytes=$(cat "$work"/set/*.manifest.json | wc -c)
sync
# Best of 3 (the machine may be shared): wall and CPU seconds.
best=
for run in 1 2 3; do
  /usr/bin/time -f "%e %U %S" -o "$work/time" "$st" combine -f -q "$work/set/train"
  read -r wall user sys < "$work/time"
  if [ -z "$best" ] || awk "BEGIN{exit !($wall < ${best%% *})}"; then best="$wall $user $sys"; fi
done
read -r wall user sys <<< "$best"
echo "combine of $tasks task manifests ($((bytes / 1024 / 1024)) MiB of JSON): ${wall} s wall, ${user} s user + ${sys} s sys (best of 3)"
