// Interop test for the Parquet reader: DuckDB (an independent reader and
// writer) and ours must agree on every value of every row.
//
//   node tests/interop/parquet_duckdb.js PARQUET_DUMP DATA_DIR WORK_DIR
//
// 1. Every good Parquet file of the corpus (DATA_DIR/parquet) is read by both;
//    columns we refuse by design are left out of both with --exclude, and so
//    are maps and lists of lists (parquet_nested.py compares those), and the
//    files we must refuse are checked to be refused.
// 2. DuckDB writes files with every codec it has, data pages v1 and v2,
//    small row groups, nulls, lists, structs, decimals, dates, timestamps,
//    UUIDs and blobs; both read them back.  Each is also read with row groups
//    split into several units and with parallel decoding, which must not
//    change a byte of the output.
//
// DuckDB's values are turned into the Example mapping (rows.c) in SQL and
// here: integers exact, floats compared as float32, bytes in hex, temporal
// values in nanoseconds, decimals as exact text (and as float32 in a second
// run without --decimal-text).  Exits 77 (skipped) when DuckDB is not
// installed: `npm ci --prefix tests/interop`.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadDuckDB } from './duckdb_module.mjs';

const duckdb = await loadDuckDB();
const { DuckDBInstance, DuckDBTypeId: T } = duckdb;

const [dump, dataDir, workDir] = process.argv.slice(2);
if (!dump || !dataDir || !workDir) {
  console.error('usage: parquet_duckdb.js PARQUET_DUMP DATA_DIR WORK_DIR');
  process.exit(2);
}
mkdirSync(workDir, { recursive: true });

const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();

let passed = 0, failed = 0;
function pass() { passed++; }
function fail(what, msg) {
  failed++;
  console.log(`FAIL ${what}: ${msg}`);
}

// ---- running ours -----------------------------------------------------------------

