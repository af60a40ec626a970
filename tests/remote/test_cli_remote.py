#!/usr/bin/python3
"""Remote inputs and outputs through the real shardtool binary.

Servers, all on 127.0.0.1 and started here: nginx (http://), s3rver behind
the SigV4-checking proxy (s3://, reached through AWS_ENDPOINT_URL or
--endpoint), the small GCS JSON-API server (gs://, through
STORAGE_EMULATOR_HOST), and the fault proxy for a failing upload.

  1. every command (cat as JSON and as TFRecord, stat --json, verify --json,
     convert, split) gives over http, s3 and gs what it gives for the local
     file, for a TFRecord, a gzip TFRecord, a CSV, a Parquet and an Avro
     file; a prefix or a glob gives its objects in name order;
  2. `cat --columns` of a Parquet object downloads the footer and the chosen
     column chunks, not the file (bytes counted by the proxy, chunk sizes
     taken from `stat --json` of the local file);
  3. `convert -o s3://...` uploads the shards, then the manifest;
     `verify --manifest s3://...` passes; the objects equal a local
     conversion byte for byte; an existing output needs --force (exit 2,
     objects untouched); a run whose upload fails half-way leaves no shard
     under its final name (the multipart upload is aborted);
  4. a wrong secret fails with a message naming the URL and the credentials,
     and the secret is never printed, even with -v;
  5. verify --device auto and --json on remote TFRecords.

usage: test_cli_remote.py SHARDTOOL SOURCE_ROOT
exit 77 when nginx or s3rver cannot be started."""

import copy
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rtest  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from thrift_compact import field as _field, read as _tc_read, varint as _varint, write as _tc_write, zigzag as _zigzag  # noqa: E402,E501
import servers  # noqa: E402
import test_s3  # noqa: E402  (s3rver: install and start)

KEY, SECRET = test_s3.KEY, test_s3.SECRET
GCS_TOKEN = "ya29.cliTOKENvalue"
BUCKET = "test"
MIB = 1 << 20

# (label, path under tests/data): the remote copy keeps the same path, so
# that detection by name sees the same name.
INPUTS = [
    ("tfrecord", "tfrecord/tfx/mnist/mnist.tfrecord"),
    ("tfrecord-gzip", "tfrecord/tfx/penguin/Split-eval/data_tfrecord-00000-of-00001.gz"),
    ("csv", "csv/tfx/chicago_taxi_data.csv"),
    ("parquet", "parquet/tfx/chicago_taxi_data.parquet"),
    ("avro", "avro/tfx/chicago_taxi_data.avro"),
]
PARQUET = "parquet/tfx/chicago_taxi_data.parquet"
TFRECORD_INPUTS = ("tfrecord", "tfrecord-gzip")


