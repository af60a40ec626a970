// DuckDB's side of tests/interop/parquet_nested.py: writes Parquet files
// from SQL and reads them back as JSON, with the column types as a tree.
//
//   node parquet_nested_duckdb.mjs write FILE SQL [COPY OPTIONS]   (default ROW_GROUP_SIZE 1000)
//   node parquet_nested_duckdb.mjs read FILE      -> {"types": {...}, "rows": [...]}
//
// Exits 77 when @duckdb/node-api is not installed (npm ci --prefix tests/interop).
import { loadDuckDB } from './duckdb_module.mjs';
const duckdb = await loadDuckDB();
const { DuckDBInstance, DuckDBTypeId: T } = duckdb;
const [cmd, file, sql, copyOptions] = process.argv.slice(2);
const con = await (await DuckDBInstance.create(':memory:')).connect();
const lit = (s) => "'" + s.replace(/'/g, "''") + "'";

function tree(t) {
  switch (t.typeId) {
    case T.LIST: return { t: 'list', of: tree(t.valueType) };
    case T.MAP: return { t: 'map', key: tree(t.keyType), value: tree(t.valueType) };
    case T.STRUCT: return { t: 'struct', fields: t.entryNames.map((n, i) => [n, tree(t.entryTypes[i])]) };
    case T.FLOAT: case T.DOUBLE: return { t: 'float' };
    case T.VARCHAR: case T.BLOB: return { t: 'bytes' };
    case T.BOOLEAN: return { t: 'bool' };
    default: return { t: 'int' };
  }
}

if (cmd === 'write') {
  await con.run(`COPY (${sql}) TO ${lit(file)} (FORMAT parquet, ${copyOptions || 'ROW_GROUP_SIZE 1000'})`);
} else if (cmd === 'read') {
  const r = await con.runAndReadAll(`SELECT * FROM read_parquet(${lit(file)})`);
  const types = {};
  r.columnNames().forEach((n, i) => { types[n] = tree(r.columnTypes()[i]); });
  process.stdout.write(JSON.stringify({ names: r.columnNames(), types, rows: r.getRowObjectsJson() }));
} else {
  console.error('usage: parquet_nested_duckdb.mjs write FILE SQL | read FILE');
  process.exit(2);
}