function runOurs(args) {
  try {
    const out = execFileSync(dump, args, { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, out };
  } catch (e) {
    return { ok: false, status: e.status, err: String(e.stderr || e.message) };
  }
}

function oursRows(file, extra) {
  const r = runOurs(['--canonical', ...extra, file]);
  if (!r.ok) return r;
  const rows = r.out.split('\n').filter((l) => l.length).map((l) => JSON.parse(l));
  return { ok: true, rows, text: r.out };
}

// ---- DuckDB's side ----------------------------------------------------------------------

const q = (s) => '"' + s.replace(/"/g, '""') + '"';
const lit = (s) => "'" + s.replace(/'/g, "''") + "'";

// How a leaf is compared: 'exact' (integers, dates, booleans: decimal text),
// 'float', 'decimal' (exact text, float32 without --decimal-text), 'bigdecimal'
// (DuckDB reads DECIMAL wider than 38 digits as DOUBLE), 'time' (nanoseconds),
// 'bytes' (hex).
let depth = 0;
function expr(e, t, name, kinds) {
  switch (t.typeId) {
    case T.BOOLEAN: kinds[name] = 'exact'; return `CAST(${e} AS INTEGER)::VARCHAR`;
    case T.TINYINT: case T.SMALLINT: case T.INTEGER: case T.BIGINT:
    case T.UTINYINT: case T.USMALLINT: case T.UINTEGER: case T.UBIGINT: case T.HUGEINT:
      kinds[name] = 'exact'; return `${e}::VARCHAR`;
    case T.SQLNULL: kinds[name] = 'exact'; return `${e}::VARCHAR`;
    case T.FLOAT: case T.DOUBLE:
      kinds[name] = t.typeId === T.DOUBLE && kinds.__bigdecimal?.has(name) ? 'bigdecimal' : 'float';
      return `${e}::DOUBLE`;
    case T.DECIMAL: kinds[name] = 'decimal'; return `${e}::VARCHAR`;
    case T.VARCHAR: case T.BLOB: kinds[name] = 'bytes'; return `hex(${e})`;
    case T.UUID: case T.ENUM: kinds[name] = 'bytes'; return `hex(${e}::VARCHAR)`;
    case T.DATE: kinds[name] = 'exact'; return `(${e} - DATE '1970-01-01')::VARCHAR`;
    case T.TIMESTAMP: case T.TIMESTAMP_MS: case T.TIMESTAMP_NS: case T.TIMESTAMP_S: case T.TIMESTAMP_TZ:
      kinds[name] = 'time'; return `epoch_ns(${e})::VARCHAR`;
    case T.TIME: kinds[name] = 'time'; return `(epoch_us(${e}) * 1000)::VARCHAR`;
    case T.TIME_TZ: kinds[name] = 'time'; return `(epoch_us(${e}::TIME) * 1000)::VARCHAR`;
    case T.LIST: {
      const v = `x${depth++}`;
      return `list_transform(${e}, ${v} -> ${expr(v, t.valueType, name, kinds)})`;
    }
    case T.STRUCT: {
      const parts = t.entryNames.map((n, i) =>
        `${q(n)} := ${expr(`struct_extract(${e}, ${lit(n)})`, t.entryTypes[i], `${name}.${n}`, kinds)}`);
      return `struct_pack(${parts.join(', ')})`;
    }
    default:
      throw new Error(`no comparison for DuckDB type ${t.toString()} (${name})`);
  }
}

function leaves(t, name) {
  if (t.typeId === T.STRUCT) return t.entryNames.flatMap((n, i) => leaves(t.entryTypes[i], `${name}.${n}`));
  return [name];
}

// Collects values inside a list: null elements (and null struct members) are skipped.
function collect(v, t, name, out) {
  if (v === null || v === undefined) return;
  if (t.typeId === T.STRUCT) {
    t.entryNames.forEach((n, i) => collect(v[n], t.entryTypes[i], `${name}.${n}`, out));
  } else if (t.typeId === T.LIST) {
    throw new Error(`list of lists in ${name}`);
  } else {
    out[name].push(v);
  }
}

function flatten(v, t, name, out) {
  if (v === null || v === undefined) return;  // null: absent
  if (t.typeId === T.STRUCT) {
    t.entryNames.forEach((n, i) => flatten(v[n], t.entryTypes[i], `${name}.${n}`, out));
  } else if (t.typeId === T.LIST) {
    for (const l of leaves(t.valueType, name)) out[l] = [];
    for (const e of v) collect(e, t.valueType, name, out);
  } else {
    out[name] = [v];
  }
}

async function duckRows(file, skipTop, bigdecimal) {
  const d = await con.runAndReadAll(`SELECT * FROM read_parquet(${lit(file)}) LIMIT 0`);
  const names = d.columnNames(), types = d.columnTypes();
  const kinds = { __bigdecimal: bigdecimal };
  const cols = [];
  names.forEach((n, i) => {
    if (skipTop.has(n)) return;
    cols.push({ name: n, type: types[i], sql: `${expr(q(n), types[i], n, kinds)} AS ${q(n)}` });
  });
  delete kinds.__bigdecimal;
  const r = await con.runAndReadAll(`SELECT ${cols.map((c) => c.sql).join(', ')} FROM read_parquet(${lit(file)})`);
  const rows = r.getRowObjectsJson().map((row) => {
    const out = {};
    for (const c of cols) flatten(row[c.name], c.type, c.name, out);
    return out;
  });
  return { rows, kinds };
}

// ---- comparing -----------------------------------------------------------------------------

const f32 = (x) => Math.fround(Number(x));
// Decimal text is bytes, which the canonical form prints in hex.
const fromHex = (h) => Buffer.from(String(h), 'hex').toString('latin1');

function unitFactor(leaf) {
  if (!leaf) return 1n;
  if (leaf.physical === 'INT96') return 1n;
  const lt = String(leaf.logical || '');
  if (lt.includes('NANOS')) return 1n;
  if (lt.includes('MICROS')) return 1000n;
  if (lt.includes('MILLIS')) return 1000000n;
  return 1000n;
}

function sameValue(kind, ours, theirs, leaf, decimalText) {
  switch (kind) {
    case 'exact':
      return String(ours) === String(theirs);
    case 'float': {
      const a = f32(ours), b = f32(theirs);
      return (Number.isNaN(a) && Number.isNaN(b)) || a === b;
    }
    case 'decimal':
      return decimalText ? fromHex(ours) === String(theirs) : f32(ours) === f32(theirs);
    case 'bigdecimal': {
      const a = Number(decimalText ? fromHex(ours) : ours), b = Number(theirs);
      return Math.abs(a - b) <= Math.abs(b) * 1e-6;
    }
    case 'time': {
      // DuckDB holds microseconds for INT96 and TIME(NANOS): ours may be finer.
      const diff = BigInt(ours) * unitFactor(leaf) - BigInt(theirs);
      return diff >= 0n && diff < 1000n;
    }
    case 'bytes':
      return String(ours).toLowerCase() === String(theirs).toLowerCase();
    default:
      return false;
  }
}

function compareRows(what, ours, theirs, kinds, schema, decimalText, onlyKinds) {
  if (ours.length !== theirs.length) {
    fail(what, `we read ${ours.length} rows, DuckDB ${theirs.length}`);
    return;
  }
  let bad = 0;
  for (let i = 0; i < ours.length && bad < 5; i++) {
    const a = ours[i], b = theirs[i];
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      if (onlyKinds && !onlyKinds.includes(kinds[k])) continue;
      if (!(k in a) || !(k in b)) {
        fail(what, `row ${i}: '${k}' is ${k in a ? 'present' : 'absent'} in ours, ${k in b ? 'present' : 'absent'} in DuckDB's`);
        bad++;
        continue;
      }
      const va = a[k], vb = b[k];
      const ok = va.length === vb.length && va.every((x, j) => sameValue(kinds[k], x, vb[j], schema.get(k), decimalText));
      if (!ok) {
        fail(what, `row ${i}: '${k}' ours ${JSON.stringify(va)} DuckDB ${JSON.stringify(vb)} (${kinds[k]})`);
        bad++;
      }
    }
  }
  if (!bad) pass();
}

async function compareFile(file, label) {
  const ins = runOurs(['--inspect', file]);
  if (!ins.ok) {
    fail(label, `inspect failed: ${ins.err}`);
    return;
  }
  const meta = JSON.parse(ins.out);
  const skipTop = new Set();
  const schema = new Map();
  const bigdecimal = new Set();
  for (const leaf of meta.schema) {
    schema.set(leaf.name, leaf);
    if (leaf.unreadable) skipTop.add(leaf.path.split('.')[0]);
    // Lists of lists and maps: compared by tests/interop/parquet_nested.py.
    if (leaf.depth >= 2 || leaf.maps > 0) skipTop.add(leaf.path.split('.')[0]);
    const m = /^DECIMAL\((\d+),/.exec(leaf.logical || '');
    if (m && Number(m[1]) > 38) bigdecimal.add(leaf.name);
  }
  if (meta.schema.some((l) => l.logical === 'INTERVAL')) {
    for (const l of meta.schema) if (l.logical === 'INTERVAL') skipTop.add(l.path.split('.')[0]);
  }
  const exclude = skipTop.size ? ['--exclude', [...skipTop].join(',')] : [];
  if (skipTop.size && skipTop.size === new Set(meta.schema.map((l) => l.path.split('.')[0])).size) {
    pass();  // nothing left to compare
    return;
  }
  let theirs;
  const base = path.basename(file);
  try {
    theirs = await duckRows(duckCannot[base] ? path.join(path.dirname(file), duckCannot[base].same || base) : file,
                            skipTop, bigdecimal);
  } catch (e) {
    if (!duckCannot[base]) {
      fail(label, `DuckDB: ${e.message}`);
      return;
    }
    console.log(`SKIP ${label}: DuckDB cannot read it (${duckCannot[base].why}); the unit tests check it`);
    return runOurs(['--canonical', ...exclude, file]);
  }
  const exact = oursRows(file, ['--decimal-text', ...exclude]);
  if (!exact.ok) {
    fail(label, `we refused it: ${exact.err.trim()}`);
    return;
  }
  compareRows(label, exact.rows, theirs.rows, theirs.kinds, schema, true);
  if (Object.values(theirs.kinds).includes('decimal')) {
    const asFloat = oursRows(file, exclude);
    if (!asFloat.ok) fail(`${label} (decimals as float)`, asFloat.err.trim());
    else compareRows(`${label} (decimals as float)`, asFloat.rows, theirs.rows, theirs.kinds, schema, false, ['decimal']);
  }
  return exact;
}

// Files DuckDB cannot read: compared with a file holding the same values
// (`same`), or left to the unit tests.
const duckCannot = {
  'hadoop_lz4_compressed.parquet': { why: 'legacy LZ4 codec', same: 'lz4_raw_compressed.parquet' },
  'non_hadoop_lz4_compressed.parquet': { why: 'legacy LZ4 codec', same: 'lz4_raw_compressed.parquet' },
  'hadoop_lz4_compressed_larger.parquet': { why: 'legacy LZ4 codec', same: 'lz4_raw_compressed_larger.parquet' },
  'byte_stream_split_extended.gzip.parquet': { why: 'BYTE_STREAM_SPLIT of integers and FLBA' },
  'ARROW-17100.parquet': { why: 'v2 pages flagged uncompressed but compressed' },
  'nested_structs.rust.parquet': { why: 'timestamp conversion error' },
  'map_no_value.parquet': { why: 'MAP without values' },
};

// ---- 1. the corpus ----------------------------------------------------------------------------

// Files we must refuse, and a phrase of the reason.
const mustRefuse = {
  'int96_from_spark.parquet': 'INT96 timestamp',
  'uint64_above_int64_max.parquet': 'UINT64 value',
  'row_group_num_rows_zero.parquet': 'the row group says 0 rows',
  'datapage_v1-corrupt-checksum.parquet': 'CRC',
  'rle-dict-uncompressed-corrupt-checksum.parquet': 'CRC',
  'nation.dict-malformed.parquet': 'page',
};
const notHere = /^(bad_data|encrypted|arrow-testing\/fuzzing|duckdb\/broken)\//;

function walk(dir, base = '') {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n), rel = base ? `${base}/${n}` : n;
    return statSync(p).isDirectory() ? walk(p, rel) : [rel];
  });
}

