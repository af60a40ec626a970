// Interop test for the Parquet writer (`convert --to parquet`): DuckDB, an
// independent reader, reads every file we write and returns exactly the
// values of the source, as `shardtool cat` prints them from the source.
//
//   node tests/interop/parquet_write_duckdb.js SHARDTOOL PYTHON3 SOURCE_DIR DATA_DIR WORK_DIR
//
// Sources: TFRecords of Examples and SequenceExamples written by
// python3-protobuf (parquet_write_examples.py; skipped without it), the
// Chicago taxi sample as CSV, Parquet and Avro, the Avro, Parquet and
// TFRecord corpus files we read, and a CSV of edge cases.  Every codec with
// data pages v1 and v2 (the generated sources get the whole matrix, the
// corpus a rotation of it), small row groups and pages.  Also: our own
// reader reads what we write; Parquet -> TFRecord -> Parquet round trips
// give DuckDB the same table and types; --shards, --records-per-shard and
// --shard-size give shards that are each a complete file.
//
// Values are compared as tokens: int64 as decimal text, float as float32,
// bytes as hex; a null column is an absent feature, a null step of a
// LIST of LIST an empty step (cat prints a step with no kind as []).
// Exits 77 (skipped) when DuckDB is not installed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadDuckDB } from './duckdb_module.mjs';

const duckdb = await loadDuckDB();
const { DuckDBInstance, DuckDBTypeId: T } = duckdb;
const [shardtool, python, srcDir, dataDir, workDir] = process.argv.slice(2);
if (!workDir) {
  console.error('usage: parquet_write_duckdb.js SHARDTOOL PYTHON3 SOURCE_DIR DATA_DIR WORK_DIR');
  process.exit(2);
}
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await instance.connect();

let passed = 0, failed = 0;
const fail = (what, msg) => { failed++; console.log(`FAIL ${what}: ${msg}`); };
const pass = () => { passed++; };

