// Interop test for the types `convert --to parquet` keeps from its input:
// DuckDB writes a Parquet file with TIMESTAMP (ms, us, ns, with and without
// time zone), DATE, TIME, DECIMAL (small and large), UUID, UTINYINT ..
// UBIGINT, TINYINT .. INTEGER, JSON, BLOB, BOOLEAN, DOUBLE and INTERVAL
// columns; shardtool converts it to Parquet; DuckDB reads ours back.
// DESCRIBE gives the source's types where they are kept (and the
// documented ones where not), the values equal the source's (DuckDB's own
// JSON export of each), and each type not kept is named by a note; the
// same for Arrow's alltypes-java.parquet (TIME in INT32 and in nanoseconds,
// UTC flags) and DuckDB's ENUM.  Also:
// Parquet -> TFRecord -> Parquet gives plain types and no such note (TFRecord
// has no types), and an Avro file's timestamp types are kept.
//
//   node tests/interop/parquet_write_types.js SHARDTOOL DATA_DIR WORK_DIR
//
// Exits 77 (skipped) when DuckDB is not installed.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { loadDuckDB } from './duckdb_module.mjs';

const duckdb = await loadDuckDB();
const [shardtool, dataDir, workDir] = process.argv.slice(2);
if (!workDir) {
  console.error('usage: parquet_write_types.js SHARDTOOL DATA_DIR WORK_DIR');
  process.exit(2);
}
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const instance = await duckdb.DuckDBInstance.create(':memory:', { threads: '2' });
const con = await instance.connect();

let passed = 0, failed = 0;
const fail = (what, msg) => { failed++; console.log(`FAIL ${what}: ${msg}`); };
const pass = () => { passed++; };
const expect = (what, ok, msg) => (ok ? pass() : fail(what, msg));
const lit = (s) => "'" + s.replace(/'/g, "''") + "'";

// Runs shardtool; returns its stderr (throws on failure).
function st(args) {
  const r = spawnSync(shardtool, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`shardtool ${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stderr;
}
const only = (dir, prefix) => path.join(dir, readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.parquet'))[0]);
const rows = async (sql) => (await con.runAndReadAll(sql)).getRows();
async function describe(file) {
  return Object.fromEntries((await rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${lit(file)})`)));
}
// DuckDB's JSON export of a query, as text.
let exports = 0;
async function exportJson(sql) {
  const out = path.join(workDir, `export${++exports}.json`);
  await con.run(`COPY (${sql}) TO ${lit(out)} (FORMAT json)`);
  return readFileSync(out, 'utf8');
}
// The "note: column 'x': ..." lines of a run's stderr, by column.
function typeNotes(stderr) {
  const notes = {};
  for (const m of stderr.matchAll(/note: column '([^']+)': (.* written as .*)$/gm)) notes[m[1]] = m[2];
  return notes;
}

// ---- the source -------------------------------------------------------------------------------

const src = path.join(workDir, 'src.parquet');
const base = `TIMESTAMP '2024-02-28 23:59:58.123456' + i * INTERVAL 1 hour + i * INTERVAL 1 day`;
await con.run(`COPY (SELECT i::BIGINT AS id,
    CASE WHEN i % 5 = 3 THEN NULL ELSE (${base})::TIMESTAMP_MS END AS ts_ms,
    ${base} AS ts_us,
    (strftime(${base}, '%Y-%m-%d %H:%M:%S.%f') || lpad((i * 7)::VARCHAR, 3, '0'))::TIMESTAMP_NS AS ts_ns,
    CASE WHEN i % 4 = 1 THEN NULL ELSE (${base})::TIMESTAMPTZ END AS ts_tz,
    DATE '1969-12-25' + (i * 37)::INT AS d,
    TIME '00:00:01.5' + i * INTERVAL 3001 millisecond AS t,
    CASE WHEN i % 3 = 0 THEN NULL ELSE [DATE '2000-01-01' + i::INT, DATE '1900-03-01' - i::INT] END AS dl,
    ((i - 10) * 1.25)::DECIMAL(9,2) AS dec9,
    ((i - 10) * 12345678.901)::DECIMAL(18,3) AS dec18,
    ((i - 10) * 1e20 + 0.0001)::DECIMAL(38,4) AS dec38,
    ('00000000-0000-4000-8000-0000000000' || lpad(i::VARCHAR, 2, '0'))::UUID AS u,
    (i * 6)::UTINYINT AS u8, (i * 1600)::USMALLINT AS u16, (4294967295 - i)::UINTEGER AS u32,
    (9223372036854775807 - i)::UBIGINT AS u64,
    (i * 6 - 128)::TINYINT AS i8, (i * 1600 - 32768)::SMALLINT AS i16, (i * 100000000 - 2147483648)::INTEGER AS i32,
    ('{"k":' || i::VARCHAR || '}')::JSON AS j,
    ('\\x00\\xFF' || i::VARCHAR)::BLOB AS b,
    'text ' || i::VARCHAR AS s,
    i % 2 = 0 AS bo,
    i::DOUBLE / 4 AS dbl,
    INTERVAL 1 day * i AS iv
  FROM range(40) t(i)) TO ${lit(src)} (FORMAT parquet)`);