const corpus = path.join(dataDir, 'parquet');
for (const rel of walk(corpus).sort()) {
  if (!rel.endsWith('.parquet') || notHere.test(rel)) continue;
  // 2 GiB of strings behind a 4 KiB file: the unit test checks that it is refused.
  if (rel === 'large_string_map.brotli.parquet') continue;
  const file = path.join(corpus, rel);
  if (mustRefuse[rel]) {
    const r = runOurs(['--canonical', file]);
    if (r.ok) fail(rel, 'we read a file we must refuse');
    else if (!r.err.includes(mustRefuse[rel])) fail(rel, `refused for another reason: ${r.err.trim()}`);
    else pass();
    continue;
  }
  await compareFile(file, rel);
}

// ---- 2. files DuckDB writes --------------------------------------------------------------------

await con.run(`CREATE TABLE gen AS SELECT
    i::INTEGER AS i32,
    (i * 1000003 - 2500000000)::BIGINT AS i64,
    (i % 200)::UTINYINT AS u8,
    CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.5 - 100 END::DOUBLE AS d,
    (i / 3.0)::FLOAT AS f,
    CASE WHEN i % 5 = 0 THEN NULL ELSE 'str-' || (i % 13) || repeat('x', i % 17) END AS s,
    'unique-' || i AS su,
    i % 3 = 0 AS b,
    DATE '1960-01-01' + (i * 3)::INTEGER AS dt,
    TIMESTAMP '2020-01-01 00:00:00' + to_microseconds(i * 1234567) AS ts,
    (TIMESTAMP '2020-01-01' + to_microseconds(i * 1000))::TIMESTAMP_MS AS tsms,
    (i * 1.25 - 3000)::DECIMAL(9,2) AS dec9,
    (i * 12345.678 - 1e6)::DECIMAL(18,3) AS dec18,
    (i::HUGEINT * 1000000000000000000 - 7)::DECIMAL(38,4) AS dec38,
    CASE WHEN i % 11 = 0 THEN NULL WHEN i % 3 = 0 THEN [] ELSE [i, NULL, i + 1] END AS li,
    ['a' || i, NULL, 'b'] AS ls,
    CASE WHEN i % 13 = 0 THEN NULL ELSE {'x': i, 'y': CASE WHEN i % 2 = 0 THEN NULL ELSE 'y' || i END} END AS st,
    [{'p': i, 'q': i * 2.5}, {'p': NULL, 'q': 1.0}] AS lst,
    md5(i::VARCHAR)::UUID AS id,
    ('\\x00\\xFF'::BLOB || i::VARCHAR::BLOB) AS bl
  FROM range(5000) r(i)`);

