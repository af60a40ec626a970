// avsc (npm), the Avro peer of bench/convert_avro.sh.
//   node avsc.mjs write TABLE.csv OUT.avro   the bench table as deflate Avro
//   node avsc.mjs count FILE.avro            decode every record, print the count
import { createRequire } from 'module';
import fs from 'fs';
import readline from 'readline';
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + '/' : import.meta.url);
const avro = require('avsc');

const [mode, input, output] = process.argv.slice(2);

if (mode === 'count') {
  let n = 0;
  avro.createFileDecoder(input)
    .on('data', () => { n++; })
    .on('end', () => console.log(`records ${n}`));
} else if (mode === 'write') {
  const ints = ['i0', 'i1', 'i2', 'i3', 'i4', 'i5'].map((name) => ({ name, type: 'long' }));
  const floats = ['f0', 'f1', 'f2', 'f3'].map((name) => ({ name, type: 'double' }));
  const strs = ['s0', 's1', 's2'].map((name) => ({ name, type: 'string' }));
  const type = avro.Type.forSchema({ type: 'record', name: 'Row', fields: [...ints, ...floats, ...strs] });
  const encoder = avro.createFileEncoder(output, type, { codec: 'deflate' });
  const lines = readline.createInterface({ input: fs.createReadStream(input) });
  let header = true;
  for await (const line of lines) {
    if (header) { header = false; continue; }
    const c = line.split(',');
    const row = {};
    for (let i = 0; i < 6; i++) row[`i${i}`] = Number(c[i]);
    for (let i = 0; i < 4; i++) row[`f${i}`] = Number(c[6 + i]);
    for (let i = 0; i < 3; i++) row[`s${i}`] = c[10 + i];
    if (!encoder.write(row)) await new Promise((resolve) => encoder.once('drain', resolve));
  }
  encoder.end();
  await new Promise((resolve) => encoder.on('finish', resolve));
} else {
  console.error('usage: avsc.mjs write TABLE.csv OUT.avro | count FILE.avro');
  process.exit(2);
}