class Tool:
    """Runs shardtool; returns (status, stdout bytes, stderr text)."""

    def __init__(self, exe, env):
        self.exe = exe
        self.env = env

    def run(self, args, env=None, timeout=300, cwd=None):
        p = subprocess.run([self.exe] + list(args), capture_output=True, env=env or self.env,
                           timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def ok(self, args, env=None, timeout=300):
        rc, out, err = self.run(args, env, timeout)
        if rc != 0:
            raise rtest.Failure("shardtool %s: exit %d: %s" % (" ".join(args), rc, err.strip()[-2000:]))
        return out, err


def fail(fmt, *a):
    raise rtest.Failure(fmt % a if a else fmt)


def first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def json_without(doc, file_keys=(), top_keys=()):
    """A stat/verify document without what depends on where the input is
    or on timing: keys of each "files" entry and top-level keys."""
    doc = json.loads(doc)
    for k in top_keys:
        doc.pop(k, None)
    for f in doc.get("files", []):
        for k in file_keys + top_keys:
            f.pop(k, None)
    return doc


def files_of(directory):
    out = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            out[name] = f.read()
    return out


def manifest_without_inputs(data):
    m = json.loads(data)
    m.get("options", {}).pop("inputs", None)
    m.get("options", {}).pop("input_files", None)
    return m


def manifest_text_without_etags(data):
    """The manifest's bytes without the ETags that only S3 output records."""
    return re.sub(rb',\s*"etag":\s*"(\\.|[^"\\])*"', b"", data)


def manifest_text_without_inputs(data):
    """The manifest's bytes with the lists of inputs emptied (and no ETags)."""
    data = manifest_text_without_etags(data)
    data = re.sub(rb'"input_files":\[[^\]]*\]', b'"input_files":[]', data)
    return re.sub(rb'"inputs":\[[^\]]*\]', b'"inputs":[]', data)


def brief(log, n=8):
    """The first requests of a proxy log, for a message."""
    items = [(m, r, size) for m, p, r, s, size in log]
    return "%s%s" % (items[:n], " and %d more" % (len(items) - n) if len(items) > n else "")


def avro_sync(data):
    """The 16-byte sync marker of an Avro object container file."""
    if data[:4] != b"Obj\x01":
        fail("not an Avro file")
    pos = 4

    def long_at(p):
        v, p = _varint(data, p)
        return _zigzag(v), p
    while True:
        count, pos = long_at(pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = long_at(pos)
        for _ in range(2 * count):
            n, pos = long_at(pos)
            pos += n
    return data[pos:pos + 16]


def same_outputs(ref_dir, got_dir, what, must_exist=True):
    """Shards byte-identical, manifests equal except options.inputs.  Avro
    files carry a random sync marker: compared with it masked, and their
    manifests without the CRCs of the whole files."""
    ref, got = files_of(ref_dir), files_of(got_dir)
    if sorted(ref) != sorted(got):
        fail("%s: files %s, the local run wrote %s", what, sorted(got), sorted(ref))
    if not ref and must_exist:
        fail("%s: no output at all", what)
    avro = any(n.endswith(".avro") for n in ref)
    for name in ref:
        if name.endswith(".avro"):
            ref[name] = ref[name].replace(avro_sync(ref[name]), b"\0" * 16)
            got[name] = got[name].replace(avro_sync(got[name]), b"\0" * 16)
    for name in ref:
        if name.endswith(".manifest.json") and not avro:
            a, b = manifest_text_without_inputs(ref[name]), manifest_text_without_inputs(got[name])
            if a != b:
                fail("%s: manifest %s differs:\n%s\nlocal:\n%s", what, name, b[:1500], a[:1500])
        elif name.endswith(".manifest.json"):
            a, b = manifest_without_inputs(ref[name]), manifest_without_inputs(got[name])
            for m in (a, b):
                for shard in m.get("shards", []):
                    shard.pop("crc32c", None)
            if a != b:
                fail("%s: manifest %s differs:\n%s\nlocal:\n%s", what, name, json.dumps(b)[:1500],
                     json.dumps(a)[:1500])
        elif ref[name] != got[name]:
            fail("%s: %s differs from the local run (%d vs %d bytes, first difference at %d)", what, name,
                 len(got[name]), len(ref[name]), first_difference(got[name], ref[name]))


# ---- a Parquet file with many row groups --------------------------------------
#
# The test file has one row group of 187 KB; reading two of its columns over
# the network would hardly differ from reading all of it.  This builds a
# larger file from it, with the same row group repeated: the thrift-compact
# footer is decoded generically and written back with every offset moved.

def repeat_row_groups(data, copies):
    """The Parquet file `data` (one row group) with its row group stored
    `copies` times; returns the new file."""
    if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        fail("not a Parquet file")
    flen = struct.unpack("<I", data[-8:-4])[0]
    footer_at = len(data) - 8 - flen
    meta, end = _tc_read(data, footer_at, 12)
    if end != len(data) - 8:
        fail("footer decode stopped at %d, not %d", end, len(data) - 8)
    # check the generic codec first: the footer must come back unchanged
    again = bytearray()
    _tc_write(again, 12, meta)
    if bytes(again) != data[footer_at:len(data) - 8]:
        fail("thrift-compact round trip of the footer differs")
    region = data[4:footer_at]
    et, groups = _field(meta, 4)[2]
    if len(groups) != 1:
        fail("expected one row group, found %d", len(groups))
    rows = _field(meta, 3)[2]
    chunk_offsets = {2, 4, 6}          # ColumnChunk: file_offset, offset index, column index
    meta_offsets = {9, 10, 11, 14}     # ColumnMetaData: data, index, dictionary page; bloom filter
    new_groups = []
    for i in range(copies):
        shift = i * len(region)
        g = copy.deepcopy(groups[0])
        for f in g:
            if f[0] == 5:    # RowGroup.file_offset
                f[2] += shift
            elif f[0] == 7:  # RowGroup.ordinal
                f[2] = i
            elif f[0] == 1:  # RowGroup.columns
                for cc in f[2][1]:
                    for cf in cc:
                        if cf[0] in chunk_offsets:
                            cf[2] += shift
                        elif cf[0] == 3:
                            for mf in cf[2]:
                                if mf[0] in meta_offsets:
                                    mf[2] += shift
        new_groups.append(g)
    _field(meta, 4)[2] = (et, new_groups)
    _field(meta, 3)[2] = rows * copies
    footer = bytearray()
    _tc_write(footer, 12, meta)
    return b"PAR1" + region * copies + bytes(footer) + struct.pack("<I", len(footer)) + b"PAR1"


def column_chunk_bytes(tool, path, columns):
    """Per selected column, the compressed bytes of its chunks over all row
    groups, and the footer length, as `stat --json` of the local file says."""
    out, _ = tool.ok(["stat", "--json", path])
    details = json.loads(out)["files"][0]["details"]
    total = 0
    for rg in details["row_groups"]:
        for c in rg["columns"]:
            if c["path"] in columns:
                total += c["compressed_bytes"]
    with open(path, "rb") as f:
        f.seek(-8, 2)
        footer = struct.unpack("<I", f.read(4))[0]
    return total, footer, len(details["row_groups"])


# ---- main -------------------------------------------------------------------

started_homes = []


def clean_env(extra):
    """rtest.clean_env, with its HOME removed at the end."""
    env = rtest.clean_env(extra)
    started_homes.append(env["HOME"])
    return env


def main():
    exe, root = sys.argv[1], sys.argv[2]
    data_dir = os.path.join(root, "tests", "data")
    if not rtest.nginx_binary():
        print("nginx is not installed")
        return rtest.SKIP
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        print("s3rver is not installed and cannot be (npm ci in tests/remote)")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-remote-cli-")
    www = os.path.join(tmp, "www")
    started = []
    try:
        try:
            os.makedirs(www)
            ngx = rtest.Nginx(www, os.path.join(tmp, "nginx"))
            started.append(ngx)
            srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
            started.append(srv)
        except rtest.Failure as e:
            print("cannot start nginx or s3rver: %s" % e)
            return rtest.SKIP
        proxy = servers.SigV4Proxy(srv.port, {KEY: SECRET})
        started.append(proxy)
        gcs = servers.GcsServer(token=GCS_TOKEN, page_size=2)
        started.append(gcs)
        return run_cases(exe, data_dir, tmp, www, ngx, srv, proxy, gcs, started)
    finally:
        for home in started_homes:
            shutil.rmtree(home, ignore_errors=True)
        for s in reversed(started):
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def parquet_projections(res, tool, data_dir, tmp, projection, s3_put):
    """Parquet --columns over S3 fetches the footer and the chunks, for the
    tfx file and for one with 24 row groups."""
    with open(os.path.join(data_dir, PARQUET), "rb") as f:
        taxi = f.read()
    res.check("2 parquet cat --columns over s3 fetches the footer and the chunks (tfx file)",
              lambda: projection("in/" + PARQUET, os.path.join(data_dir, PARQUET), "tfx file", 1.0))
    big_path = os.path.join(tmp, "taxi-x24.parquet")

    def big_projection():
        big = repeat_row_groups(taxi, 24)
        with open(big_path, "wb") as f:
            f.write(big)
        s3_put("big/taxi-x24.parquet", big)
        rows = tool.ok(["stat", "--json", big_path])[0]
        if json.loads(rows)["files"][0]["records"] != 240000:
            fail("the repeated-row-group file does not read back as 240000 records")
        projection("big/taxi-x24.parquet", big_path, "24 row groups", 0.25)
    res.check("2 parquet cat --columns over s3 fetches the footer and the chunks (24 row groups)",
              big_projection)
    res.check("2 parquet convert --columns over s3 fetches the footer and the chunks (24 row groups)",
              lambda: projection("big/taxi-x24.parquet", big_path, "convert, 24 row groups", 0.25,
                                 command="convert"))


def run_cases(exe, data_dir, tmp, www, ngx, srv, proxy, gcs, started):
    res = rtest.Results("cli-remote")
    endpoint = "http://127.0.0.1:%d" % proxy.port
    env = clean_env({"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
                           "AWS_ENDPOINT_URL": endpoint,
                           "STORAGE_EMULATOR_HOST": "127.0.0.1:%d" % gcs.port,
                           "GOOGLE_OAUTH_ACCESS_TOKEN": GCS_TOKEN})
    tool = Tool(exe, env)
    # Formats this build lacks (meson -Dparquet=disabled ...) are left out.
    version = tool.ok(["--version"])[0].decode()
    built = set(re.search(r"^formats:(.*)$", version, re.M).group(1).split())
    inputs = [(label, rel) for label, rel in INPUTS if label.split("-")[0] in built]
    for label, _ in INPUTS:
        if label.split("-")[0] not in built:
            print("skip %s: not in this build" % label)

    def s3_put(key, body):
        st, answer = srv.request("PUT", "/%s/%s" % (BUCKET, key), body=body)
        if st != 200:
            fail("cannot store s3://%s/%s: %d %s", BUCKET, key, st, answer[:200])

    def s3_get(key):
        return srv.request("GET", "/%s/%s" % (BUCKET, key))

    def publish(key, body):
        """One object under the same key on all three servers."""
        path = os.path.join(www, key)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(body)
        s3_put(key, body)
        gcs.store(BUCKET, key, body)

    st, answer = srv.request("PUT", "/" + BUCKET)
    if st != 200:
        fail("cannot create the bucket: %d %s", st, answer)
    for _, rel in inputs:
        with open(os.path.join(data_dir, rel), "rb") as f:
            publish("in/" + rel, f.read())

    schemes = {
        "http": lambda key: "http://127.0.0.1:%d/%s" % (ngx.port, key),
        "s3": lambda key: "s3://%s/%s" % (BUCKET, key),
        "gs": lambda key: "gs://%s/%s" % (BUCKET, key),
    }

    # ---- 1. the same output as the local file, for every command ----
    commands = [
        ("cat", lambda x, o: ["cat", x], "stdout"),
        ("cat -f tfrecord", lambda x, o: ["cat", "--format", "tfrecord", x], "stdout"),
        ("stat --json", lambda x, o: ["stat", "--json", x], "stat"),
        ("verify --json", lambda x, o: ["verify", "--json", x], "verify"),
        ("convert", lambda x, o: ["convert", x, "-o", o + "/part", "--shards", "2"], "outputs"),
        ("split", lambda x, o: ["split", x, "-o", o + "/part", "--shards", "2"], "outputs"),
    ]
    reference = {}
    for label, rel in inputs:
        local = os.path.join(data_dir, rel)
        for cname, make, kind in commands:
            out_dir = os.path.join(tmp, "ref", label, cname.replace(" ", "_"))
            os.makedirs(out_dir)
            rc, out, err = tool.run(make(local, out_dir))
            reference[(label, cname)] = (rc, out, err.replace(local, "<INPUT>").replace(out_dir, "<OUT>"),
                                         out_dir)

    def compare(scheme, label, rel, cname, make, kind):
        url = schemes[scheme]("in/" + rel)
        out_dir = os.path.join(tmp, scheme, label, cname.replace(" ", "_"))
        os.makedirs(out_dir)
        rc, out, err = tool.run(make(url, out_dir))
        err = err.replace(url, "<INPUT>").replace(out_dir, "<OUT>")
        ref_rc, ref_out, ref_err, ref_dir = reference[(label, cname)]
        what = "%s %s" % (cname, url)
        if rc != ref_rc:
            fail("%s: exit %d, the local file gives %d\nremote: %s\nlocal: %s", what, rc, ref_rc,
                 err.strip()[-1500:], ref_err.strip()[-1500:])
        if rc != 0 and err != ref_err:
            fail("%s: messages differ\nremote: %s\nlocal: %s", what, err.strip()[-1500:],
                 ref_err.strip()[-1500:])
        if kind == "stdout":
            if out != ref_out:
                fail("%s: %d bytes out, the local file gives %d (first difference at %d)", what, len(out),
                     len(ref_out), first_difference(out, ref_out))
        elif kind == "stat":
            a, b = json_without(out, ("path",)), json_without(ref_out, ("path",))
            if a != b:
                fail("%s: differs:\n%s\nlocal:\n%s", what, json.dumps(a)[:1500], json.dumps(b)[:1500])
        elif kind == "verify":
            drop = ("seconds", "bytes_per_second")
            a = json_without(out, ("path",), drop)
            b = json_without(ref_out, ("path",), drop)
            if a != b:
                fail("%s: differs:\n%s\nlocal:\n%s", what, json.dumps(a)[:1500], json.dumps(b)[:1500])
        elif kind == "outputs":
            if out != ref_out:
                fail("%s: stdout differs", what)
            same_outputs(ref_dir, out_dir, what, must_exist=(rc == 0))

    for scheme in schemes:
        for label, rel in inputs:
            for cname, make, kind in commands:
                res.check("1 %s %s %s" % (scheme, label, cname),
                          lambda s=scheme, lb=label, r=rel, c=cname, m=make, k=kind: compare(s, lb, r, c, m, k))

    # prefix and glob: objects in name order, "*" not crossing "/"
    pieces_dir = os.path.join(tmp, "pieces")
    tool.ok(["convert", os.path.join(data_dir, INPUTS[0][1]), "-o", pieces_dir + "/p", "--shards", "4",
             "--no-manifest", "-q"])
    pieces = [os.path.join(pieces_dir, n) for n in sorted(os.listdir(pieces_dir))]
    # uploaded in an order that is not the name order; "b-10" sorts before "b-2"
    layout = [("multi/sub/z.tfrecord", pieces[0]), ("multi/b-2.tfrecord", pieces[1]),
              ("multi/b-10.tfrecord", pieces[2]), ("multi/a.tfrecord", pieces[3])]
    for key, path in layout:
        with open(path, "rb") as f:
            body = f.read()
        s3_put(key, body)
        gcs.store(BUCKET, key, body)
    s3_put("multi/notes.txt", b"not a TFRecord\n")
    gcs.store(BUCKET, "multi/notes.txt", b"not a TFRecord\n")

    def pattern(scheme, pat, keys):
        url = schemes[scheme](pat)
        want_urls = [schemes[scheme](k) for k in keys]
        local = [dict(layout)[k] for k in keys]
        want, _ = tool.ok(["cat"] + local)
        got, _ = tool.ok(["cat", url])
        if got != want:
            fail("cat %s: %d bytes, the objects %s in name order give %d", url, len(got), keys, len(want))
        out, _ = tool.ok(["verify", "--json", url])
        paths = [f["path"] for f in json.loads(out)["files"]]
        if paths != want_urls:
            fail("verify %s saw %s, expected %s", url, paths, want_urls)
        out, _ = tool.ok(["stat", "--json", url])
        paths = [f["path"] for f in json.loads(out)["files"]]
        if paths != want_urls:
            fail("stat %s saw %s, expected %s", url, paths, want_urls)

    glob_keys = ["multi/a.tfrecord", "multi/b-10.tfrecord", "multi/b-2.tfrecord"]
    for scheme in ("s3", "gs"):
        res.check("1 %s glob multi/*.tfrecord in name order" % scheme,
                  lambda s=scheme: pattern(s, "multi/*.tfrecord", glob_keys))
    # a prefix takes everything under it: only TFRecords there
    for key, path in layout:
        with open(path, "rb") as f:
            body = f.read()
        s3_put("pre" + key[5:], body)
        gcs.store(BUCKET, "pre" + key[5:], body)
    layout += [("pre" + k[5:], p) for k, p in layout]
    prefix_keys = ["pre/a.tfrecord", "pre/b-10.tfrecord", "pre/b-2.tfrecord", "pre/sub/z.tfrecord"]
    for scheme in ("s3", "gs"):
        res.check("1 %s prefix pre/ in name order" % scheme,
                  lambda s=scheme: pattern(s, "pre/", prefix_keys))

    # ---- 2. Parquet column projection downloads little ----
    def projection(key, local, copies_note, much_smaller, command="cat"):
        cols = ["fare", "tips"]
        chunks, footer, groups = column_chunk_bytes(tool, local, cols)
        size = os.path.getsize(local)
        chunk = 64 << 10
        url = "s3://%s/%s" % (BUCKET, key)
        opts = ["--columns", ",".join(cols)]
        if command == "cat":
            want, _ = tool.ok(["cat"] + opts + [local])
        else:
            out_dir = tempfile.mkdtemp(prefix="proj-", dir=tmp)
            tool.ok(["convert"] + opts + [local, "-o", out_dir + "/local/p", "-q"])
        n0 = len(proxy.traffic)
        b0 = proxy.bytes_out
        if command == "cat":
            got, _ = tool.ok(["cat"] + opts + ["--chunk-size", "64KiB", "--endpoint", endpoint, url])
        else:
            tool.ok(["convert"] + opts + ["--chunk-size", "64KiB", "--endpoint", endpoint, url,
                                          "-o", out_dir + "/remote/p", "-q"])
        fetched = proxy.bytes_out - b0
        log = proxy.traffic[n0:]
        if command == "cat" and got != want:
            fail("cat --columns over s3 differs from the local file")
        if command == "convert":
            same_outputs(out_dir + "/local", out_dir + "/remote", "convert --columns " + url)
        # the magic at both ends, the footer, the chunks; the first ranged
        # GET an open makes (one --chunk-size) and the footer block (64 KiB)
        bound = 4 + 8 + footer + chunks + chunk + (64 << 10)
        print("     %s: %d row group(s), file %d bytes, footer %d, fare+tips chunks %d; "
              "downloaded %d bytes in %d requests (bound %d)" % (copies_note, groups, size, footer, chunks,
                                                                fetched, len(log), bound), flush=True)
        if fetched > bound:
            fail("downloaded %d bytes of a %d-byte file; footer + chunks + first range + footer block "
                 "is %d: %s", fetched, size, bound, brief(log))
        # one 187 KB row group is little more than the two 64 KiB blocks
        # above; with 24 of them the file must be mostly left alone
        if fetched >= size * much_smaller:
            fail("downloaded %d bytes of a %d-byte file (%.0f%% or more)", fetched, size, much_smaller * 100)

    if "parquet" in built:
        parquet_projections(res, tool, data_dir, tmp, projection, s3_put)


    def convert_reads_once():
        # convert into TFRecord needs no schema pass: one read of the input
        rel = INPUTS[0][1]
        size = os.path.getsize(os.path.join(data_dir, rel))
        b0 = proxy.bytes_out
        n0 = len(proxy.traffic)
        tool.ok(["convert", "s3://%s/in/%s" % (BUCKET, rel), "-o", os.path.join(tmp, "once", "p"), "-q",
                 "--endpoint", endpoint])
        fetched = proxy.bytes_out - b0
        if fetched > size:
            fail("downloaded %d bytes for a %d-byte input: %s", fetched, size, brief(proxy.traffic[n0:]))
    res.check("2 convert downloads a remote TFRecord input once", convert_reads_once)

    # ---- 3. convert to s3 ----
    mnist = os.path.join(data_dir, INPUTS[0][1])
    ref3 = os.path.join(tmp, "ref3")
    tool.ok(["convert", mnist, "-o", ref3 + "/train", "--shards", "3", "-q"])
    ref3_files = files_of(ref3)
    out_keys = ["out/" + n for n in sorted(ref3_files)]

    def s3_objects(keys):
        got = {}
        for k in keys:
            st, body = s3_get(k)
            got[k] = body if st == 200 else None
        return got

    def convert_up():
        n0 = len(proxy.traffic)
        tool.ok(["convert", mnist, "-o", "s3://%s/out/train" % BUCKET, "--shards", "3", "--endpoint", endpoint,
                 "-q"])
        puts = [p.split("?")[0] for m, p, r, s, n in proxy.traffic[n0:] if m in ("PUT", "POST")]
        shards = ["/%s/%s" % (BUCKET, k) for k in out_keys if not k.endswith(".json")]
        manifest = "/%s/out/train.manifest.json" % BUCKET
        puts = [p for p in puts if not p.endswith("/out/train.lock")]  # the run's lock object, removed at its end
        if sorted(set(puts)) != sorted(shards + [manifest]):
            fail("uploads %s, expected %s", puts, shards + [manifest])
        if puts[-1] != manifest or any(p == manifest for p in puts[:-1]):
            fail("the manifest is not the last upload: %s", puts)
        got = s3_objects(out_keys)
        for k in out_keys:
            name = k[4:]
            if got[k] is None:
                fail("%s was not uploaded", k)
            if name.endswith(".manifest.json"):
                a, b = manifest_text_without_inputs(got[k]), manifest_text_without_inputs(ref3_files[name])
                if a != b:
                    fail("manifest differs from the local one:\n%s\n%s", a, b)
                inputs = json.loads(got[k])["options"]["inputs"]
                if inputs != [mnist]:
                    fail("manifest inputs %s", inputs)
            elif got[k] != ref3_files[name]:
                fail("%s differs from the local conversion", k)
    res.check("3 convert -o s3:// uploads shards, then the manifest; bytes equal a local run", convert_up)

    def convert_parquet_up():
        # Parquet shards are written once, front to back (column chunks,
        # then the footer): they upload like any other shard.
        ref = os.path.join(tmp, "refpq")
        tool.ok(["convert", mnist, "-o", ref + "/train", "--to", "parquet", "--shards", "2", "-q"])
        local = files_of(ref)
        tool.ok(["convert", mnist, "-o", "s3://%s/pq/train" % BUCKET, "--to", "parquet", "--shards", "2",
                 "--endpoint", endpoint, "-q"])
        names = [n for n in sorted(local) if n.endswith(".parquet")]
        if len(names) != 2:
            fail("local run wrote %s", sorted(local))
        got = s3_objects(["pq/" + n for n in names])
        for n in names:
            if got["pq/" + n] != local[n]:
                fail("%s differs from the local conversion", n)
    res.check("3 convert --to parquet -o s3:// uploads complete files equal to a local run", convert_parquet_up)

    def verify_manifest():
        out, err = tool.ok(["verify", "--manifest", "s3://%s/out/train.manifest.json" % BUCKET,
                            "--endpoint", endpoint])
        text = out.decode()
        for k in out_keys:
            if not k.endswith(".json") and "s3://%s/%s: OK" % (BUCKET, k) not in text:
                fail("verify --manifest did not check %s:\n%s", k, text)
        out, _ = tool.ok(["verify", "--json", "--manifest", "s3://%s/out/train.manifest.json" % BUCKET,
                          "--endpoint", endpoint])
        doc = json.loads(out)
        if not doc["ok"] or doc["total"]["records"] != 1000 or doc["total"]["files"] != 3:
            fail("verify --json --manifest: %s", json.dumps(doc)[:1000])
    res.check("3 verify --manifest s3://... passes", verify_manifest)

    def hostile_remote_manifest():
        # A remote manifest may name objects of its own bucket, never another
        # bucket, another kind of URL or a local file: those are refused
        # without a request (exit 1, each entry named).
        shard = "s3://%s/out/train-00000-of-00003.tfrecord" % BUCKET
        entries = [shard, "s3://other-bucket/x", "https://127.0.0.1:1/x", "/etc/passwd",
                   "../elsewhere/x", "s3://%s/out/%%2e%%2e/x" % BUCKET]
        s3_put("evil/m.manifest.json", json.dumps({"shards": [{"path": e} for e in entries]}).encode())
        n0 = len(proxy.traffic)
        rc, out, err = tool.run(["verify", "--manifest", "s3://%s/evil/m.manifest.json" % BUCKET,
                                 "--endpoint", endpoint])
        text = out.decode()
        if rc != 1 or "%s: OK" % shard not in text or text.count("DAMAGED: unsafe path") != 5:
            fail("verify --manifest of a hostile remote manifest: exit %d:\n%s%s", rc, text, err)
        if any("other-bucket" in str(t) for t in proxy.traffic[n0:]):
            fail("a request was sent for a refused entry")
    res.check("3 verify --manifest s3://... refuses entries outside its bucket", hostile_remote_manifest)

    def no_force():
        before = s3_objects(out_keys)
        n0 = len(proxy.traffic)
        rc, out, err = tool.run(["convert", mnist, "-o", "s3://%s/out/train" % BUCKET, "--shards", "3",
                                 "--endpoint", endpoint])
        if rc != 2:
            fail("a second run without --force: exit %d (2 expected): %s", rc, err)
        if "exists" not in err or "--force" not in err or "s3://%s/out/train-0000" % BUCKET not in err:
            fail("message does not name the object and --force: %s", err)
        ups = [(m, p) for m, p, r, s, n in proxy.traffic[n0:] if m in ("PUT", "POST", "DELETE")]
        if ups:
            fail("a refused run still sent %s", ups)
        if s3_objects(out_keys) != before:
            fail("the objects changed")
        # and with --force it is replaced, identically
        tool.ok(["convert", mnist, "-o", "s3://%s/out/train" % BUCKET, "--shards", "3", "--endpoint", endpoint,
                 "--force", "-q"])
        if s3_objects(out_keys) != before:
            fail("--force wrote different objects")
    res.check("3 an existing output needs --force (exit 2, objects unchanged)", no_force)

    def failed_upload():
        # one shard of 9.6 MB: a multipart upload of two 5 MiB parts
        big_in = os.path.join(tmp, "mnist-x3.tfrecord")
        with open(mnist, "rb") as f:
            m = f.read()
        with open(big_in, "wb") as f:
            f.write(m * 3)

        def later_parts(method, path):
            q = re.search(r"partNumber=(\d+)", path)
            return "500" if method == "PUT" and q and q.group(1) != "1" else None
        fp = servers.FaultProxy(proxy.port, ["ok"], fail_when=later_parts)
        started.append(fp)
        rc, out, err = tool.run(["convert", big_in, "-o", "s3://%s/fail/train" % BUCKET, "--shards", "1",
                                 "--retries", "0", "--endpoint", "http://127.0.0.1:%d" % fp.port])
        if rc != 1:
            fail("exit %d (1 expected): %s", rc, err)
        if "500" not in err or "s3://%s/fail/train-00000-of-00001.tfrecord" % BUCKET not in err:
            fail("the message does not name the object and the HTTP status: %s", err)
        log = fp.log
        if not any(f == "500" for _, _, f in log):
            fail("no part upload was refused: %s", log)
        if not any(m == "DELETE" and "uploadId=" in p for m, p, _ in log):
            fail("the multipart upload was not aborted: %s", [(m, p) for m, p, _ in log])
        for key in ("fail/train-00000-of-00001.tfrecord", "fail/train.manifest.json"):
            st, _ = srv.request("HEAD", "/%s/%s" % (BUCKET, key))
            if st != 404:
                fail("s3://%s/%s exists after a failed run (HEAD %d)", BUCKET, key, st)
        st, body = srv.request("GET", "/" + BUCKET, "list-type=2&prefix=fail/")
        if b"<Key>" in body:
            fail("objects under fail/: %s", body[:500])
    res.check("3 an upload failing half-way leaves no shard (multipart aborted)", failed_upload)

    def resume_remote():
        # --task --resume with s3 output: the task manifest in the bucket says
        # which shards the earlier run finished, with the ETag each upload
        # was answered with; an object of that size and ETag (one HEAD, no
        # data read) is kept and never uploaded again.
        cmd = ["convert", mnist, "-o", "s3://%s/rs/train" % BUCKET, "--shards", "2", "--task", "1/2",
               "--endpoint", endpoint, "-q"]
        tool.ok(cmd)
        shards = ["rs/train-00002-of-00004.tfrecord", "rs/train-00003-of-00004.tfrecord"]
        first = s3_objects(shards)
        if any(v is None for v in first.values()):
            fail("the task did not upload %s", shards)
        st, mtext = s3_get("rs/train-task00001-of-00002.manifest.json")
        etags = [e.get("etag") for e in json.loads(mtext)["shards"]] if st == 200 else []
        if len(etags) != 2 or not all(etags):
            fail("the task manifest does not list the shards' ETags: %s", mtext[:800])

        def rerun(what, expect_puts, read_back=False):
            n0 = len(proxy.traffic)
            rc, _, err = tool.run(cmd[:-1] + ["--resume", "--verbose"])
            if rc != 0:
                fail("%s: --resume: exit %d: %s", what, rc, err)
            ups = sorted(set(p.split("?")[0] for m, p, r, s, n in proxy.traffic[n0:]
                             if m in ("PUT", "POST", "DELETE")))
            shard_ups = [p for p in ups if not p.endswith(".manifest.json") and not p.endswith(".lock")]
            if shard_ups != ["/%s/%s" % (BUCKET, k) for k in expect_puts]:
                fail("%s: --resume uploaded %s, expected only %s: %s", what, ups, expect_puts, err[-1500:])
            reads = [p for m, p, r, s, n in proxy.traffic[n0:] if m == "GET" and "/rs/train-0000" in p]
            if bool(reads) != read_back:
                fail("%s: --resume read shards back: %s (expected %s)", what, reads, read_back)
            if s3_objects(shards) != first:
                fail("%s: the shards differ from the first run's", what)
        srv.request("DELETE", "/%s/%s" % (BUCKET, shards[1]))
        rerun("a deleted shard", [shards[1]])
        s3_put(shards[0], first[shards[0]][:-5])
        rerun("a truncated shard", [shards[0]])
        body = bytearray(first[shards[1]])
        body[100] ^= 1
        s3_put(shards[1], bytes(body))
        rerun("a shard of the same size, other bytes", [shards[1]])
        rerun("a finished task", [])
        # A manifest without ETags (an earlier version's): the objects are
        # read back and checked by size and CRC32C instead.
        st, mtext = s3_get("rs/train-task00001-of-00002.manifest.json")
        s3_put("rs/train-task00001-of-00002.manifest.json", manifest_text_without_etags(mtext))
        s3_put(shards[0], first[shards[0]][:100] +
               bytes([first[shards[0]][100] ^ 1]) + first[shards[0]][101:])
        rerun("a damaged shard, manifest without ETags", [shards[0]], read_back=True)

        # A multipart upload (one 9.6 MB shard, 5 MiB parts): the ETag
        # CompleteMultipartUpload answers is the one a HEAD gives later.
        big_in = os.path.join(tmp, "mnist-x3.tfrecord")
        big = ["convert", big_in, "-o", "s3://%s/rsbig/train" % BUCKET, "--shards", "1", "--endpoint", endpoint]
        tool.ok(big + ["-q"])
        n0 = len(proxy.traffic)
        rc, _, err = tool.run(big + ["--resume"])
        ups = [(m, p) for m, p, r, s, n in proxy.traffic[n0:] if m in ("PUT", "POST", "DELETE")
               and not p.split("?")[0].endswith("/rsbig/train.lock")]  # the run's lock, made and removed
        if rc != 0 or ups or "finished before" not in err:
            fail("--resume after a multipart upload: exit %d, sent %s: %s", rc, ups, err)
    res.check("3 convert --task --resume -o s3:// uploads only the missing or damaged shards", resume_remote)

    # ---- 4. a wrong secret ----
    def wrong_secret():
        bad = "wrongSECRETvalue9876"
        env2 = dict(env, AWS_SECRET_ACCESS_KEY=bad)
        url = "s3://%s/in/%s" % (BUCKET, INPUTS[0][1])
        for args in (["cat", url], ["cat", "-v", url], ["verify", "-v", url], ["stat", "--json", "-v", url]):
            rc, out, err = tool.run(args, env=env2)
            if rc not in (1, 2):
                fail("%s: exit %d with a wrong secret", " ".join(args), rc)
            if rc != 2 and args[0] != "verify":
                fail("%s: exit %d, 2 (input cannot be read) expected", " ".join(args), rc)
            if url not in err:
                fail("%s: the message does not name %s: %s", " ".join(args), url, err)
            if "SignatureDoesNotMatch" not in err or "credentials" not in err:
                fail("%s: the message does not say what to check: %s", " ".join(args), err)
            if bad.encode() in out or bad in err:
                fail("%s printed the secret", " ".join(args))
        # uploads: the existence check and the upload itself are refused
        rc, out, err = tool.run(["convert", mnist, "-o", "s3://%s/denied/train" % BUCKET, "-v"], env=env2)
        if rc not in (1, 2) or "s3://%s/denied/train" % BUCKET not in err or "credentials" not in err:
            fail("convert with a wrong secret: exit %d: %s", rc, err)
        if bad in err or bad.encode() in out:
            fail("convert -v printed the secret")
        st, _ = srv.request("HEAD", "/%s/denied/train-00000-of-00001.tfrecord" % BUCKET)
        if st != 404:
            fail("an object was written with a wrong secret")
        # and GCS: a wrong token
        env3 = dict(env, GOOGLE_OAUTH_ACCESS_TOKEN="ya29.WRONGtokenVALUE")
        gurl = "gs://%s/in/%s" % (BUCKET, INPUTS[0][1])
        rc, out, err = tool.run(["cat", "-v", gurl], env=env3)
        if rc not in (1, 2) or gurl not in err or "401" not in err:
            fail("gs with a wrong token: exit %d: %s", rc, err)
        if "WRONGtokenVALUE" in err or b"WRONGtokenVALUE" in out:
            fail("the token was printed")
        # the right secret never shows either, even in -v traces
        rc, out, err = tool.run(["cat", "-v", url])
        if rc != 0 or "shardtool cat: GET " + url not in err:
            fail("cat -v: exit %d, no request trace: %s", rc, err[-500:])
        if "Signature=" in err or "Credential=" in err or "Authorization" in err:
            fail("cat -v shows credentials: %s", err[-500:])
    res.check("4 a wrong secret fails naming the URL and the credentials; no secret printed", wrong_secret)

    def wrong_secret_manifest():
        bad = "wrongSECRETvalue9876"
        env2 = dict(env, AWS_SECRET_ACCESS_KEY=bad)
        url = "s3://%s/out/train.manifest.json" % BUCKET
        rc, out, err = tool.run(["verify", "-v", "--manifest", url], env=env2)
        if rc != 2 or url not in err:
            fail("verify --manifest with a wrong secret: exit %d: %s", rc, err)
        if bad in err or bad.encode() in out:
            fail("the secret was printed")
        if "SignatureDoesNotMatch" not in err or "credentials" not in err:
            fail("verify --manifest %s with a wrong secret does not say what to check: %s", url, err.strip())
    res.check("4 verify --manifest s3:// with a wrong secret names the credentials", wrong_secret_manifest)

    # ---- 5. verify --device auto / --json on remote TFRecords ----
    def verify_device():
        for label, rel in inputs:
            if label not in TFRECORD_INPUTS:
                continue
            local = os.path.join(data_dir, rel)
            want = json_without(tool.ok(["verify", "--device", "auto", "--json", local])[0], ("path",),
                                ("seconds", "bytes_per_second"))
            for scheme in schemes:
                url = schemes[scheme]("in/" + rel)
                out, _ = tool.ok(["verify", "--device", "auto", "--json", url])
                doc = json.loads(out)
                if not doc["ok"] or doc["files"][0]["path"] != url:
                    fail("verify --device auto --json %s: %s", url, out[:800])
                got = json_without(out, ("path",), ("seconds", "bytes_per_second"))
                if got != want:
                    fail("verify --device auto --json %s differs from the local file:\n%s\n%s", url, got, want)
                out, _ = tool.ok(["verify", "--device", "auto", url])
                if not out.decode().startswith(url + ": OK"):
                    fail("verify --device auto %s: %s", url, out[:500])
    res.check("5 verify --device auto and --json on remote TFRecords", verify_device)
    return res.finish()


if __name__ == "__main__":
    rtest.main_guard(main)