const codecs = ['uncompressed', 'snappy', 'gzip', 'zstd', 'lz4', 'brotli'];
for (const version of ['V1', 'V2']) {
  for (const codec of codecs) {
    const name = `duckdb_${codec}_${version}.parquet`;
    const file = path.join(workDir, name);
    await con.run(`COPY gen TO ${lit(file)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE 1000, PARQUET_VERSION ${version})`);
    const exact = await compareFile(file, name);
    if (!exact || !exact.ok) continue;
    // The same rows when row groups are cut into units, and when decoded in parallel.
    for (const extra of [['--unit-rows', '333'], ['--unit-rows', '64', '--jobs', '4']]) {
      const other = oursRows(file, ['--decimal-text', ...extra]);
      if (!other.ok) fail(`${name} ${extra.join(' ')}`, other.err.trim());
      else if (other.text !== exact.text) fail(`${name} ${extra.join(' ')}`, 'output differs from one unit per row group');
      else pass();
    }
  }
}

// One large row group, split into units by row ranges (pages skipped unread).
{
  const file = path.join(workDir, 'duckdb_one_row_group.parquet');
  await con.run(`COPY (SELECT * FROM gen, range(4) k(j)) TO ${lit(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 100000)`);
  const whole = await compareFile(file, 'duckdb_one_row_group.parquet');
  if (whole && whole.ok) {
    const split = oursRows(file, ['--decimal-text', '--unit-rows', '1500', '--jobs', '3']);
    if (!split.ok || split.text !== whole.text) fail('duckdb_one_row_group.parquet split', split.ok ? 'output differs' : split.err);
    else pass();
  }
}

