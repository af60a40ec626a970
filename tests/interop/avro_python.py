#!/usr/bin/python3
"""Avro interop with the Apache Avro Python library (python3-avro).

1. Our writer -> python3-avro: avro_tool writes a synthetic data set in every
   codec (with names that need rewriting), python3-avro reads each file and
   its values must equal the records avro_tool wrote, feature by feature.
2. python3-avro writer -> our reader: python3-avro writes records with
   nullable fields, arrays, maps, enums, fixed, unions and logical types in
   every codec it has; avro_tool cat must give the features the mapping in
   formats/avro/avro_mapping.c promises.

Run with Debian's interpreter: /usr/bin/python3 avro_python.py AVRO_TOOL
"""
import base64
import datetime
import decimal
import io
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import avro.datafile
import avro.io
import avro.schema

FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def as_bytes_json(b):
    """Bytes the way our JSON lines print them."""
    try:
        return b.decode('utf-8')
    except UnicodeDecodeError:
        return {'base64': base64.b64encode(b).decode('ascii')}


def same_float(expected, actual):
    if isinstance(expected, str):
        if expected == 'NaN':
            return math.isnan(actual)
        return actual == (math.inf if expected == 'Infinity' else -math.inf)
    return f32(expected) == actual


def same_value(expected, actual):
    if isinstance(actual, bool):
        return expected == int(actual)
    if isinstance(actual, float):
        return same_float(expected, actual)
    if isinstance(actual, (bytes, bytearray)):
        return expected == as_bytes_json(bytes(actual))
    if isinstance(actual, str):
        return expected == actual
    return expected == actual


def python_codecs():
    return [c for c in ('null', 'deflate', 'snappy', 'zstandard', 'bzip2', 'xz')
            if c in avro.datafile.VALID_CODECS]


def read_with_python(path):
    with open(path, 'rb') as fh:
        reader = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
        schema = json.loads(reader.meta['avro.schema'].decode('utf-8'))
        records = list(reader)
        reader.close()
    return schema, records


def our_writer_to_python(tool, tmp):
    for codec in ('null', 'deflate', 'snappy', 'zstandard', 'bzip2', 'xz'):
        out = os.path.join(tmp, 'synth-%s.avro' % codec)
        expect = os.path.join(tmp, 'synth-%s.jsonl' % codec)
        subprocess.run([tool, 'write', codec, out, expect], check=True)
        with open(expect) as fh:
            expected = [json.loads(line) for line in fh]
        # Our own reader must give back exactly what was written.
        ours = subprocess.run([tool, 'cat', out], check=True, capture_output=True, text=True).stdout
        ours = [json.loads(line) for line in ours.splitlines()]
        check(len(ours) == len(expected), '%s: our reader read %d of %d records' % (codec, len(ours), len(expected)))
        for i, (e, o) in enumerate(zip(expected, ours)):
            if json.dumps(e, sort_keys=True) != json.dumps(o, sort_keys=True):
                check(False, '%s: record %d read back by our reader differs: %r vs %r' % (codec, i, e, o))
                break
        if codec not in python_codecs():
            print('python3-avro lacks codec %s: checked with our reader only' % codec)
            continue
        schema, records = read_with_python(out)
        with open(out, 'rb') as fh:
            head = fh.read(4096)
        check(b'avro.codec' in head and codec.encode() in head, '%s: codec not named in the header' % codec)
        fields = schema['fields']
        names = [f.get('tf_feature', f['name']) for f in fields]
        check('image/encoded' in names and 'image_encoded' in names and '1st.xy' in names,
              '%s: original feature names not kept: %r' % (codec, names))
        avro_names = [f['name'] for f in fields]
        check(avro_names[:4] == ['id', 'score', 'image_encoded', 'image_encoded_2'],
              '%s: rewritten names: %r' % (codec, avro_names))
        check(len(records) == len(expected), '%s: python read %d of %d records' % (codec, len(records), len(expected)))
        bad = 0
        for i, (exp, rec) in enumerate(zip(expected, records)):
            got = {}
            for f, feat in zip(fields, names):
                v = rec[f['name']]
                if v is None:
                    continue
                got[feat] = v if isinstance(v, list) else [v]
            if sorted(got) != sorted(exp):
                check(False, '%s: record %d has features %r, expected %r' % (codec, i, sorted(got), sorted(exp)))
                bad += 1
            else:
                for feat, values in exp.items():
                    actual = got[feat]
                    if len(values) != len(actual) or not all(same_value(e, a) for e, a in zip(values, actual)):
                        check(False, '%s: record %d feature %s: expected %r, python read %r' % (codec, i, feat, values, actual))
                        bad += 1
            if bad > 5:
                break
        print('our writer, codec %s: %d records read by python3-avro' % (codec, len(records)))