// Written as the source's type: DuckDB must DESCRIBE them alike.
const kept = ['id', 'ts_ms', 'ts_us', 'ts_ns', 'ts_tz', 'd', 't', 'dl', 'dec9', 'dec18', 'u8', 'u16', 'u32', 'u64',
  'i8', 'i16', 'i32', 'j', 'b', 's'];
// Written as another type, with a note.
const changed = { dec38: 'VARCHAR', u: 'VARCHAR', bo: 'BIGINT', dbl: 'FLOAT', iv: 'BLOB' };
// The source's values of those, as ours hold them.
const changedValues = { dec38: 'dec38::VARCHAR', u: 'u::VARCHAR', bo: 'bo::BIGINT', dbl: 'dbl::FLOAT' };

// ---- Parquet -> Parquet, decimals as text (kept as DECIMAL up to 18 digits) ------------------------

{
  const dir = path.join(workDir, 'p');
  const err = st(['convert', src, '-o', path.join(dir, 'p'), '--to', 'parquet', '--decimal', 'text', '--no-manifest']);
  const ours = only(dir, 'p-');
  const want = await describe(src), got = await describe(ours);
  for (const c of kept) expect(`type of ${c}`, got[c] === want[c], `ours ${got[c]}, the source's ${want[c]}`);
  for (const [c, t] of Object.entries(changed)) expect(`type of ${c}`, got[c] === t, `ours ${got[c]}, expected ${t}`);
  const cols = kept.map((c) => `"${c}"`).join(', ');
  const a = await exportJson(`SELECT ${cols} FROM ${lit(src)}`), b = await exportJson(`SELECT ${cols} FROM ${lit(ours)}`);
  expect('values of the kept columns', a === b, `differ:\n  source ${a.slice(0, 800)}\n  ours   ${b.slice(0, 800)}`);
  for (const [c, e] of Object.entries(changedValues)) {
    const x = await exportJson(`SELECT ${e} AS v FROM ${lit(src)}`), y = await exportJson(`SELECT "${c}" AS v FROM ${lit(ours)}`);
    expect(`values of ${c}`, x === y, `differ:\n  source ${x.slice(0, 400)}\n  ours   ${y.slice(0, 400)}`);
  }
  const notes = typeNotes(err);
  for (const c of Object.keys(changed)) expect(`note for ${c}`, c in notes, `none in:\n${err}`);
  for (const c of kept) expect(`no note for ${c}`, !(c in notes), notes[c]);
  expect('note wording', notes.u === 'UUID of the input written as STRING (its 36-character text)', notes.u);
}

// ---- decimals read as float: FLOAT, and said so -------------------------------------------------------

{
  const dir = path.join(workDir, 'f');
  const err = st(['convert', src, '-o', path.join(dir, 'f'), '--to', 'parquet', '--no-manifest']);
  const got = await describe(only(dir, 'f-'));
  for (const c of ['dec9', 'dec18', 'dec38']) {
    expect(`float type of ${c}`, got[c] === 'FLOAT', got[c]);
    expect(`float note for ${c}`, /written as FLOAT \(decimals are read as float; --decimal text keeps them exact\)/
      .test(typeNotes(err)[c] || ''), err);
  }
  expect('float run keeps timestamps', got.ts_ns === 'TIMESTAMP_NS' && got.d === 'DATE', JSON.stringify(got));
}

// ---- Parquet -> TFRecord -> Parquet: TFRecord has no types -------------------------------------------

{
  const dir = path.join(workDir, 'rt');
  const e1 = st(['convert', src, '-o', path.join(dir, 't'), '--no-manifest']);
  const tf = path.join(dir, readdirSync(dir).filter((f) => f.endsWith('.tfrecord'))[0]);
  const e2 = st(['convert', tf, '-o', path.join(dir, 'p'), '--to', 'parquet', '--no-manifest']);
  expect('no type note writing TFRecord', Object.keys(typeNotes(e1)).length === 0, e1);
  expect('no type note from TFRecord', Object.keys(typeNotes(e2)).length === 0, e2);
  const got = await describe(only(dir, 'p-'));
  const plain = new Set(['BIGINT', 'FLOAT', 'VARCHAR', 'BLOB', 'BIGINT[]']);
  const odd = Object.entries(got).filter(([, t]) => !plain.has(t));
  expect('plain types after TFRecord', odd.length === 0, JSON.stringify(odd));
  expect('timestamps as int64 after TFRecord', got.ts_us === 'BIGINT' && got.d === 'BIGINT', JSON.stringify(got));
  // Same values, in the units the source's types had.
  const x = await exportJson(`SELECT epoch_ms(ts_ms) AS a, epoch_us(ts_us) AS b, epoch_ns(ts_ns) AS c,
      (d - DATE '1970-01-01') AS e, i32 AS f FROM ${lit(src)}`);
  const y = await exportJson(`SELECT ts_ms AS a, ts_us AS b, ts_ns AS c, d AS e, i32 AS f FROM ${lit(only(dir, 'p-'))}`);
  expect('values after TFRecord', x === y, `differ:\n  source ${x.slice(0, 400)}\n  ours   ${y.slice(0, 400)}`);
}