// One row group whose every column chunk is one page (as DuckDB writes
// lists of lists): units start inside the pages, at checkpoints shared by
// the row group's units (formats/parquet/checkpoint.h), and must give the
// rows of one unit per row group, lists of lists included (their values are
// compared with DuckDB's by parquet_nested.py).  Dictionary and PLAIN
// values, nulls at every level, v1 and v2 pages.
{
  const table = `SELECT i AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE i * 3 END AS n,
      CASE WHEN i % 5 = 0 THEN NULL ELSE 'c' || (i % 13) END AS s, 'u' || i AS su, i % 3 = 0 AS b,
      CASE WHEN i % 6 = 0 THEN NULL ELSE (i % 97) / 4.0 END::DOUBLE AS d,
      CASE WHEN i % 11 = 0 THEN NULL ELSE [CASE WHEN o % 4 = 3 THEN NULL ELSE
        [CASE WHEN (i + k) % 9 = 0 THEN NULL ELSE (i * o + k) % 1000 END FOR k IN range((i + o) % 6)] END
        FOR o IN range(i % 9)] END AS lol,
      [[i * 100003 + o * 17 + k FOR k IN range((i + o) % 5)] FOR o IN range(i % 4)] AS lolu,
      CASE WHEN i % 4 = 0 THEN NULL ELSE ['v' || ((i + k) % 50) FOR k IN range(i % 7)] END AS ls,
      ['w' || (i * 7 + k) FOR k IN range(i % 3)] AS lsu,
      repeat(chr((97 + i % 26)::INTEGER), (i % 300)::INTEGER) || i AS lt
    FROM range(12000) t(i)`;
  /* Snappy pages and pages stored as they are are both decompressed in
   * pieces by the units (page_marks.h): snappy pages under 8 MiB by
   * default as segments shared by the units (shared_segments.h), each unit
   * copying out the bytes it reads; --mark-always 0 has every unit
   * decompress its own segments instead.  --sparse-map-min 0 maps every
   * marked page (either way), so a unit reading a byte it did not copy or
   * decompress faults.  Row groups this small keep their snappy pages
   * whole for their units unless --whole-max 0. */
  for (const [version, codec] of [['V1', 'snappy'], ['V2', 'snappy'], ['V1', 'uncompressed']]) {
    const name = `duckdb_one_page_${version}_${codec}.parquet`;
    const file = path.join(workDir, name);
    await con.run(`COPY (${table}) TO ${lit(file)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE 100000, PARQUET_VERSION ${version})`);
    await compareFile(file, name);  /* DuckDB's values, lists of lists left out */
    const whole = oursRows(file, []);
    if (!whole.ok) {
      fail(name, whole.err.trim());
      continue;
    }
    if (!whole.text.includes('"lol[]"')) fail(name, 'no FeatureList in the output');
    /* --share-max 0: the parts read their own pages, sharing only the
     * scan's marks, small kept pages and number dictionaries. */
    for (const extra of [['--unit-rows', '37', '--jobs', '3'], ['--unit-rows', '1000'], ['--unit-rows', '5000', '--jobs', '2'],
                         ['--unit-rows', '37', '--jobs', '3', '--share-max', '0'], ['--unit-rows', '1000', '--share-max', '0'],
                         ['--unit-rows', '37', '--jobs', '3', '--whole-max', '0'],
                         ['--unit-rows', '37', '--jobs', '2', '--sparse-map-min', '0', '--mark-always', '0', '--whole-max', '0'],
                         ['--unit-rows', '777', '--share-max', '0', '--sparse-map-min', '0', '--mark-always', '0', '--whole-max', '0'],
                         ['--unit-rows', '1000', '--jobs', '2', '--mark-always', '0', '--whole-max', '0'],
                         ['--unit-rows', '37', '--jobs', '3', '--sparse-map-min', '0', '--whole-max', '0'],
                         ['--unit-rows', '777', '--jobs', '2', '--share-max', '0', '--sparse-map-min', '0', '--whole-max', '0']]) {
      const split = oursRows(file, extra);
      if (!split.ok) fail(`${name} ${extra.join(' ')}`, split.err.trim());
      else if (split.text !== whole.text) fail(`${name} ${extra.join(' ')}`, 'output differs from one unit per row group');
      else pass();
    }
  }
}

