#!/usr/bin/env bash
# A distributed conversion against one process, in the same run: a CSV set
# (ROWS rows of gen_table.py in FILES files; 20M rows make the ~2 GB of the
# target, the default 2M rows ~217 MB) converted
#   - by one process: convert --shards 32 --jobs 2;
#   - by a Slurm job array of TASKS=16 tasks, 2 at a time (--array=0-15%2,
#     one CPU each) on a one-node cluster started here (the packages of
#     .ci/install-deps), each: convert --tasks 16 --shards 2 --jobs 1;
# then `shardtool combine`.  Prints both times (the array's from the
# first task's start to the last task's end, as the tasks log it, so that
# sbatch's polling is not counted; and with it), their ratio (target
# <= 1.1), the combine time, the balance of the set, and the throughput of
# one task, from which the man page's arithmetic for 10 TB comes.
# A benchmark, not a test.
#
# usage: bench/distributed.sh     (ST=path/to/shardtool ROWS=... FILES=... TASKS=...)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rows=${ROWS:-2000000}
files=${FILES:-32}
tasks=${TASKS:-16}

csv=$WORK/table-$rows.csv
[ -f "$csv" ] || python3 "$BENCH_DIR/gen_table.py" "$csv" "$rows"
set_dir=$WORK/dist-$rows-$files
if [ ! -d "$set_dir" ]; then
  mkdir -p "$set_dir.tmp"
  python3 - "$csv" "$set_dir.tmp" "$files" <<'PY'
import sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(src) as f:
    header = f.readline()
    lines = f.readlines()
per = (len(lines) + n - 1) // n
for i in range(n):
    with open("%s/part-%03d.csv" % (out, i), "w") as g:
        g.write(header)
        g.writelines(lines[i * per:(i + 1) * per])
PY
  mv "$set_dir.tmp" "$set_dir"
fi
bytes=$(du -cb "$set_dir"/*.csv | tail -1 | cut -f1)
cat "$set_dir"/*.csv > /dev/null

run=$WORK/dist-run
rm -rf "$run"
mkdir -p "$run"
t_one=$(best_of 1 "$ST" convert "$set_dir/*.csv" -o "$run/single/train" --shards 32 --jobs 2 --quiet)

ST="$ST" TASKS="$tasks" SET="$set_dir" RUN="$run" ROOT="$ROOT" python3 - <<'PY'
import json, os, re, subprocess, sys, time
root, run, tasks = os.environ["ROOT"], os.environ["RUN"], int(os.environ["TASKS"])
sys.path.insert(0, os.path.join(root, "tests", "cli"))
sys.argv = ["bench", os.environ["ST"], root]
import test_distributed as td
bindir = os.path.join(run, "bin")
os.makedirs(bindir)
os.symlink(os.environ["ST"], os.path.join(bindir, "shardtool"))
slurm = td.Slurm(os.path.join(run, "slurm"))
try:
    work = os.path.join(run, "array")
    os.makedirs(work)
    with open(os.path.join(work, "job.sh"), "w") as f:
        f.write(f"""#!/bin/sh
#SBATCH --array=0-{tasks - 1}%2
#SBATCH --cpus-per-task=1
echo start $(date +%s.%N) > times-$SLURM_ARRAY_TASK_ID
shardtool convert '{os.environ["SET"]}/*.csv' -o out/train --shards 2 --tasks {tasks} --jobs 1 -q
echo end $(date +%s.%N) >> times-$SLURM_ARRAY_TASK_ID
""")
    env = dict(slurm.env, PATH=bindir + os.pathsep + os.environ["PATH"])
    t0 = time.time()
    r = slurm.client(["sbatch", "--wait", "-o", "/dev/null", "job.sh"], env=env, timeout=3600, cwd=work)
    t_wait = time.time() - t0
    if r.returncode:
        sys.exit("the array failed: %s" % r.stderr)
    spans = []
    for i in range(tasks):
        d = dict(line.split() for line in open(os.path.join(work, "times-%d" % i)))
        spans.append((float(d["start"]), float(d["end"])))
    t_array = max(e for s, e in spans) - min(s for s, e in spans)
    per_task = sum(e - s for s, e in spans) / tasks
    t0 = time.time()
    r = subprocess.run([os.environ["ST"], "combine", "-q", os.path.join(work, "out", "train")])
    t_combine = time.time() - t0
    m = json.load(open(os.path.join(work, "out", "train.manifest.json")))
    json.dump({"array": t_array, "array_with_sbatch": t_wait, "per_task": per_task, "combine": t_combine,
               "balance": m["balance"]}, open(os.path.join(run, "result.json"), "w"))
finally:
    slurm.stop()
PY
read -r t_array t_wait per_task t_combine bal <<< "$(python3 -c "
import json; r = json.load(open('$run/result.json')); b = r['balance']
print(r['array'], r['array_with_sbatch'], r['per_task'], r['combine'],
      'min %d max %d mean %.1f imbalance %.4f' % (b['min_records'], b['max_records'], b['mean_records'], b['imbalance']))")"
echo "input: $files CSV files, $rows rows, $bytes bytes"
echo "one process, --shards 32 --jobs 2:                  ${t_one} s ($(rate "$bytes" "$t_one") MB/s)"
echo "Slurm array of $tasks tasks, 2 at a time, 1 CPU each: $(printf %.3f "$t_array") s first start to last end ($(printf %.3f "$t_wait") s with sbatch --wait)"
echo "ratio array / one process: $(ratio "$t_array" "$t_one") (target <= 1.1)"
echo "one task ($((bytes / tasks)) bytes): $(printf %.3f "$per_task") s mean, $(rate "$((bytes / tasks))" "$per_task") MB/s per task on one CPU"
echo "combine of $tasks task manifests: $(printf %.3f "$t_combine") s"
echo "balance (records per shard): $bal"