PY_SCHEMA = {
    'type': 'record', 'name': 'Row', 'namespace': 'interop',
    'fields': [
        {'name': 'id', 'type': 'long'},
        {'name': 'flag', 'type': 'boolean'},
        {'name': 'small', 'type': 'int'},
        {'name': 'ratio', 'type': 'double'},
        {'name': 'f', 'type': 'float'},
        {'name': 'name', 'type': ['null', 'string']},
        {'name': 'raw', 'type': 'bytes'},
        {'name': 'color', 'type': {'type': 'enum', 'name': 'Color', 'symbols': ['RED', 'GREEN', 'BLUE']}},
        {'name': 'md5', 'type': {'type': 'fixed', 'name': 'MD5', 'size': 4}},
        {'name': 'nums', 'type': {'type': 'array', 'items': 'long'}},
        {'name': 'attrs', 'type': {'type': 'map', 'values': 'int'}},
        {'name': 'addr', 'type': ['null', {'type': 'record', 'name': 'Addr', 'fields': [
            {'name': 'city', 'type': 'string'}, {'name': 'zip', 'type': 'int'}]}]},
        {'name': 'either', 'type': ['string', 'long']},
        {'name': 'day', 'type': {'type': 'int', 'logicalType': 'date'}},
        {'name': 'price', 'type': {'type': 'bytes', 'logicalType': 'decimal', 'precision': 12, 'scale': 2}},
    ]}


def py_row(i):
    return {
        'id': i * 1000003 - 5,
        'flag': i % 2 == 0,
        'small': -i,
        'ratio': i / 7.0,
        'f': f32(i * 0.5),
        'name': None if i % 3 == 0 else 'name %d \u00e9' % i,
        'raw': bytes([i % 256, 0, 255]),
        'color': ['RED', 'GREEN', 'BLUE'][i % 3],
        'md5': bytes([i % 256, 1, 2, 3]),
        'nums': list(range(i % 4)),
        'attrs': {'k%d' % k: k * i for k in range(i % 3)},
        'addr': None if i % 4 == 1 else {'city': 'c%d' % i, 'zip': 10000 + i},
        'either': 'text%d' % i if i % 2 else i,
        'day': datetime.date(1970, 1, 1) + datetime.timedelta(days=19000 + i),
        'price': decimal.Decimal(i * 137 - 5000).scaleb(-2),
    }


def py_expected(row, decimal_text):
    e = {'id': [row['id']], 'flag': [int(row['flag'])], 'small': [row['small']],
         'ratio': [row['ratio']], 'f': [row['f']]}
    if row['name'] is not None:
        e['name'] = [row['name']]
    e['raw'] = [as_bytes_json(row['raw'])]
    e['color'] = [row['color']]
    e['md5'] = [as_bytes_json(row['md5'])]
    e['nums'] = row['nums']
    # A map is two parallel lists (--maps key-value, the default).
    e['attrs.key'] = list(row['attrs'].keys())
    e['attrs.value'] = list(row['attrs'].values())
    if row['addr'] is not None:
        e['addr.city'] = [row['addr']['city']]
        e['addr.zip'] = [row['addr']['zip']]
    if isinstance(row['either'], str):
        e['either.string'] = [row['either']]
    else:
        e['either.long'] = [row['either']]
    e['day'] = [(row['day'] - datetime.date(1970, 1, 1)).days]
    e['price'] = [str(row['price'])] if decimal_text else [float(row['price'])]
    return e


def python_writer_to_us(tool, tmp):
    schema = avro.schema.parse(json.dumps(PY_SCHEMA))
    rows = [py_row(i) for i in range(300)]
    for codec in python_codecs():
        path = os.path.join(tmp, 'py-%s.avro' % codec)
        with open(path, 'wb') as fh:
            w = avro.datafile.DataFileWriter(fh, avro.io.DatumWriter(), schema, codec=codec)
            for i, r in enumerate(rows):
                w.append(r)
                if i % 100 == 99:
                    w.flush()  # several blocks
            w.close()
        for decimal_text in (False, True):
            args = [tool, 'cat', path] + (['--decimal-text'] if decimal_text else [])
            out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()
            check(len(out) == len(rows), 'python %s: we read %d of %d' % (codec, len(out), len(rows)))
            for i, (line, row) in enumerate(zip(out, rows)):
                got = json.loads(line)
                exp = py_expected(row, decimal_text)
                if list(got) != list(exp):
                    check(False, 'python %s record %d: features %r, expected %r' % (codec, i, list(got), list(exp)))
                    break
                for k, ev in exp.items():
                    gv = got[k]
                    if k in ('ratio', 'f') or (k == 'price' and not decimal_text):
                        ok = len(gv) == 1 and f32(ev[0]) == f32(gv[0])
                    else:
                        ok = gv == ev
                    if not ok:
                        check(False, 'python %s record %d %s: expected %r, we read %r' % (codec, i, k, ev, gv))
        v = subprocess.run([tool, 'verify', path], check=True, capture_output=True, text=True).stdout
        check(v.strip() == 'ok %d' % len(rows), 'python %s: verify says %r' % (codec, v))
        print('python3-avro writer, codec %s: %d records read by shardtool' % (codec, len(rows)))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        our_writer_to_python(tool, tmp)
        python_writer_to_us(tool, tmp)
    for f in FAILURES[:40]:
        print('FAIL:', f)
    if FAILURES:
        print('%d failures' % len(FAILURES))
        return 1
    print('all Avro interop checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