// Dictionaries shared by a row group's units (formats/parquet/shared_dict.h):
// string dictionaries held by each unit's batch, number dictionaries kept as
// the doubles alone when narrowing changes some of them.  Cut into many
// units read on several threads, the rows, the per-column notes of values
// changed by narrowing (counts, whole numbers, the first one) and the
// --strict-float error must be those of one unit per row group.
{
  const name = 'duckdb_shared_dicts.parquet';
  const file = path.join(workDir, name);
  await con.run(`COPY (SELECT i AS id, 'k' || (i % 500) AS s1,
      CASE WHEN i % 9 = 0 THEN NULL ELSE 'name-' || (i * 7 % 1300) END AS s2,
      repeat('x', (i % 40)::INTEGER) || (i % 97) AS s3,
      ((i % 997) / 7.0)::DOUBLE AS d1, ((i % 613) / 4.0)::DOUBLE AS d2,
      CASE WHEN i % 5 = 0 THEN NULL ELSE (16777217 + (i % 301) * 2)::DOUBLE END AS d3,
      ((i % 211) * 0.1)::DOUBLE AS d4
    FROM range(20000) t(i)) TO ${lit(file)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE 100000)`);
  const inspect = JSON.parse(runOurs(['--inspect', file]).out || '{}');
  const cols = inspect.row_groups ? inspect.row_groups[0].columns : [];
  for (const c of ['s1', 's2', 's3', 'd1', 'd2', 'd3', 'd4']) {
    const col = cols.find((x) => x.path === c);
    if (!col || !col.encodings.some((e) => e.endsWith('_DICTIONARY'))) fail(`${name} ${c}`, 'not dictionary-encoded: the test tests nothing');
  }
  await compareFile(file, name);  /* DuckDB's values */
  /* the rows printed before an error depend on the threads' timing: only the error is compared */
  const run = (extra) => {
    const r = spawnSync(dump, ['--canonical', '--lossy', ...extra, file], { encoding: 'utf8', maxBuffer: 1 << 30 });
    return `status ${r.status}\n${r.stderr}\n${r.status === 0 ? r.stdout : ''}`;
  };
  const whole = run([]);
  if (!whole.startsWith('status 0') || !whole.includes('lossy d1:') || !whole.includes('lossy d3:') ||
      whole.includes('lossy d2:') || whole.includes('lossy d4:'))
    fail(name, `unexpected notes: ${whole.slice(0, 400)}`);
  const strict = run(['--strict-float']);
  if (!strict.includes("column 'd1'")) fail(`${name} --strict-float`, strict.slice(0, 400));
  for (const extra of [['--unit-rows', '37', '--jobs', '3'], ['--unit-rows', '500', '--jobs', '2'], ['--unit-rows', '4999'],
                       ['--unit-rows', '37', '--jobs', '3', '--share-max', '0'], ['--unit-rows', '1', '--jobs', '2'],
                       ['--unit-rows', '37'], ['--unit-rows', '37', '--share-max', '0']]) {
    if (run(extra) !== whole) fail(`${name} ${extra.join(' ')}`, 'rows or notes differ from one unit per row group');
    else pass();
    /* with several threads the failing unit reported is the first to fail, not the first in order */
    if (extra.includes('--jobs')) continue;
    if (run(['--strict-float', ...extra]) !== strict) fail(`${name} --strict-float ${extra.join(' ')}`, 'error differs');
    else pass();
  }
}

console.log(`parquet interop: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
