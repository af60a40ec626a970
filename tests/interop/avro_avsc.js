// Avro interop with avsc (the JavaScript Avro implementation): avsc reads
// what our writer wrote, in the codecs it can decode (null, deflate, and
// snappy through the small decoder below, which also checks the CRC-32),
// and its values must equal the records avro_tool wrote.  64-bit longs are
// read as BigInt so that INT64_MIN / MAX survive.
//
//   node avro_avsc.js AVRO_TOOL TMPDIR
//
// Exits 77 (skipped) when avsc is not installed (npm ci --prefix tests/interop).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

let avro;
try {
  avro = (await import('avsc')).default;
} catch (e) {
  console.log('avsc is not installed: npm ci --prefix tests/interop');
  process.exit(77);
}

const [tool, tmpArg] = process.argv.slice(2);
const tmp = fs.mkdtempSync(path.join(tmpArg || '/tmp', 'avsc-'));
const failures = [];
const check = (cond, msg) => { if (!cond) failures.push(msg); };

const LongType = avro.types.LongType.__with({
  fromBuffer: (buf) => buf.readBigInt64LE(),
  toBuffer: (n) => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(n)); return b; },
  fromJSON: BigInt,
  toJSON: Number,
  isValid: (n) => typeof n === 'bigint',
  compare: (a, b) => (a === b ? 0 : a < b ? -1 : 1),
});

// Raw snappy (the block format Avro uses) and CRC-32, written here so that
// the check does not reuse the library our writer uses.
const CRC_TABLE = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32(buf) {
  let c = -1;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
function unsnappy(buf) {
  let pos = 0, len = 0, shift = 0;
  for (;;) {
    const b = buf[pos++];
    len |= (b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7;
  }
  const out = Buffer.alloc(len);
  let o = 0;
  while (pos < buf.length) {
    const tag = buf[pos++];
    if ((tag & 3) === 0) {
      let n = tag >> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = buf.readUIntLE(pos, bytes);
        pos += bytes;
      }
      buf.copy(out, o, pos, pos + n + 1);
      pos += n + 1;
      o += n + 1;
      continue;
    }
    let n, off;
    if ((tag & 3) === 1) {
      n = 4 + ((tag >> 2) & 7);
      off = ((tag >> 5) << 8) | buf[pos++];
    } else if ((tag & 3) === 2) {
      n = 1 + (tag >> 2);
      off = buf.readUInt16LE(pos);
      pos += 2;
    } else {
      n = 1 + (tag >> 2);
      off = buf.readUInt32LE(pos);
      pos += 4;
    }
    for (let k = 0; k < n; k++, o++) out[o] = out[o - off];
  }
  if (o !== len) throw new Error('snappy: length mismatch');
  return out;
}
const codecs = {
  null: (buf, cb) => cb(null, buf),
  deflate: zlib.inflateRaw,
  snappy: (buf, cb) => {
    try {
      const data = unsnappy(buf.subarray(0, buf.length - 4));
      if (crc32(data) !== buf.readUInt32BE(buf.length - 4)) throw new Error('snappy block CRC mismatch');
      cb(null, data);
    } catch (e) {
      cb(e);
    }
  },
};

function readAvsc(file) {
  return new Promise((resolve, reject) => {
    const rows = [];
    let schema;
    avro.createFileDecoder(file, {
      codecs,
      parseHook: (s) => { schema = s; return avro.Type.forSchema(s, { registry: { long: LongType } }); },
    })
      .on('data', (r) => rows.push(r))
      .on('error', reject)
      .on('end', () => resolve({ schema, rows }));
  });
}

// Expected records: our JSON lines; integers of 16+ digits are quoted first
// so that JSON.parse keeps them exact.
function parseExpected(line) {
  return JSON.parse(line.replace(/(?<=[\[,])(-?\d{16,})(?=[\],])/g, '"$1"'));
}

function sameValue(e, a) {
  if (typeof a === 'bigint') return BigInt(e) === a;
  if (typeof a === 'number') {
    if (e === 'NaN') return Number.isNaN(a);
    if (e === 'Infinity') return a === Infinity;
    if (e === '-Infinity') return a === -Infinity;
    return Math.fround(e) === a;
  }
  if (typeof a === 'boolean') return BigInt(e) === BigInt(a ? 1 : 0);
  if (Buffer.isBuffer(a)) {
    const text = new TextDecoder('utf-8', { fatal: false }).decode(a);
    if (Buffer.from(text, 'utf-8').equals(a)) return e === text;
    return typeof e === 'object' && e.base64 === a.toString('base64');
  }
  return e === a;
}

for (const codec of ['null', 'deflate', 'snappy']) {
  const out = path.join(tmp, `synth-${codec}.avro`);
  const expectPath = path.join(tmp, `synth-${codec}.jsonl`);
  execFileSync(tool, ['write', codec, out, expectPath]);
  const expected = fs.readFileSync(expectPath, 'utf-8').trim().split('\n').map(parseExpected);
  let result;
  try {
    result = await readAvsc(out);
  } catch (e) {
    check(false, `${codec}: avsc could not read our file: ${e.message}`);
    continue;
  }
  const fields = result.schema.fields;
  const names = fields.map((f) => f.tf_feature || f.name);
  check(result.rows.length === expected.length, `${codec}: avsc read ${result.rows.length} of ${expected.length}`);
  let bad = 0;
  result.rows.forEach((row, i) => {
    if (bad > 5) return;
    const got = {};
    fields.forEach((f, k) => {
      const v = row[f.name];
      if (v === null || v === undefined) return;
      got[names[k]] = Array.isArray(v) ? v : [v];
    });
    const exp = expected[i];
    const gk = Object.keys(got).sort().join(','), ek = Object.keys(exp).sort().join(',');
    if (gk !== ek) {
      check(false, `${codec}: record ${i} features ${gk}, expected ${ek}`);
      bad++;
      return;
    }
    for (const [k, ev] of Object.entries(exp)) {
      const av = got[k];
      if (av.length !== ev.length || !ev.every((e, j) => sameValue(e, av[j]))) {
        check(false, `${codec}: record ${i} ${k}: expected ${JSON.stringify(ev)}, avsc read ${av}`);
        bad++;
      }
    }
  });
  console.log(`our writer, codec ${codec}: ${result.rows.length} records read by avsc`);
}

fs.rmSync(tmp, { recursive: true, force: true });
for (const f of failures.slice(0, 40)) console.log('FAIL:', f);
if (failures.length) {
  console.log(`${failures.length} failures`);
  process.exit(1);
}
console.log('all avsc interop checks passed');
