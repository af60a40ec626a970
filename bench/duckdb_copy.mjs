// Runs one SQL statement in DuckDB with 2 threads (the benchmarks' peer).
//   node duckdb_copy.mjs "SQL" [THREADS]
import { createRequire } from 'module';
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + '/' : import.meta.url);
const { DuckDBInstance } = require('@duckdb/node-api');

const inst = await DuckDBInstance.create(':memory:', { threads: process.argv[3] || '2' });
const con = await inst.connect();
await con.run(process.argv[2]);
