// DuckDB's CSV reader on a file: every column parsed (types sniffed) and
// materialized, best of 3; prints "seconds S".  Used by csv_read_bench.
//   NODE_PATH=tests/interop/node_modules node csv_duckdb.mjs FILE [THREADS]
// (npm's @duckdb/node-api, installed by tests/install-npm-deps.sh)
import { createRequire } from 'module';
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + '/' : import.meta.url);
const { DuckDBInstance } = require('@duckdb/node-api');

const file = process.argv[2];
const threads = process.argv[3] || '2';
const inst = await DuckDBInstance.create(':memory:', { threads });
const con = await inst.connect();
let best = Infinity;
for (let i = 0; i < 3; i++) {
  const t0 = process.hrtime.bigint();
  await con.run(`CREATE OR REPLACE TABLE t AS SELECT * FROM read_csv('${file.replace(/'/g, "''")}')`);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (s < best) best = s;
}
console.log(`seconds ${best}`);
