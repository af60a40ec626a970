#!/usr/bin/env bash
# The main job on the bundled sample, from a fresh Debian 12 machine:
#   bash examples/run-sample.sh
# Installs the build dependencies, builds shardtool, converts the sample CSV
# and Parquet tables (10,000 Chicago taxi trips each) into TFRecord shards,
# then verifies the shards against their manifests and shows their schema.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/install-deps build
[ -d build ] || meson setup build -Dbuildtype=release -Dtests=disabled
ninja -C build cli/shardtool
st=./build/cli/shardtool

out=${OUT:-$(mktemp -d)}
echo "== converting into $out"
$st convert examples/taxi.csv -o "$out/csv/train" --shards 4 --index --force
$st convert examples/taxi.parquet -o "$out/parquet/train" --shards 4 --compression gzip --force

echo "== verifying every record of every shard, and the manifests"
$st verify --decode --manifest "$out/csv/train.manifest.json"
$st verify --decode --manifest "$out/parquet/train.manifest.json"

echo "== schema"
$st stat --totals "$out"/csv/train-*-of-00004.tfrecord
echo "== first record"
$st cat -n 1 "$out"/parquet/train-00000-of-00004.tfrecord.gz
