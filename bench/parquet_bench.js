// Benchmark: reading a Parquet file of 2M rows x 13 columns (SNAPPY), ours
// against DuckDB writing the same file to CSV.  Prints times and the ratio;
// not a pass/fail test.
//
//   node bench/parquet_bench.js OURS_COMMAND... 
//
// OURS_COMMAND is run with the Parquet path appended, e.g.
//   node bench/parquet_bench.js build/tests/parquet_dump --count --jobs 0
//   node bench/parquet_bench.js build/cli/shardtool convert --force -o /tmp/out
// DuckDB comes from tests/interop/node_modules (npm ci --prefix tests/interop).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', 'tests', 'interop', 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const ours = process.argv.slice(2);
if (!ours.length) {
  console.error('usage: node bench/parquet_bench.js OURS_COMMAND...');
  process.exit(2);
}
const work = path.join(here, 'work');
mkdirSync(work, { recursive: true });
const file = path.join(work, 'bench_2m_x13.snappy.parquet');
const csv = path.join(work, 'bench_2m_x13.csv');

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
if (!existsSync(file)) {
  await con.run(`COPY (SELECT
      i::BIGINT AS id,
      (i % 1000)::INTEGER AS small_int,
      (hash(i) >> 1)::BIGINT AS big_int,
      (i * 0.37)::DOUBLE AS amount,
      (i % 97 / 7.0)::FLOAT AS ratio,
      'user_' || (i % 50000) AS user_name,
      CASE WHEN i % 10 = 0 THEN NULL ELSE 'city_' || (i % 300) END AS city,
      md5(i::VARCHAR) AS token,
      i % 2 = 0 AS flag,
      DATE '2000-01-01' + (i % 9000)::INTEGER AS day,
      TIMESTAMP '2020-01-01' + to_microseconds(i * 1000) AS ts,
      (i % 100000)::DECIMAL(12,2) AS price,
      CASE WHEN i % 3 = 0 THEN NULL ELSE i * 2 END AS maybe
    FROM range(2000000) r(i)) TO '${file}' (FORMAT parquet, COMPRESSION snappy)`);
}

function time(fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

let duck = Infinity, mine = Infinity;
for (let k = 0; k < 3; k++) {
  const t0 = process.hrtime.bigint();
  await con.run(`COPY (SELECT * FROM read_parquet('${file}')) TO '${csv}' (FORMAT csv)`);
  duck = Math.min(duck, Number(process.hrtime.bigint() - t0) / 1e9);
  mine = Math.min(mine, time(() => execFileSync(ours[0], [...ours.slice(1), file], { stdio: ['ignore', 'ignore', 'inherit'] })));
}
console.log(`DuckDB Parquet -> CSV: ${duck.toFixed(3)} s`);
console.log(`ours:                  ${mine.toFixed(3)} s`);
console.log(`ratio ours/DuckDB:     ${(mine / duck).toFixed(2)} (below 1 is faster)`);