// ---- Arrow's (Java) file: TIME(MILLIS) in INT32, TIME(NANOS), UTC flags; DuckDB's ENUM -------------

{
  const java = path.join(dataDir, 'parquet', 'arrow-testing', 'alltypes-java.parquet');
  const dir = path.join(workDir, 'java');
  const err = st(['convert', java, '-o', path.join(dir, 'j'), '--to', 'parquet', '--decimal', 'text', '--no-manifest']);
  const ours = only(dir, 'j-');
  const want = await describe(java), got = await describe(ours);
  const changedJava = { bool: 'BIGINT', float64: 'FLOAT' };
  const same = Object.keys(got).filter((c) => !(c in changedJava));
  for (const c of same) expect(`Java type of ${c}`, got[c] === want[c], `ours ${got[c]}, the source's ${want[c]}`);
  for (const [c, t] of Object.entries(changedJava)) expect(`Java type of ${c}`, got[c] === t, `ours ${got[c]}, expected ${t}`);
  const cols = same.map((c) => `"${c}"`).join(', ');
  const a = await exportJson(`SELECT ${cols} FROM ${lit(java)}`), b = await exportJson(`SELECT ${cols} FROM ${lit(ours)}`);
  expect('Java values', a === b, `differ:\n  source ${a.slice(0, 800)}\n  ours   ${b.slice(0, 800)}`);
  const notes = typeNotes(err);
  expect('Java notes', JSON.stringify(Object.keys(notes).sort()) === JSON.stringify(['bool', 'fixed_size_binary', 'float16', 'float64']),
    JSON.stringify(notes));

  const enums = path.join(dataDir, 'parquet', 'duckdb', 'enum.parquet');
  st(['convert', enums, '-o', path.join(dir, 'e'), '--to', 'parquet', '--no-manifest']);
  const leaf = await rows(`SELECT converted_type FROM parquet_schema(${lit(only(dir, 'e-'))}) WHERE converted_type = 'ENUM'`);
  expect('ENUM kept', leaf.length === 1, JSON.stringify(leaf));
}

// ---- Avro timestamp types -> Parquet -------------------------------------------------------------------

{
  const avro = path.join(dataDir, 'avro', 'arrow-testing', 'timestamp_logical_types.avro');
  const dir = path.join(workDir, 'avro');
  const err = st(['convert', avro, '-o', path.join(dir, 'a'), '--to', 'parquet', '--no-manifest']);
  const ours = only(dir, 'a-');
  const got = await describe(ours);
  const want = { id: 'INTEGER', ts_millis: 'TIMESTAMP WITH TIME ZONE', ts_micros: 'TIMESTAMP WITH TIME ZONE',
    local_ts_millis: 'TIMESTAMP', local_ts_micros: 'TIMESTAMP', local_ts_nanos: 'TIMESTAMP_NS' };
  for (const [c, t] of Object.entries(want)) expect(`Avro type of ${c}`, got[c] === t, `ours ${got[c]}, expected ${t}`);
  expect('no note for Avro timestamps', Object.keys(typeNotes(err)).length === 0, err);
  const cat = execFileSync(shardtool, ['cat', avro], { encoding: 'utf8' }).trim().split('\n').map((l) => JSON.parse(l));
  const back = await rows(`SELECT epoch_ms(ts_millis), epoch_us(ts_micros), epoch_ms(local_ts_millis),
      epoch_us(local_ts_micros), epoch_ns(local_ts_nanos) FROM ${lit(ours)}`);
  const catVals = cat.map((r) => [r.ts_millis[0], r.ts_micros[0], r.local_ts_millis[0], r.local_ts_micros[0], r.local_ts_nanos[0]]
    .map(String).join(','));
  const ourVals = back.map((r) => r.map(String).join(','));
  expect('Avro timestamp values', JSON.stringify(catVals) === JSON.stringify(ourVals),
    `${JSON.stringify(ourVals)} vs cat ${JSON.stringify(catVals)}`);
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
