#!/usr/bin/python3
"""Avro nested data against python3-avro, element by element.

python3-avro writes files with arrays of arrays (and of arrays of arrays),
maps of scalars, maps of arrays, maps of records, arrays of records,
records of arrays, nulls at every level and empty arrays; the arrow-testing
corpus files with nesting are read too.  Each is converted by `shardtool
convert` and read back with `shardtool cat`; python3-avro's own read of the
input, reshaped by the nested-data rules (man shardtool-convert, "Avro
nesting"), must equal it:

  depth 0 / 1   context features (a null list absent, null items skipped)
  depth 2       a FeatureList, one step per outer element (a null inner list
                is a step with no kind, which cat shows as [] or null)
  depth 3       FeatureList "col" (the innermost values of each outer
                element, concatenated) and "col.row_lengths"
  maps          "col.key" / "col.value", one list level each

Run with Debian's interpreter: /usr/bin/python3 avro_nested.py SHARDTOOL DATA_DIR
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import avro.datafile
import avro.io
import avro.schema

FAILURES = []


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


# ---- the reference: python values reshaped by the nested-data rules --------

def type_of(s):
    """The JSON type of a schema, unions of null and one type unwrapped."""
    if isinstance(s, list):
        non_null = [b for b in s if b != 'null']
        assert len(non_null) == 1, 'the test handles unions of null and one type'
        return type_of(non_null[0])[0], True
    if isinstance(s, dict) and s['type'] in ('record', 'array', 'map', 'enum', 'fixed'):
        return s, False
    if isinstance(s, dict):
        return type_of(s['type'])
    return s, False


NAMED = {}


def resolve(s):
    if isinstance(s, str) and s in NAMED:
        return NAMED[s]
    if isinstance(s, dict) and s.get('type') in ('record', 'enum', 'fixed'):
        NAMED[s['name']] = s
        if 'namespace' in s:
            NAMED[s['namespace'] + '.' + s['name']] = s
    return s


def leaves(s, name, depth, out):
    """(name, depth, kind) of every leaf below s."""
    t, _ = type_of(resolve(s))
    t = resolve(t)
    if isinstance(t, dict) and t['type'] == 'record':
        for f in t['fields']:
            leaves(f['type'], name + '.' + f['name'] if name else f['name'], depth, out)
    elif isinstance(t, dict) and t['type'] == 'array':
        leaves(t['items'], name, depth + 1, out)
    elif isinstance(t, dict) and t['type'] == 'map':
        out.append((name + '.key', depth + 1, 'bytes'))
        leaves(t['values'], name + '.value', depth + 1, out)
    else:
        kind = t['type'] if isinstance(t, dict) else t
        out.append((name, depth, {'float': 'float', 'double': 'float', 'string': 'bytes', 'bytes': 'bytes',
                                  'enum': 'bytes', 'fixed': 'bytes'}.get(kind, 'int64')))
    return out


def trees(s, v, name, out):
    """For each leaf below s: its values as nested lists, None where null."""
    t, _ = type_of(resolve(s))
    t = resolve(t)
    if v is None:
        for leaf, _, _ in leaves(t, name, 0, []):
            out[leaf] = None
        return out
    if isinstance(t, dict) and t['type'] == 'record':
        for f in t['fields']:
            trees(f['type'], v.get(f['name']), name + '.' + f['name'] if name else f['name'], out)
    elif isinstance(t, dict) and t['type'] in ('array', 'map'):
        if t['type'] == 'map':
            items = [{'key': k, 'value': x} for k, x in v.items()]
            item_schema = {'type': 'record', 'name': '_entry', 'fields': [
                {'name': 'key', 'type': 'string'}, {'name': 'value', 'type': t['values']}]}
        else:
            items, item_schema = v, t['items']
        names = [leaf for leaf, _, _ in leaves(item_schema, name, 0, [])]
        for leaf in names:
            out[leaf] = []
        for e in items:
            sub = trees(item_schema, e, name, {})
            for leaf in names:
                out[leaf].append(sub[leaf])
    else:
        out[name] = v
    return out


def value(x, kind):
    if kind == 'float':
        return f32(x)
    if kind == 'int64' and isinstance(x, bool):
        return int(x)
    if isinstance(x, bytes):
        return x.decode('latin-1')
    return x


def expected(schema, datum):
    """The record cat must print: a dict, or (context, feature_lists)."""
    info = leaves(schema, '', 0, [])
    tree = trees(schema, datum, '', {})
    ctx, lists = {}, {}
    for name, depth, kind in info:
        t = tree[name]
        if t is None:
            continue
        if depth == 0:
            ctx[name] = [value(t, kind)]
        elif depth == 1:
            ctx[name] = [value(x, kind) for x in t if x is not None]
        elif depth == 2:
            lists[name] = [None if inner is None else [value(x, kind) for x in inner if x is not None]
                           for inner in t]
        elif depth == 3:
            steps, rows = [], []
            for mid in t:
                if mid is None:
                    steps.append(None)
                    rows.append(None)
                    continue
                kept = [[value(x, kind) for x in inner if x is not None] if inner is not None else []
                        for inner in mid]
                steps.append([x for inner in kept for x in inner])
                rows.append([len(inner) for inner in kept])
            lists[name] = steps
            lists[name + '.row_lengths'] = rows
        else:
            raise AssertionError('depth %d' % depth)
    if any(d >= 2 for _, d, _ in info):
        return {'context': ctx, 'feature_lists': lists}
    return ctx


def same(exp, got, where):
    """Element by element; a step with no kind (None) shows as [] or null."""
    if exp is None:
        return got in (None, [])
    if isinstance(exp, dict):
        if not isinstance(got, dict) or set(exp) != set(got):
            FAILURES.append('%s: keys %r, expected %r' % (where, sorted(got) if isinstance(got, dict) else got,
                                                          sorted(exp)))
            return False
        return all(same(exp[k], got[k], where + '.' + k) for k in exp)
    if isinstance(exp, list):
        if not isinstance(got, list) or len(exp) != len(got):
            FAILURES.append('%s: %r, expected %r' % (where, got, exp))
            return False
        return all(same(e, g, '%s[%d]' % (where, i)) for i, (e, g) in enumerate(zip(exp, got)))
    if isinstance(exp, float):
        ok = isinstance(got, (int, float)) and f32(got) == exp
    else:
        ok = exp == got
    if not ok:
        FAILURES.append('%s: %r, expected %r' % (where, got, exp))
    return ok


def convert_and_compare(tool, path, tmp, label, extra=()):
    out = os.path.join(tmp, label)
    subprocess.run([tool, 'convert', path, '-o', out, '--quiet'] + list(extra), check=True)
    got = subprocess.run([tool, 'cat', out + '-00000-of-00001.tfrecord'], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    with open(path, 'rb') as fh:
        reader = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
        schema = json.loads(reader.meta['avro.schema'].decode())
        rows = list(reader)
    NAMED.clear()
    if len(got) != len(rows):
        FAILURES.append('%s: %d records, python3-avro reads %d' % (label, len(got), len(rows)))
    for i, (line, row) in enumerate(zip(got, rows)):
        if not same(expected(schema, row), json.loads(line), '%s record %d' % (label, i)):
            break
    print('%s: %d records match python3-avro' % (label, len(rows)))


# ---- the shapes written here -------------------------------------------------

LONGS = {'type': 'array', 'items': 'long'}
SCHEMA = {
    'type': 'record', 'name': 'Row', 'fields': [
        {'name': 'id', 'type': 'long'},
        {'name': 'aa', 'type': ['null', {'type': 'array', 'items': ['null', {'type': 'array', 'items': ['null', 'long']}]}]},
        {'name': 'aaa', 'type': ['null', {'type': 'array', 'items': ['null', {'type': 'array', 'items': ['null', {
            'type': 'array', 'items': 'string'}]}]}]},
        {'name': 'ms', 'type': ['null', {'type': 'map', 'values': ['null', 'double']}]},
        {'name': 'ma', 'type': ['null', {'type': 'map', 'values': ['null', LONGS]}]},
        {'name': 'mr', 'type': {'type': 'map', 'values': {'type': 'record', 'name': 'V', 'fields': [
            {'name': 'x', 'type': 'long'}, {'name': 'tags', 'type': {'type': 'array', 'items': 'string'}}]}}},
        {'name': 'ar', 'type': ['null', {'type': 'array', 'items': {'type': 'record', 'name': 'P', 'fields': [
            {'name': 'x', 'type': 'float'}, {'name': 'ys', 'type': ['null', LONGS]}]}}]},
        {'name': 'ra', 'type': ['null', {'type': 'record', 'name': 'RA', 'fields': [
            {'name': 'a', 'type': LONGS}, {'name': 'b', 'type': {'type': 'array', 'items': LONGS}}]}]},
    ]}


def row(i):
    null = i % 5 == 4
    return {
        'id': i,
        'aa': None if null else [[i, None, i + 1], [], None, [-i]][: i % 5],
        'aaa': None if null else [[['a%d' % i, 'b'], [], None], None, [], [['c']]][: i % 4 + 1],
        'ms': None if null else {'k%d' % k: (None if k == 1 else k * 0.5) for k in range(i % 4)},
        'ma': None if null else {'k%d' % k: (None if k == 2 else list(range(k))) for k in range(i % 4)},
        'mr': {'r%d' % k: {'x': k, 'tags': ['t'] * k} for k in range(i % 3)},
        'ar': None if null else [{'x': k * 0.25, 'ys': None if k == 1 else [k, i]} for k in range(i % 4)],
        'ra': None if null else {'a': list(range(i % 3)), 'b': [[i], [], [1, 2]][: i % 4]},
    }


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tool, data = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'nested.avro')
        schema = avro.schema.parse(json.dumps(SCHEMA))
        with open(path, 'wb') as fh:
            w = avro.datafile.DataFileWriter(fh, avro.io.DatumWriter(), schema, codec='deflate')
            for i in range(40):
                w.append(row(i))
                if i % 15 == 14:
                    w.flush()  # several blocks
            w.close()
        convert_and_compare(tool, path, tmp, 'python3-avro nested')
        for name in ('nested_lists.snappy', 'nonnullable.impala', 'nullable.impala', 'nested_records'):
            convert_and_compare(tool, os.path.join(data, 'avro', 'arrow-testing', name + '.avro'), tmp, name)
    for f in FAILURES[:40]:
        print('FAIL:', f)
    if FAILURES:
        print('%d failures' % len(FAILURES))
        return 1
    print('all Avro nesting checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