function st(args) {
  return execFileSync(shardtool, args, { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
}
function tryst(args) {
  try { return { ok: true, out: st(args) }; } catch (e) { return { ok: false, err: String(e.stderr || e.message) }; }
}

// ---- tokens -------------------------------------------------------------------------------

function floatToken(x) {
  const v = Math.fround(x);
  if (Number.isNaN(v)) return 'f:NaN';
  if (Object.is(v, -0)) return 'f:-0';
  return 'f:' + String(v);
}

// A JSON parser that keeps numbers as their text (int64 beyond 2^53, and
// whether cat printed an integer or a float: cat writes floats with a '.').
function parseJson(s) {
  let i = 0;
  const ws = () => { while (' \t\r\n'.includes(s[i])) i++; };
  function value() {
    ws();
    const c = s[i];
    if (c === '{') {
      i++; const o = {}; ws();
      if (s[i] === '}') { i++; return o; }
      for (;;) { ws(); const k = value(); ws(); i++; o[k] = value(); ws(); if (s[i++] === '}') return o; }
    }
    if (c === '[') {
      i++; const a = []; ws();
      if (s[i] === ']') { i++; return a; }
      for (;;) { a.push(value()); ws(); if (s[i++] === ']') return a; }
    }
    if (c === '"') {
      let j = i + 1;
      while (s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
      const str = JSON.parse(s.slice(i, j + 1)); i = j + 1; return str;
    }
    if (s.startsWith('null', i)) { i += 4; return null; }
    if (s.startsWith('true', i)) { i += 4; return true; }
    if (s.startsWith('false', i)) { i += 5; return false; }
    let j = i;
    while (j < s.length && '+-0123456789.eE'.includes(s[j])) j++;
    const num = { num: s.slice(i, j) }; i = j; return num;
  }
  return value();
}

function catToken(v) {
  if (v && typeof v === 'object' && 'num' in v) {
    return /[.eE]/.test(v.num) ? floatToken(parseFloat(v.num)) : 'i:' + BigInt(v.num).toString();
  }
  if (typeof v === 'string') {
    if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return floatToken(Number(v));
    return 'b:' + Buffer.from(v, 'utf8').toString('hex').toUpperCase();
  }
  if (v && typeof v === 'object' && 'base64' in v) return 'b:' + Buffer.from(v.base64, 'base64').toString('hex').toUpperCase();
  if (v === null) return 'f:NaN'; // cat prints a non-finite float it cannot name as null
  throw new Error('unexpected value in cat output: ' + JSON.stringify(v));
}

function canonical(entries) {
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify(entries);
}

// `shardtool cat` of any input -> one canonical string per record.
function catRows(file, extra = []) {
  const r = tryst(['cat', ...extra, file]);
  if (!r.ok) return null;
  return r.out.split('\n').filter((l) => l.length).map((l) => {
    const rec = parseJson(l);
    const entries = [];
    const feats = 'feature_lists' in rec ? rec.context : rec;
    for (const [k, vals] of Object.entries(feats)) entries.push([k, vals.map(catToken)]);
    if ('feature_lists' in rec)
      for (const [k, steps] of Object.entries(rec.feature_lists)) entries.push([k + '[]', steps.map((s) => (s === null ? null : s.map(catToken)))]);
    return canonical(entries);
  });
}

const q = (s) => '"' + s.replace(/"/g, '""') + '"';
const lit = (s) => "'" + s.replace(/'/g, "''") + "'";

// Types kept from the input (TIMESTAMP, DATE, ...) are int64 to cat, in
// the unit of the column's Parquet type (`unit`: 'ms', 'us', 'ns').
function tokExpr(e, t, unit) {
  switch (t.typeId) {
    case T.BIGINT: case T.INTEGER: case T.SMALLINT: case T.TINYINT:
    case T.UBIGINT: case T.UINTEGER: case T.USMALLINT: case T.UTINYINT:
      return `'i:' || ${e}::VARCHAR`;
    case T.DATE: return `'i:' || (${e} - DATE '1970-01-01')::VARCHAR`;
    case T.TIMESTAMP: case T.TIMESTAMP_MS: case T.TIMESTAMP_NS: case T.TIMESTAMP_TZ:
      return `'i:' || epoch_${unit || 'us'}(${e})::VARCHAR`;
    case T.TIME: case T.TIME_TZ: {
      const us = `datediff('microsecond', TIME '00:00:00', ${e}::TIME)`;
      return `'i:' || (${unit === 'ms' ? `${us} // 1000` : unit === 'ns' ? `${us} * 1000` : us})::VARCHAR`;
    }
    case T.DECIMAL: return `'b:' || hex(${e}::VARCHAR)`;
    case T.FLOAT: return `'f:' || ${e}::VARCHAR`;
    case T.VARCHAR: case T.BLOB: return `'b:' || hex(${e})`;
    default: throw new Error(`the writer does not write DuckDB type ${t.toString()}`);
  }
}

// DuckDB's JSON export of the files -> one canonical string per record.
async function duckRows(files, what) {
  const src = `read_parquet([${files.map(lit).join(', ')}])`;
  const desc = await con.runAndReadAll(`SELECT * FROM ${src} LIMIT 0`);
  const names = desc.columnNames(), types = desc.columnTypes();
  // Each column has one leaf, in column order: its time unit, if any.
  const leaves = (await con.runAndReadAll(`SELECT logical_type FROM parquet_schema(${lit(files[0])})
      WHERE type IS NOT NULL`)).getRows();
  const units = leaves.map(([lt]) => (!lt ? null : lt.includes('MILLIS=MilliSeconds') ? 'ms'
    : lt.includes('MICROS=MicroSeconds') ? 'us' : lt.includes('NANOS=NanoSeconds') ? 'ns' : null));
  const cols = names.map((n, i) => {
    const t = types[i], c = q(n), u = units[i];
    if (t.typeId === T.LIST && t.valueType.typeId === T.LIST)
      return { name: n + '[]', sql: `list_transform(${c}, s -> list_transform(s, x -> ${tokExpr('x', t.valueType.valueType, u)}))` };
    if (t.typeId === T.LIST) return { name: n, sql: `list_transform(${c}, x -> ${tokExpr('x', t.valueType, u)})` };
    return { name: n, sql: `CASE WHEN ${c} IS NULL THEN NULL ELSE [${tokExpr(c, t, u)}] END` };
  });
  const out = path.join(workDir, `duck${++runs}.json`);
  const select = cols.length ? cols.map((c, i) => `${c.sql} AS c${i}`).join(', ') : '1 AS none';
  await con.run(`COPY (SELECT ${select} FROM ${src}) TO ${lit(out)} (FORMAT json)`);
  const text = readFileSync(out, 'utf8');
  rmSync(out);
  const fix = (tok) => (tok.startsWith('f:') ? floatToken(tok === 'f:nan' || tok === 'f:-nan' ? NaN : tok === 'f:inf' ? Infinity : tok === 'f:-inf' ? -Infinity : parseFloat(tok.slice(2))) : tok);
  return text.split('\n').filter((l) => l.length).map((l) => {
    const row = JSON.parse(l);
    const entries = [];
    cols.forEach((c, i) => {
      const v = row[`c${i}`];
      if (v === null || v === undefined) return;
      entries.push([c.name, c.name.endsWith('[]') ? v.map((s) => (s === null ? null : s.map(fix))) : v.map(fix)]);
    });
    return canonical(entries);
  });
}

function sameRows(what, got, want, ordered = true) {
  if (!ordered) { got = [...got].sort(); want = [...want].sort(); }
  if (got.length !== want.length) return fail(what, `${got.length} rows, the source has ${want.length}`);
  for (let i = 0; i < got.length; i++)
    if (got[i] !== want[i]) return fail(what, `row ${i} differs:\n  got  ${got[i].slice(0, 600)}\n  want ${want[i].slice(0, 600)}`);
  pass();
}

function shardFiles(prefix) {
  const dir = path.dirname(prefix), base = path.basename(prefix);
  return readdirSync(dir).filter((f) => f.startsWith(base + '-') && f.endsWith('.parquet')).sort().map((f) => path.join(dir, f));
}

const codecs = ['snappy', 'zstd', 'gzip', 'lz4_raw', 'uncompressed'];
const combos = [];
for (const c of codecs) for (const v of ['1', '2']) combos.push([c, v]);

// Converts `src` with one codec / page version and compares DuckDB's rows
// (and our reader's) with the source's.
let runs = 0;
async function check(src, want, codec, version, extra = [], ownReader = true) {
  const what = `${path.relative(dataDir, src) || src} (${codec}, v${version}${extra.length ? ' ' + extra.join(' ') : ''})`;
  // A new name each time: DuckDB may keep a file's metadata by its name.
  const prefix = path.join(workDir, 'out', `p${++runs}`);
  rmSync(path.join(workDir, 'out'), { recursive: true, force: true });
  const r = tryst(['convert', src, '-o', prefix, '--to', 'parquet', '--parquet-codec', codec, '--page-version', version,
    '--quiet', '--no-manifest', ...extra]);
  if (!r.ok && want.every((row) => row === '[]') && r.err.includes('needs at least one column')) return pass();
  // A context feature and a FeatureList of one name cannot both be columns:
  // refused, and rightly only when the source has such a pair.
  const clash = want.some((row) => JSON.parse(row).some(([k], _, all) => all.some(([o]) => o === k + '[]')));
  if (!r.ok && clash && r.err.includes('is both a feature and a FeatureList')) return pass();
  if (!r.ok) return fail(what, 'convert failed: ' + r.err);
  const files = shardFiles(prefix);
  let got;
  try {
    got = await duckRows(files, what);
  } catch (e) {
    return fail(what, 'DuckDB cannot read it: ' + e.message);
  }
  sameRows(what + ' by DuckDB', got, want);
  if (ownReader) {
    const ours = catRows(files[0]);
    if (!ours) fail(what + ' by our reader', 'shardtool cat failed');
    else sameRows(what + ' by our reader', ours, want);
  }
}

// ---- the sources --------------------------------------------------------------------------------

const gen = path.join(workDir, 'gen');
mkdirSync(gen, { recursive: true });
const generated = [];
try {
  execFileSync(python, [path.join(srcDir, 'tests/interop/parquet_write_examples.py'), path.join(srcDir, 'formats/example'), gen],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  generated.push(path.join(gen, 'examples.tfrecord'), path.join(gen, 'sequences.tfrecord'));
} catch (e) {
  console.log('note: python3-protobuf missing, no generated TFRecords: ' + String(e.stderr || e.message).slice(0, 200));
}
const edge = path.join(gen, 'edge.csv');
writeFileSync(edge, 'i,f,s,maybe\n1,1.5,plain,\n-9223372036854775808,-0.0,"comma, ""quoted""",x\n' +
  '9223372036854775807,3.4028235e38,ünïcødé ✓,\n0,1e-45,,y\n');
generated.push(edge);
const taxi = ['csv/tfx/chicago_taxi_data.csv', 'parquet/tfx/chicago_taxi_data.parquet', 'avro/tfx/chicago_taxi_data.avro']
  .map((f) => path.join(dataDir, f)).filter(existsSync);

for (const src of [...generated, ...taxi]) {
  const want = catRows(src);
  if (!want) { fail(src, 'shardtool cat cannot read the source'); continue; }
  // Our reader does not read LIST of LIST here: those are checked by DuckDB only.
  const own = !src.endsWith('sequences.tfrecord');
  for (const [codec, version] of combos) await check(src, want, codec, version, [], own);
  // Many row groups and pages.
  await check(src, want, 'snappy', '2', ['--row-group-size', '3KiB'], own);
}

// The corpus: everything under DATA_DIR's avro, parquet and tfrecord that
// shardtool reads, each with one codec and page version of the rotation.
function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().flatMap((f) => {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) return ['bad_data', 'encrypted', 'corrupt'].includes(f) ? [] : walk(p);
    return [p];
  });
}
const corpus = [...walk(path.join(dataDir, 'avro')).filter((f) => f.endsWith('.avro')),
  ...walk(path.join(dataDir, 'parquet')).filter((f) => f.endsWith('.parquet')),
  ...walk(path.join(dataDir, 'tfrecord')).filter((f) => !/\.(md|txt|json|idx)$/.test(f))];
let k = 0, read = 0;
for (const src of corpus) {
  if (src.includes('tfx/chicago_taxi_data')) continue;
  const want = catRows(src);
  if (!want) continue; // refused by our reader (by design or damaged): not a source
  read++;
  const [codec, version] = combos[k++ % combos.length];
  await check(src, want, codec, version, ['--row-group-size', '64KiB'], false);
}
console.log(`corpus: ${read} of ${corpus.length} files read and converted`);

// ---- round trips ---------------------------------------------------------------------------------

// Parquet (DuckDB's) -> TFRecord -> Parquet (ours): the same table, the same types.
{
  const orig = path.join(workDir, 'orig.parquet');
  await con.run(`COPY (SELECT i::BIGINT AS id,
      CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 1.25 - 7)::FLOAT END AS f,
      CASE WHEN i % 4 = 0 THEN NULL ELSE 'ü-' || i::VARCHAR END AS s,
      CASE WHEN i % 3 = 0 THEN NULL ELSE ('\\x00\\xFF' || i::VARCHAR)::BLOB END AS b,
      CASE WHEN i % 6 = 0 THEN NULL ELSE range(i % 4)::BIGINT[] END AS li,
      [(i * 0.5)::FLOAT, -i::FLOAT][1:i % 3] AS lf,
      CASE WHEN i % 7 = 0 THEN NULL ELSE ['a', 'bb', 'ccc'][1:(i % 4)] END AS ls
    FROM range(200) t(i)) TO ${lit(orig)} (FORMAT parquet)`);
  const tf = path.join(workDir, 'rt', 't'), back = path.join(workDir, 'rt', 'p');
  const a = tryst(['convert', orig, '-o', tf, '--quiet', '--no-manifest', '--force']);
  const b = a.ok && tryst(['convert', ...readdirSync(path.dirname(tf)).filter((f) => f.endsWith('.tfrecord')).map((f) => path.join(path.dirname(tf), f)),
    '-o', back, '--to', 'parquet', '--quiet', '--no-manifest', '--force']);
  if (!a.ok || !b.ok) fail('round trip Parquet -> TFRecord -> Parquet', (a.err || b.err));
  else {
    // TFRecord keeps no column order (features come in order of first
    // appearance): the columns are compared by name.
    const cols = 'id, f, s, b, li, lf, ls';
    const o = `(SELECT ${cols} FROM ${lit(orig)})`, n = `(SELECT ${cols} FROM ${lit(shardFiles(back)[0])})`;
    const types = async (t) => (await con.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${t}) ORDER BY 1`)).getRows();
    const t1 = await types(o), t2 = await types(n);
    if (JSON.stringify(t1) !== JSON.stringify(t2)) fail('round trip types', `${JSON.stringify(t1)} vs ${JSON.stringify(t2)}`);
    else pass();
    const diff = (await con.runAndReadAll(`SELECT count(*) FROM ((SELECT * FROM ${o} EXCEPT ALL SELECT * FROM ${n})
        UNION ALL (SELECT * FROM ${n} EXCEPT ALL SELECT * FROM ${o}))`)).getRows()[0][0];
    if (Number(diff) !== 0) fail('round trip values', `${diff} rows differ`);
    else pass();
  }
}

// ---- shards -----------------------------------------------------------------------------------------

if (generated.length > 1) {
  const src = generated[0];
  const want = catRows(src);
  for (const [mode, extra] of [['--shards 3', ['--shards', '3']], ['--records-per-shard 70', ['--records-per-shard', '70']],
    ['--shard-size 9KiB', ['--shard-size', '9KiB', '--row-group-size', '2KiB']]]) {
    const prefix = path.join(workDir, 'shards', `x${++runs}`);
    rmSync(path.dirname(prefix), { recursive: true, force: true });
    const r = tryst(['convert', src, '-o', prefix, '--to', 'parquet', '--quiet', ...extra]);
    if (!r.ok) { fail(mode, r.err); continue; }
    const files = shardFiles(prefix);
    if (files.length < 3) fail(mode, `${files.length} shards`);
    const all = [];
    for (const f of files) {
      try {
        const rows = await duckRows([f], f);
        all.push(...rows);
        if (mode.startsWith('--records') && rows.length > 70) fail(mode, `${f} has ${rows.length} records`);
        if (mode.startsWith('--shard-size') && statSync(f).size > 9 * 1024) fail(mode, `${f} is ${statSync(f).size} bytes`);
      } catch (e) {
        fail(mode, `DuckDB cannot read ${f}: ${e.message}`);
      }
    }
    // Shards land close under --shard-size (the row group held is written
    // out to learn its size, rather than the shard closed on a bound).
    if (mode.startsWith('--shard-size')) {
      const small = files.slice(0, -2).filter((f) => statSync(f).size < 0.4 * 9 * 1024);
      if (small.length) fail(mode, `shards far under the limit: ${small.map((f) => statSync(f).size).join(' ')}`);
    }
    sameRows(mode, all, want, false);
  }
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
