#!/usr/bin/env python3
"""The public C API against the command line.

test_api.c is compiled against an installed copy of libshardtool, found
through pkg-config only (--installed BUILD_ROOT: `meson install --destdir`
into a temporary directory), or given ready-built (--binary TEST_API, the
copy meson links to the library target, which the sanitized suite runs).
Its records, framed as TFRecord by the test itself, must print under
`shardtool cat` exactly as the original inputs do; a damaged TFRecord must
give the command line's message; verify's report must match `shardtool
verify`'s line, and each file's report of a manifest's set (intact, damaged,
missing, unlisted, unusable, unreadable, uneven) the line and the JSON member
of `shardtool verify --manifest`; misuse must get error codes.  A conversion through the API must give the
shards `shardtool convert` gives with the same options, a report that
agrees with its manifest, progress calls, and the command line's refusal
of an existing output set; a split through the API the shards and
manifest of `shardtool split` (cmp).  Inputs behind a local HTTP
server are read too, where the build has remote support.

SHARDTOOL=path overrides the command line compared with."""
import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(cmd, env=None, **kw):
    return subprocess.run(cmd, capture_output=True, env=env, **kw)


def manifest_via_api(exe, env, manifest, extra=()):
    """test_api manifest: (process, [file fields], summary fields, error fields)."""
    r = run([exe, "manifest", manifest] + list(extra), env=env)
    files, summary, error = [], None, None
    for line in r.stdout.decode(errors="replace").splitlines():
        f = line.split("\t")
        if f[0] == "FILE":
            files.append(f[1:])
        elif f[0] == "SUMMARY":
            summary = f[1:]
        elif f[0] == "ERROR":
            error = f[1:]
    return r, files, summary, error


def compare_manifest(exe, env, shardtool, manifest, what, extra=(), cli_extra=()):
    """Each file's report and the summary against verify --manifest's lines
    (standard error's without "shardtool verify: "), its JSON and its exit
    status.  Returns the API's file fields."""
    r, files, summary, error = manifest_via_api(exe, env, manifest, extra)
    check(r.returncode == 0 and summary is not None and error is None,
          "%s: test_api manifest: %r %r" % (what, r.stdout[-2000:], r.stderr[-2000:]))
    if summary is None:
        return files
    ok, nfiles, damaged, unreadable, records, nbytes, balance, message = summary
    cli = subprocess.run([shardtool, "verify"] + list(cli_extra) + ["--manifest", manifest],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    prefix = "shardtool verify: "
    lines = [l[len(prefix):] if l.startswith(prefix) else l for l in cli.stdout.decode(errors="replace").splitlines()]
    ours = [f[6] for f in files] + ([balance] if balance else []) + ([message] if int(nfiles) > 1 else [])
    check(ours == lines, "%s: the API's lines\n  %s\nare verify --manifest's\n  %s" %
          (what, "\n  ".join(ours), "\n  ".join(lines)))
    want_status = 0 if ok == "1" else 2 if int(unreadable) else 1
    check(cli.returncode == want_status, "%s: verify exits %d, the summary says %d" % (what, cli.returncode, want_status))
    js = run([shardtool, "verify", "--json"] + list(cli_extra) + ["--manifest", manifest])
    try:
        doc = json.loads(js.stdout)
    except ValueError:
        check(False, "%s: verify --json: %r" % (what, js.stdout[-2000:]))
        return files
    check(len(doc["files"]) == len(files), "%s: %d reports, verify --json has %d" % (what, len(files), len(doc["files"])))
    for f, j in zip(files, doc["files"]):
        path, fok, fmt, frecords, fbytes, kind, _ = f
        check(path == j["path"] and int(fok) == int(j["ok"]), "%s: %r vs %r" % (what, f, j))
        if "error" in j:
            check(kind == "unreadable" and fmt == "", "%s: unreadable %r" % (what, f))
        elif "format" in j:
            check(fmt == j["format"] and int(frecords) == j["records"] and int(fbytes) == j["file_bytes"] and
                  kind == j.get("failure", {}).get("kind", ""), "%s: %r vs %r" % (what, f, j))
        else:
            check(fmt == "" and kind == j["failure"]["kind"], "%s: %r vs %r" % (what, f, j))
    t = doc["total"]
    check([int(nfiles), int(damaged), int(unreadable), int(records), int(nbytes), ok == "1"] ==
          [t["files"], t["damaged"], t["unreadable"], t["records"], t["file_bytes"], doc["ok"]],
          "%s: summary %r vs verify --json's %r" % (what, summary, doc))
    return files


def manifest_cases(exe, env, shardtool, data, tmp):
    """shardtool_verify_manifest on an intact set and a damaged one."""
    taxi = os.path.join(data, "csv", "tfx", "chicago_taxi_data.csv")
    good = os.path.join(tmp, "good", "x")
    r = run([shardtool, "convert", taxi, "-o", good, "-s", "3", "-q"])
    check(r.returncode == 0, "convert: %r" % r.stderr)
    m = good + ".manifest.json"
    files = compare_manifest(exe, env, shardtool, m, "intact set")
    check(len(files) == 3 and all(f[1] == "1" and "OK (tfrecord, " in f[6] for f in files), "intact: %r" % files)
    compare_manifest(exe, env, shardtool, m, "intact set, even", ["0.5"], ["--max-imbalance", "0.5"])
    compare_manifest(exe, env, shardtool, m, "intact set, too uneven", ["0"], ["--max-imbalance", "0"])

    # A damaged set: a bad CRC, a missing shard, an unlisted one, a count the
    # manifest gets wrong, an entry outside the manifest's directory, an
    # entry without a path.
    bad = os.path.join(tmp, "bad", "x")
    r = run([shardtool, "convert", taxi, "-o", bad, "-s", "4", "-q"])
    check(r.returncode == 0, "convert: %r" % r.stderr)
    with open(bad + "-00001-of-00004.tfrecord", "r+b") as f:
        f.seek(100)
        f.write(b"X")
    os.remove(bad + "-00002-of-00004.tfrecord")
    shutil.copy(bad + "-00000-of-00004.tfrecord", bad + "-00000-of-00005.tfrecord")
    m = bad + ".manifest.json"
    with open(m) as f:
        doc = json.load(f)
    doc["shards"][3]["records"] += 1
    doc["shards"] += [{"path": "../outside-00000-of-00001.tfrecord"}, {"records": 5}]
    with open(m, "w") as f:
        json.dump(doc, f)
    files = compare_manifest(exe, env, shardtool, m, "damaged set")
    kinds = [f[5] for f in files]
    check(kinds == ["", "data crc", "manifest mismatch", "manifest mismatch", "unsafe path", "bad manifest entry",
                    "unlisted shard"], "damaged set: kinds %r" % kinds)
    compare_manifest(exe, env, shardtool, m, "damaged set, trusted paths", ["trust"], ["--trust-manifest-paths"])

    # A manifest naming no format, one of whose entries is CSV text: unreadable.
    text_dir = os.path.join(tmp, "text")
    os.makedirs(text_dir)
    shutil.copy(good + "-00000-of-00003.tfrecord", os.path.join(text_dir, "y-00000-of-00002.tfrecord"))
    with open(os.path.join(text_dir, "t-00000-of-00001.csv"), "w") as f:
        f.write("a,b\n1,2\n")
    m = os.path.join(text_dir, "y.manifest.json")
    with open(m, "w") as f:
        json.dump({"shards": [{"path": "y-00000-of-00002.tfrecord"}, {"path": "t-00000-of-00001.csv"}]}, f)
    files = compare_manifest(exe, env, shardtool, m, "an unreadable entry")
    check([f[5] for f in files] == ["", "unreadable"], "unreadable entry: %r" % files)

    # The manifest itself: missing, or not a manifest.
    for path, code in [(os.path.join(tmp, "good", "x"), "-6"), (good + "-00000-of-00003.tfrecord", "-2")]:
        r, files, summary, error = manifest_via_api(exe, env, path)
        cli = run([shardtool, "verify", "--manifest", path]).stderr.decode(errors="replace").splitlines()
        check(r.returncode == 0 and error is not None and error[0] == code and cli and
              error[1] == cli[0][len("shardtool verify: "):], "manifest %s: %r vs %r" % (path, error, cli[:1]))


def build_against_install(build_root, source, sanitize, tmp):
    destdir = os.path.join(tmp, "root")
    r = run(["meson", "install", "-C", build_root, "--destdir", destdir, "--no-rebuild", "--quiet"])
    if r.returncode != 0:
        sys.exit("meson install failed:\n" + r.stderr.decode(errors="replace"))
    pcs = [os.path.join(d, f) for d, _, fs in os.walk(destdir) for f in fs if f == "shardtool.pc"]
    if not pcs:
        sys.exit("no shardtool.pc installed under " + destdir)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]), PKG_CONFIG_SYSROOT_DIR=destdir)
    flags = run(["pkg-config", "--cflags", "--libs", "shardtool"], env=env)
    if flags.returncode != 0:
        sys.exit("pkg-config shardtool failed:\n" + flags.stderr.decode(errors="replace"))
    sonames = [d for d, _, fs in os.walk(destdir) for f in fs if f == "libshardtool.so.0"]
    check(len(sonames) == 1, "libshardtool.so.0 (the soname) is installed once: %s" % sonames)
    libdir = sonames[0] if sonames else destdir
    exe = os.path.join(tmp, "test_api")
    cmd = [os.environ.get("CC", "cc"), "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
           os.path.join(source, "tests", "api", "test_api.c"), "-o", exe]
    cmd += flags.stdout.decode().split()
    if sanitize and sanitize != "none":
        cmd.append("-fsanitize=" + sanitize)
    r = run(cmd)
    if r.returncode != 0:
        sys.exit("compiling test_api.c against the installed library failed:\n" + " ".join(cmd) + "\n" +
                 r.stderr.decode(errors="replace"))
    # Only the public header is installed.
    headers = [f for d, _, fs in os.walk(destdir) for f in fs if f.endswith(".h")]
    check(headers == ["shardtool.h"], "installed headers are only shardtool.h: %s" % headers)
    check_python_install(destdir, libdir, source, sanitize)
    return exe, dict(os.environ, LD_LIBRARY_PATH=libdir)


def check_python_install(destdir, libdir, source, sanitize):
    """The installed Python module: every file of python/shardtool is
    there, and Debian's python3 imports it from there, finding the library
    (here through LD_LIBRARY_PATH, as the destdir is not the prefix)."""
    packages = [d for d, _, fs in os.walk(destdir) if os.path.basename(d) == "shardtool" and "__init__.py" in fs]
    if not os.path.exists("/usr/bin/python3") or not packages:
        check(bool(packages) or not os.path.exists("/usr/bin/python3"), "the Python module is installed")
        return
    want = sorted(f for f in os.listdir(os.path.join(source, "python", "shardtool")) if f.endswith(".py"))
    got = sorted(f for f in os.listdir(packages[0]) if f.endswith(".py"))
    check(set(want) <= set(got) and "_install.py" in got,
          "installed module files %s hold the source's %s and _install.py" % (got, want))
    env = {k: v for k, v in os.environ.items() if k not in ("SHARDTOOL_LIBRARY", "PYTHONPATH")}
    env.update(PYTHONPATH=os.path.dirname(packages[0]), LD_LIBRARY_PATH=libdir)
    if sanitize and "address" in sanitize:
        # python3 itself is not instrumented: the runtime must come first,
        # and python's own allocations at exit are not ours to report.
        asan = run([os.environ.get("CC", "cc"), "-print-file-name=libasan.so"]).stdout.decode().strip()
        env.update(LD_PRELOAD=asan, ASAN_OPTIONS="detect_leaks=0")
    r = run(["/usr/bin/python3", "-c", "import shardtool; print(shardtool.__file__, shardtool.version())"], env=env)
    out = r.stdout.decode()
    check(r.returncode == 0 and out.startswith(packages[0]),
          "python3 imports the installed module: %r %r" % (out, r.stderr.decode(errors="replace")[-500:]))


def convert_cases(exe, env, shardtool, data, tmp):
    """shardtool_convert against `shardtool convert` with the same options:
    byte-identical shards, the report's counts as the manifest's, progress
    calls, and the command line's refusal of an existing set."""
    csv = os.path.join(data, "csv", "tfx", "chicago_taxi_data.csv")
    for to, ext in (("tfrecord", "tfrecord"), ("parquet", "parquet")):
        cli_prefix = os.path.join(tmp, "conv-cli-" + to, "part")
        api_prefix = os.path.join(tmp, "conv-api-" + to, "part")
        cli = run([shardtool, "convert", csv, "-o", cli_prefix, "--to", to, "--shards", "3"])
        check(cli.returncode == 0, "convert --to %s: %s" % (to, cli.stderr.decode(errors="replace")))
        r = run([exe, "convert", to, "3", api_prefix, "0", csv], env=env)
        out = r.stdout.decode(errors="replace")
        check(r.returncode == 0, "the API's convert --to %s: %s %s" % (to, out, r.stderr.decode(errors="replace")))
        for i in range(3):
            name = "-%05d-of-00003.%s" % (i, ext)
            a, b = cli_prefix + name, api_prefix + name
            same = os.path.exists(a) and os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()
            check(same, "--to %s shard %d: the API's is the command line's" % (to, i))
        report = [line.split("\t") for line in out.splitlines() if line.startswith("REPORT\t")]
        progress = [line.split("\t") for line in out.splitlines() if line.startswith("PROGRESS\t")]
        check(len(report) == 1 and len(progress) == 1, "report and progress lines: %r" % out)
        if len(report) == 1 and len(progress) == 1:
            records, shards, manifest = int(report[0][1]), int(report[0][2]), report[0][4]
            check(manifest == api_prefix + ".manifest.json", "report's manifest %r" % manifest)
            with open(manifest) as f:
                m = json.load(f)
            listed = m.get("shards", [])
            total = sum(s.get("records", 0) for s in listed)
            check(records == 10000 and records == total and shards == len(listed) == 3,
                  "--to %s report %d records, %d shards; manifest %d, %d" % (to, records, shards, total,
                                                                           len(listed)))
            calls, decreased, last = (int(x) for x in progress[0][1:])
            check(calls > 0 and decreased == 0 and last == records,
                  "--to %s progress: %d calls, %d decreasing, last %d" % (to, calls, decreased, last))
        # Again: refused with the command line's message, unless forced.
        again_cli = run([shardtool, "convert", csv, "-o", cli_prefix, "--to", to, "--shards", "3"])
        again = run([exe, "convert", to, "3", api_prefix, "0", csv], env=env)
        cli_msg = again_cli.stderr.decode().splitlines()[0][len("shardtool convert: "):].replace(cli_prefix, "P")
        got = again.stdout.decode().splitlines()
        check(again.returncode == 1 and got and got[0].split("\t")[1] == "-3" and
              got[0].split("\t", 2)[2].replace(api_prefix, "P") == cli_msg,
              "an existing set: %r vs %r" % (got[:1], cli_msg))
        forced = run([exe, "convert", to, "3", api_prefix, "1", csv], env=env)
        check(forced.returncode == 0, "force: %s" % forced.stdout.decode(errors="replace"))

    # The formats' own options, the manifest's and the feature spec's paths:
    # the same files as the command line's, and the same "options" in the
    # manifests (they share lib/output_claim.c and lib/run_options.c).
    cases = (
        ("parquet", "parquet", ["--parquet-codec", "zstd", "--compression-level", "5", "--row-group-size",
                                "65536", "--page-version", "2", "--bytes-as", "binary"],
         ["@parquet_codec=zstd", "@compression_level=5", "@row_group_size=65536", "@page_version=2",
          "@bytes_as=binary"]),
        ("avro", "avro", ["--avro-codec", "snappy"], ["@avro_codec=snappy"]),
        ("tfrecord", "tfrecord", [], []),
    )
    for to, ext, cli_args, api_args in cases:
        base = os.path.join(tmp, "conv-opts-" + to)
        paths = {}
        for who in ("cli", "api"):
            paths[who] = (os.path.join(base, who, "part"), os.path.join(base, who + "-side", "m.json"),
                          os.path.join(base, who + "-side", "spec.json"))
        prefix, manifest, spec = paths["cli"]
        r = run([shardtool, "convert", csv, "-o", prefix, "--to", to, "--shards", "2", "--manifest", manifest,
                 "--feature-spec", spec] + cli_args)
        check(r.returncode == 0, "convert --to %s %s: %s" % (to, cli_args, r.stderr.decode(errors="replace")))
        prefix, manifest, spec = paths["api"]
        r = run([exe, "convert", to, "2", prefix, "0", "@manifest=" + manifest, "@feature_spec=" + spec]
                + api_args + [csv], env=env)
        check(r.returncode == 0, "the API's convert --to %s %s: %s" % (to, api_args, r.stdout.decode(errors="replace")))
        for i in range(2):
            name = "-%05d-of-00002.%s" % (i, ext)
            a, b = paths["cli"][0] + name, paths["api"][0] + name
            if to == "avro":
                # The sync marker comes from the file's name: the same
                # records, and the codec asked for.
                same = os.path.exists(a) and os.path.exists(b) and \
                    run([shardtool, "cat", a]).stdout == run([shardtool, "cat", b]).stdout and \
                    all(b"\x14avro.codec\x0csnappy" in open(f, "rb").read(65536) for f in (a, b))
            else:
                same = os.path.exists(a) and os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()
            check(same, "--to %s %s shard %d: the API's is the command line's" % (to, cli_args, i))
        same_spec = all(os.path.exists(paths[w][2]) for w in paths) and \
            open(paths["cli"][2], "rb").read() == open(paths["api"][2], "rb").read()
        check(same_spec, "--to %s: the API's feature spec is the command line's" % to)
        options = []
        for who in ("cli", "api"):
            try:
                with open(paths[who][1]) as f:
                    options.append(json.load(f).get("options"))
            except OSError as e:
                options.append(str(e))
        check(options[0] == options[1], "--to %s: manifest options %r vs %r" % (to, options[0], options[1]))

    # Cancelled through the flag: ECANCELED, and nothing left behind.
    cancel_dir = os.path.join(tmp, "conv-cancel")
    r = run([exe, "convert", "tfrecord", "2", os.path.join(cancel_dir, "part"), "0", "@cancel_after=1", csv],
            env=env)
    out = r.stdout.decode(errors="replace")
    check(r.returncode == 1 and out.startswith("ERROR\t-8\t"), "cancelled: %r" % out)
    check(not os.path.exists(cancel_dir) or not os.listdir(cancel_dir),
          "cancelled: left %r" % (os.listdir(cancel_dir) if os.path.exists(cancel_dir) else None))

    r = run([exe, "convert-misuse", csv, os.path.join(tmp, "conv-misuse", "x")], env=env)
    check(r.returncode == 0 and b"convert-misuse: ok" in r.stdout,
          "convert misuse: %s" % (r.stdout + r.stderr).decode(errors="replace"))


def split_cases(exe, env, shardtool, data, tmp):
    """shardtool_split against `shardtool split` with the same options, for
    each kind of input: the same prefix (an Avro shard's sync marker comes
    from its name), written by the command line and moved aside, then by
    the API; every shard and the manifest must be byte for byte the
    command line's, the report must agree with the manifest, and a refusal
    must be the command line's message."""
    tfx = os.path.join(data, "tfrecord", "tfx", "external", "tfrecord")
    avro_copy = os.path.join(tmp, "split-in", "weather-again.avro")
    os.makedirs(os.path.dirname(avro_copy), exist_ok=True)
    shutil.copyfile(os.path.join(data, "avro", "weather.avro"), avro_copy)
    ar = os.path.join(data, "arrayrecord")
    kinds = (
        ("tfrecord", 3, [], sorted(os.path.join(tfx, f) for f in os.listdir(tfx) if f.endswith(".gz"))),
        ("tfrecord", 2, ["@skip_corrupt=1"], [os.path.join(data, "tfrecord", "corrupt", "pets_examples.record")]),
        ("avro", 2, [], [os.path.join(data, "avro", "weather.avro"), avro_copy]),
        ("webdataset", 2, [], [os.path.join(data, "webdataset", n) for n in ("tendata.tar", "mpdata.tar")]),
        ("arrayrecord", 2, [], sorted(os.path.join(ar, f) for f in os.listdir(ar))),
    )
    for n, (kind, shards, api_args, inputs) in enumerate(kinds):
        base = os.path.join(tmp, "split-%d" % n)
        prefix = os.path.join(base, "out", "part")
        cli_args = ["--skip-corrupt" if a == "@skip_corrupt=1" else a for a in api_args]
        cli = run([shardtool, "split"] + inputs + ["-o", prefix, "-s", str(shards)] + cli_args)
        check(cli.returncode == 0, "split %s: %s" % (kind, cli.stderr.decode(errors="replace")))
        os.rename(os.path.join(base, "out"), os.path.join(base, "cli"))
        r = run([exe, "split", str(shards), prefix, "0"] + api_args + inputs, env=env)
        out = r.stdout.decode(errors="replace")
        check(r.returncode == 0, "the API's split %s: %s %s" % (kind, out, r.stderr.decode(errors="replace")))
        made = sorted(os.listdir(os.path.join(base, "cli")))
        got = sorted(os.listdir(os.path.join(base, "out"))) if os.path.isdir(os.path.join(base, "out")) else []
        check(made == got and len(made) == shards + 1, "split %s: files %r vs %r" % (kind, made, got))
        for name in made:
            a, b = os.path.join(base, "cli", name), os.path.join(base, "out", name)
            same = os.path.exists(b) and subprocess.run(["cmp", "-s", a, b]).returncode == 0
            check(same, "split %s: the API's %s is the command line's (cmp)" % (kind, name))
        report = [line.split("\t") for line in out.splitlines() if line.startswith("REPORT\t")]
        progress = [line.split("\t") for line in out.splitlines() if line.startswith("PROGRESS\t")]
        check(len(report) == 1 and len(progress) == 1, "split %s: report and progress lines: %r" % (kind, out))
        if len(report) == 1 and len(progress) == 1:
            fmt, records, units, skipped, nshards = report[0][1], *(int(x) for x in report[0][2:6])
            manifest = report[0][7]
            check(fmt == kind and manifest == prefix + ".manifest.json", "split %s: report %r" % (kind, report[0]))
            with open(os.path.join(base, "cli", "part.manifest.json")) as f:
                m = json.load(f)
            listed = m.get("shards", [])
            total = sum(s.get("records", 0) for s in listed)
            check(records == total > 0 and nshards == len(listed) == shards,
                  "split %s: report %d records, %d shards; manifest %d, %d" % (kind, records, nshards, total,
                                                                             len(listed)))
            want_skipped = m.get("skipped", {}).get("count", 0)
            check(skipped == want_skipped and (skipped > 0) == bool(api_args),
                  "split %s: %d skipped, the manifest %d" % (kind, skipped, want_skipped))
            check((units > 0) == (kind in ("avro", "arrayrecord")), "split %s: %d units" % (kind, units))
            calls, decreased, last = (int(x) for x in progress[0][1:])
            check(calls > 0 and decreased == 0 and last == records,
                  "split %s progress: %d calls, %d decreasing, last %d" % (kind, calls, decreased, last))
        # Again: refused with the command line's message, unless forced.
        again_cli = run([shardtool, "split"] + inputs + ["-o", prefix, "-s", str(shards)] + cli_args)
        again = run([exe, "split", str(shards), prefix, "0"] + api_args + inputs, env=env)
        lines = again_cli.stderr.decode().splitlines()
        cli_msg = lines[0][len("shardtool split: "):] if lines else None
        got = again.stdout.decode().splitlines()
        check(again_cli.returncode == 2 and again.returncode == 1 and got and got[0].split("\t")[1] == "-3" and
              got[0].split("\t", 2)[2] == cli_msg, "split %s, an existing set: %r vs %r" % (kind, got[:1], cli_msg))
        forced = run([exe, "split", str(shards), prefix, "1"] + api_args + inputs, env=env)
        check(forced.returncode == 0, "split %s, force: %s" % (kind, forced.stdout.decode(errors="replace")))

    # A mix of kinds: the command line's usage error, word for word.
    mix = [os.path.join(data, "avro", "weather.avro"), os.path.join(data, "tfrecord", "sequence", "events.tfrecord")]
    prefix = os.path.join(tmp, "split-mix", "part")
    cli = run([shardtool, "split"] + mix + ["-o", prefix])
    api = run([exe, "split", "1", prefix, "0"] + mix, env=env)
    lines = cli.stderr.decode().splitlines()
    got = api.stdout.decode().splitlines()
    check(cli.returncode == 2 and lines and got and got[0] == "ERROR\t-3\t" + lines[0][len("shardtool split: "):],
          "split of a mix: %r vs %r" % (got[:1], lines[:1]))

    # Cancelled through the flag: ECANCELED, and nothing left behind.
    for kind, inputs in (("tfrecord", kinds[0][3]), ("avro", [os.path.join(data, "avro", "tfx", "chicago_taxi_data.avro")])):
        cancel_dir = os.path.join(tmp, "split-cancel-" + kind)
        r = run([exe, "split", "2", os.path.join(cancel_dir, "part"), "0", "@cancel_after=1"] + inputs, env=env)
        out = r.stdout.decode(errors="replace")
        check(r.returncode == 1 and out.startswith("ERROR\t-8\t"), "split %s cancelled: %r" % (kind, out))
        check(not os.path.exists(cancel_dir) or not os.listdir(cancel_dir),
              "split %s cancelled: left %r" % (kind, os.listdir(cancel_dir) if os.path.exists(cancel_dir) else None))

    r = run([exe, "split-misuse", kinds[0][3][0], os.path.join(tmp, "split-misuse", "x")], env=env)
    check(r.returncode == 0 and b"split-misuse: ok" in r.stdout,
          "split misuse: %s" % (r.stdout + r.stderr).decode(errors="replace"))


def example_int64(name_values):
    """A tf.train.Example of {name: [bytes, ...] or [int, ...]} (an
    Int64List, packed, for ints): what example_shards writes, with ints."""
    import example_shards as es
    entries = b""
    for name, values in name_values.items():
        if values and isinstance(values[0], int):
            feature = es._field(3, es._field(1, b"".join(es._varint(v) for v in values)))
        else:
            feature = es._field(1, b"".join(es._field(1, v) for v in values))
        entries += es._field(1, es._field(1, name.encode()) + es._field(2, feature))
    return es._field(1, entries)


def same_files(a, b):
    return os.path.exists(a) and os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read()


def manifest_members(path, names):
    try:
        with open(path) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        return str(e)
    return {n: m.get(n) for n in names}


def format_option_cases(exe, env, shardtool, source, data, tmp):
    """The options of one output format (--to webdataset, --to arrayrecord),
    a TFDS directory and the payload check through the API: the same shards
    (byte for byte), the same manifest "options" (and "tfds", the records
    left out), the same dataset_info.json and features.json as the command
    line's; and bad values refused with the command line's words."""
    sys.path.insert(0, os.path.join(source, "tests", "support"))
    import example_shards
    base = os.path.join(tmp, "fmt-opts")
    os.makedirs(base)
    keyed = os.path.join(base, "keyed.csv")
    with open(keyed, "w") as f:
        f.write("k,text,n\n")
        for i in range(23):
            f.write("s%03d,row %d,%d\n" % (i * 7 % 23, i, i * i))
    csv = os.path.join(data, "csv", "tfx", "chicago_taxi_data.csv")
    corpus = os.path.join(source, "tests", "fuzz", "corpus", "payload")
    good, trunc = (open(os.path.join(corpus, n), "rb").read() for n in ("tiny.jpg", "damaged-trunc.jpg"))
    payloads = os.path.join(base, "payloads.tfrecord")
    example_shards.write_tfrecord(payloads, [{"image": [good]}, {"image": [trunc]}, {"image": [good]},
                                             {"image": [good]}])
    images = os.path.join(base, "images.tfrecord")
    with open(images, "wb") as f:
        for i in range(6):
            f.write(example_shards.frame(example_int64({"image": [good], "label": [i % 3], "id": [i]})))
    names = os.path.join(base, "names.txt")
    with open(names, "w") as f:
        f.write("cat\ndog\nbird\n")

    # (what, input, --to and extension, the command line's options, the API's)
    cases = (
        ("webdataset --key --mtime", keyed, "webdataset", "tar",
         ["--key", "k", "--mtime", "1700000000"], ["@key=k", "@mtime=1700000000"]),
        ("webdataset --wds-member json", keyed, "webdataset", "tar",
         ["--wds-member", "json", "--mtime", "0"], ["@wds_member=json", "@mtime=0"]),
        ("arrayrecord brotli, group size 7", csv, "arrayrecord", "array_record",
         ["--arrayrecord-codec", "brotli", "--compression-level", "5", "--arrayrecord-group-size", "7"],
         ["@arrayrecord_codec=brotli", "@compression_level=5", "@arrayrecord_group_size=7"]),
        ("--check-payloads --skip-corrupt", payloads, "tfrecord", "tfrecord",
         ["--check-payloads", "--skip-corrupt"], ["@check_payloads=1", "@skip_corrupt=1"]),
        ("--check-payloads=headers --max-pixels", images, "tfrecord", "tfrecord",
         ["--check-payloads=headers", "--max-pixels", "1000000"], ["@check_payloads=2", "@max_pixels=1000000"]),
    )
    for n, (what, inp, to, ext, cli_args, api_args) in enumerate(cases):
        prefixes = {w: os.path.join(base, "case%d-%s" % (n, w), "part") for w in ("cli", "api")}
        cli = run([shardtool, "convert", inp, "-o", prefixes["cli"], "--to", to, "--shards", "2"] + cli_args)
        api = run([exe, "convert", to, "2", prefixes["api"], "0"] + api_args + [inp], env=env)
        if "skip-corrupt" in what:
            # Without --skip-corrupt the damaged image stops both runs, with one message.
            stop = {w: os.path.join(base, "case%d-stop-%s" % (n, w), "part") for w in ("cli", "api")}
            c = run([shardtool, "convert", inp, "-o", stop["cli"], "--to", to, "--check-payloads"])
            a = run([exe, "convert", to, "2", stop["api"], "0", "@check_payloads=1", inp], env=env)
            lines = c.stderr.decode(errors="replace").splitlines()
            want = lines[0][len("shardtool convert: "):].replace(stop["cli"], "P") if lines else None
            got = a.stdout.decode(errors="replace").split("\t", 2)
            check(c.returncode != 0 and want and a.returncode == 1 and len(got) == 3 and
                  got[2].splitlines()[0].replace(stop["api"], "P") == want,
                  "a bad payload without --skip-corrupt: %r vs %r" % (got, lines[:1]))
        check(cli.returncode == 0, "convert %s: %s" % (what, cli.stderr.decode(errors="replace")))
        check(api.returncode == 0, "the API's convert %s: %s" % (what, api.stdout.decode(errors="replace")))
        for i in range(2):
            name = "-%05d-of-00002.%s" % (i, ext)
            check(same_files(prefixes["cli"] + name, prefixes["api"] + name),
                  "%s shard %d: the API's is the command line's" % (what, i))
        if what == "webdataset --key --mtime":
            # Read by Python's tarfile too: keys from k, every member's mtime.
            import tarfile
            keys, times = set(), set()
            for i in range(2):
                try:
                    with tarfile.open(prefixes["api"] + "-%05d-of-00002.tar" % i) as t:
                        for m in t.getmembers():
                            keys.add(m.name.split(".", 1)[0])
                            times.add(m.mtime)
                except (OSError, tarfile.TarError) as e:
                    check(False, "%s: tarfile: %s" % (what, e))
            check(keys == {"s%03d" % i for i in range(23)} and times == {1700000000},
                  "%s: tarfile reads keys %r, mtimes %r" % (what, sorted(keys)[:3], times))
        members = [manifest_members(prefixes[w] + ".manifest.json", ("options", "skipped", "shards"))
                   for w in ("cli", "api")]
        check(members[0] == members[1], "%s: manifest %r vs %r" % (what, members[0], members[1]))
        if "skip-corrupt" in what:
            skipped = members[0].get("skipped") if isinstance(members[0], dict) else None
            records = sum(s.get("records", 0) for s in members[0].get("shards") or []) \
                if isinstance(members[0], dict) else None
            check(records == 3 and skipped and skipped.get("count") == 1,
                  "%s: 3 records written, the damaged one listed: %r" % (what, members[0]))

    # A split of a TFDS directory with --image and --label.
    roots = {w: os.path.join(base, "tfds-" + w) for w in ("cli", "api")}
    cli = run([shardtool, "convert", images, "--tfds", roots["cli"], "--name", "pets", "--split", "train",
               "--version", "2.1.0", "--image", "image", "--label", "label=" + names, "--shards", "2"])
    api = run([exe, "convert", "tfrecord", "2", "", "0", "@tfds_dir=" + roots["api"], "@tfds_name=pets",
               "@tfds_split=train", "@tfds_version=2.1.0", "@image=image", "@label=label=" + names, images],
              env=env)
    check(cli.returncode == 0, "convert --tfds: %s" % cli.stderr.decode(errors="replace"))
    check(api.returncode == 0, "the API's convert tfds_dir: %s" % api.stdout.decode(errors="replace"))
    dirs = {w: os.path.join(roots[w], "pets", "2.1.0") for w in roots}
    listed = sorted(os.listdir(dirs["cli"])) if os.path.isdir(dirs["cli"]) else []
    check(listed and os.path.isdir(dirs["api"]) and listed == sorted(os.listdir(dirs["api"])),
          "--tfds: the same files: %r vs %r" % (listed, os.listdir(dirs["api"]) if os.path.isdir(dirs["api"])
                                               else None))
    check("label.labels.txt" in listed and "pets-train.tfrecord-00001-of-00002" in listed,
          "--tfds: the shards and the class names: %r" % listed)
    for name in listed:
        if name.endswith(".manifest.json"):
            members = [manifest_members(os.path.join(dirs[w], name), ("options", "tfds", "shards"))
                       for w in dirs]
            check(members[0] == members[1], "--tfds %s: %r vs %r" % (name, members[0], members[1]))
        else:
            check(same_files(os.path.join(dirs["cli"], name), os.path.join(dirs["api"], name)),
                  "--tfds %s: the API's is the command line's" % name)
    try:
        with open(os.path.join(dirs["api"], "features.json")) as f:
            feats = json.load(f)["featuresDict"]["features"]
        check(feats["image"]["pythonClassName"].endswith("image_feature.Image") and
              feats["label"]["pythonClassName"].endswith("class_label_feature.ClassLabel"),
              "--tfds: image an Image, label a ClassLabel: %r" % feats)
    except (OSError, ValueError, KeyError) as e:
        check(False, "--tfds features.json: %s" % e)

    # Bad values: the command line's message, SHARDTOOL_EUSAGE.
    tfds = ["--tfds", os.path.join(base, "bad-tfds"), "--name", "pets", "--split", "train"]
    api_tfds = ["@tfds_dir=" + os.path.join(base, "bad-tfds"), "@tfds_name=pets", "@tfds_split=train"]
    bad = (
        ("tfrecord", True, ["--key", "k"], ["@key=k"]),
        ("tfrecord", True, ["--wds-member", "json"], ["@wds_member=json"]),
        ("tfrecord", True, ["--mtime", "5"], ["@mtime=5"]),
        ("webdataset", True, ["--mtime", "8589934592"], ["@mtime=8589934592"]),
        ("tfrecord", True, ["--arrayrecord-codec", "zstd"], ["@arrayrecord_codec=zstd"]),
        ("tfrecord", True, ["--arrayrecord-group-size", "7"], ["@arrayrecord_group_size=7"]),
        ("arrayrecord", True, ["--arrayrecord-codec", "brotli", "--compression-level", "12"],
         ["@arrayrecord_codec=brotli", "@compression_level=12"]),
        ("arrayrecord", True, ["--arrayrecord-codec", "snappy", "--compression-level", "3"],
         ["@arrayrecord_codec=snappy", "@compression_level=3"]),
        ("arrayrecord", True, ["--arrayrecord-group-size", "2147483648"], ["@arrayrecord_group_size=2147483648"]),
        ("arrayrecord", True, ["--compression", "gzip"], ["@compression=gzip"]),
        ("tfrecord", True, ["--skip-corrupt"], ["@skip_corrupt=1"]),
        ("tfrecord", True, ["--max-pixels", "5"], ["@max_pixels=5"]),
        ("tfrecord", True, ["--name", "pets"], ["@tfds_name=pets"]),
        ("tfrecord", True, ["--label", "label=3"], ["@label=label=3"]),
        ("tfrecord", True, tfds, api_tfds),
        ("tfrecord", False, tfds + ["--compression", "gzip"], api_tfds + ["@compression=gzip"]),
        ("parquet", False, tfds, api_tfds),
        ("tfrecord", False, tfds[:-1] + ["a-b"], api_tfds[:-1] + ["@tfds_split=a-b"]),
        ("tfrecord", False, tfds + ["--version", "1.0"], api_tfds + ["@tfds_version=1.0"]),
        ("tfrecord", False, tfds + ["--image", "label", "--label", "label=3"],
         api_tfds + ["@image=label", "@label=label=3"]),
        ("tfrecord", False, tfds + ["--label", "label=3", "--label", "label=4"],
         api_tfds + ["@label=label=3", "@label=label=4"]),
        ("tfrecord", False, tfds + ["--label", "label=" + os.path.join(base, "none.txt")],
         api_tfds + ["@label=label=" + os.path.join(base, "none.txt")]),
    )
    for n, (to, with_prefix, cli_args, api_args) in enumerate(bad):
        prefix = os.path.join(base, "bad%d" % n, "part")
        cli = run([shardtool, "convert", images, "--to", to] + (["-o", prefix] if with_prefix else []) + cli_args)
        api = run([exe, "convert", to, "0", prefix if with_prefix else "", "0"] + api_args + [images], env=env)
        lines = cli.stderr.decode(errors="replace").splitlines()
        want = lines[0][len("shardtool convert: "):] if lines and lines[0].startswith("shardtool convert: ") else None
        got = api.stdout.decode(errors="replace").splitlines()
        check(cli.returncode == 2 and want, "convert %s: refused (%d): %r" % (cli_args, cli.returncode, lines))
        check(api.returncode == 1 and got and got[0] == "ERROR\t-3\t%s" % want,
              "the API's %s: %r, the command line's %r" % (api_args, got[:1], want))


def payload_cases(exe, env, shardtool, source, tmp):
    """shardtool_verify_file_payloads reports what verify --payloads prints."""
    sys.path.insert(0, os.path.join(source, "tests", "support"))
    import example_shards
    corpus = os.path.join(source, "tests", "fuzz", "corpus", "payload")
    good, trunc = (open(os.path.join(corpus, n), "rb").read() for n in ("tiny.jpg", "damaged-trunc.jpg"))
    path = os.path.join(tmp, "payloads.tfrecord")
    example_shards.write_tfrecord(path, [{"image": [good]}, {"image": [good, trunc]}, {"image": [good]}])
    for mode, cli_flag, want in (("full", "--payloads", ["ok 0", "payloads 4", "checked 4", "bad 1",
                                                          "damage bad payload", "record 1"]),
                                 ("headers", "--payloads=headers", ["ok 0", "bad 1", "checked 4"]),  # cut inside its tables
                                 ("100", "--payloads", ["ok 0", "bad 4", "damage payload too large"])):
        r = run([exe, "payloads", path, mode], env=env)
        lines = r.stdout.decode().splitlines()
        extra = ["--max-pixels", mode] if mode.isdigit() else []
        cli = run([shardtool, "verify", cli_flag] + extra + [path]).stdout.decode().splitlines()
        check(r.returncode == 0 and all(w in lines for w in want), "payloads %s: %r" % (mode, lines))
        check(lines and cli and lines[-1] == cli[0], "payloads %s: %r vs verify's %r" % (mode, lines[-1:], cli[:1]))


def stat_cases(exe, env, shardtool, data, tmp):
    """shardtool_stat_file_json holds what stat --json says of each file, and
    a damaged or missing input is stat's message."""
    good = [os.path.join(data, "tfrecord", "tfx", "mnist", "mnist.tfrecord"),
            os.path.join(data, "tfrecord", "sequence", "events.tfrecord.gz"),
            os.path.join(data, "tfrecord", "tensorflow-models", "deeplab", "val-00000-of-00001.tfrecord"),
            os.path.join(data, "parquet", "alltypes_tiny_pages.parquet"),
            os.path.join(data, "avro", "weather-snappy.avro"),
            os.path.join(data, "arrayrecord", "digits.array_record-00000-of-00002"),
            os.path.join(data, "webdataset", "sample.tgz"),
            os.path.join(data, "csv", "arrow-testing", "aggregate_test_100.csv")]
    for path in good:
        r = run([exe, "stat", path], env=env)
        out = r.stdout.decode()
        status, message, text = (out.split("\n", 2) + ["", ""])[:3]
        cli = run([shardtool, "stat", "--json", path])
        want = json.loads(cli.stdout)["files"][0]
        got = json.loads(text) if text.strip() else None
        check(r.returncode == 0 and status == "0" and message == "", "stat %s: %r %r" % (path, out[:200], r.stderr))
        check(got == want, "stat %s: the API's JSON is stat --json's file" % path)
        check(want["records"] > 0, "stat --json %s: records" % path)
    # Only some columns, as stat --columns reads them.
    path = os.path.join(data, "parquet", "alltypes_plain.parquet")
    r = run([exe, "stat", path, "id"], env=env)
    cli = run([shardtool, "stat", "--json", "--columns", "id", path])
    got = r.stdout.decode().split("\n", 2)
    check(len(got) == 3 and json.loads(got[2]) == json.loads(cli.stdout)["files"][0] and
          [f["name"] for f in json.loads(got[2])["features"]] == ["id"], "stat --columns id through the API: %r" % got[:2])
    # Damaged: stat's message, and the JSON of what was read before it.
    trunc = os.path.join(tmp, "trunc.tfrecord")
    with open(good[0], "rb") as f, open(trunc, "wb") as o:
        o.write(f.read()[:30000])
    for path in [trunc, os.path.join(data, "parquet", "bad_data", "ARROW-GH-41321.parquet")]:
        r = run([exe, "stat", path], env=env)
        status, message, text = (r.stdout.decode().split("\n", 2) + ["", ""])[:3]
        cli = run([shardtool, "stat", "--json", path])
        cli_msg = cli.stderr.decode().splitlines()[0]
        check(cli.returncode == 1 and status == "-2" and message == cli_msg[len("shardtool stat: "):],
              "damaged %s: %r vs stat's %r" % (path, message, cli_msg))
        check(text.strip() and json.loads(text) == json.loads(cli.stdout)["files"][0] and
              json.loads(text)["error"], "damaged %s: the JSON of what was read, with its error" % path)
    # Missing or not an input: no JSON, stat's message.
    for path in [os.path.join(tmp, "no-such.parquet"), os.path.join(data, "avro", "weather.avsc")]:
        r = run([exe, "stat", path], env=env)
        status, message, text = (r.stdout.decode().split("\n", 2) + ["", ""])[:3]
        cli = run([shardtool, "stat", "--json", path])
        check(r.returncode == 0 and int(status) < 0 and text == "" and
              message == cli.stderr.decode().splitlines()[0][len("shardtool stat: "):],
              "stat of %s: %r vs %r" % (path, r.stdout, cli.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardtool", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--installed", metavar="BUILD_ROOT")
    ap.add_argument("--sanitize", default="none")
    ap.add_argument("--binary")
    a = ap.parse_args()
    shardtool = os.environ.get("SHARDTOOL", a.shardtool)
    data = os.path.join(a.source, "tests", "data")
    tmp = tempfile.mkdtemp(prefix="shardtool-api-")
    try:
        if a.installed:
            exe, env = build_against_install(a.installed, a.source, a.sanitize, tmp)
        else:
            exe, env = a.binary, dict(os.environ)

        # Records: CSV, Parquet, TFRecord, and a glob of SequenceExamples.
        cases = [
            [os.path.join(data, "csv", "arrow-testing", "aggregate_test_100.csv")],
            [os.path.join(data, "parquet", "alltypes_plain.parquet")],
            [os.path.join(data, "tfrecord", "sequence", "events.tfrecord")],
            [os.path.join(data, "tfrecord", "sequence", "clicks_*.tfrecord")],
        ]
        for i, inputs in enumerate(cases):
            out = os.path.join(tmp, "api%d.tfrecord" % i)
            r = run([exe, "records", out] + inputs, env=env)
            check(r.returncode == 0, "records of %s: %s" % (inputs, r.stderr.decode(errors="replace")))
            ours = run([shardtool, "cat", out])
            theirs = run([shardtool, "cat"] + inputs)
            check(theirs.returncode == 0 and ours.returncode == 0, "cat of %s" % inputs)
            check(len(theirs.stdout) > 0 and ours.stdout == theirs.stdout,
                  "the API's records of %s print as cat prints the input" % inputs)
            lines = theirs.stdout.count(b"\n")
            check(r.stdout.decode().strip() == "%d records" % lines, "record count of %s" % inputs)

        # A damaged TFRecord: the command line's message, without "shardtool cat: ".
        damaged = os.path.join(data, "tfrecord", "corrupt", "pets_examples.record")
        r = run([exe, "error", damaged], env=env)
        cli = run([shardtool, "cat", damaged])
        cli_msg = cli.stderr.decode().splitlines()[0]
        check(cli_msg.startswith("shardtool cat: "), "cat's message: %r" % cli_msg)
        got = r.stdout.decode().splitlines()
        check(r.returncode == 0 and len(got) == 2, "error run: %r %r" % (got, r.stderr))
        if len(got) == 2:
            check(got[0] == "-2", "a damaged record is SHARDTOOL_EDATA: %s" % got[0])
            check(got[1] == cli_msg[len("shardtool cat: "):], "message %r is cat's %r" % (got[1], cli_msg))

        # A missing input: the same message as the command line's.
        missing = os.path.join(tmp, "no-such.tfrecord")
        r = run([exe, "error", missing], env=env)
        cli = run([shardtool, "cat", missing])
        got = r.stdout.decode().splitlines()
        check(len(got) == 2 and got[1] == cli.stderr.decode().splitlines()[0][len("shardtool cat: "):],
              "missing input: %r vs %r" % (got, cli.stderr))

        # verify: the report's line is verify's, the damage its place.
        for path in [damaged, os.path.join(data, "tfrecord", "sequence", "events.tfrecord"),
                     os.path.join(data, "parquet", "alltypes_plain.parquet")]:
            r = run([exe, "verify", path], env=env)
            lines = r.stdout.decode().splitlines()
            cli = run([shardtool, "verify", path])
            check(r.returncode == 0 and lines and lines[-1] == cli.stdout.decode().strip(),
                  "verify %s: %r vs %r" % (path, lines[-1:], cli.stdout))
            if path == damaged:
                check("ok 0" in lines and "record 0" in lines and "offset 0" in lines and
                      "damage data crc" in lines, "damage of %s: %r" % (path, lines))

        payload_cases(exe, env, shardtool, a.source, tmp)
        stat_cases(exe, env, shardtool, data, tmp)
        manifest_cases(exe, env, shardtool, data, tmp)
        convert_cases(exe, env, shardtool, data, tmp)
        split_cases(exe, env, shardtool, data, tmp)
        format_option_cases(exe, env, shardtool, a.source, data, tmp)

        # Remote inputs (http://, served from tests/data here): the same records
        # and messages, where the build reads URLs.
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass
        handler = functools.partial(Quiet, directory=data)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            base = "http://127.0.0.1:%d/" % server.server_address[1]
            remote = [base + "tfrecord/sequence/events.tfrecord", base + "parquet/alltypes_plain.parquet"]
            local = [os.path.join(data, "tfrecord", "sequence", "events.tfrecord"),
                     os.path.join(data, "parquet", "alltypes_plain.parquet")]
            probe = run([shardtool, "cat", remote[0]])
            if b"built without remote" in probe.stderr:
                print("remote: this build has no remote support; skipped")
            else:
                out = os.path.join(tmp, "remote.tfrecord")
                r = run([exe, "records", out] + remote, env=env)
                check(r.returncode == 0, "records of %s: %s" % (remote, r.stderr.decode(errors="replace")))
                ours = run([shardtool, "cat", out]).stdout
                theirs = run([shardtool, "cat"] + local).stdout
                check(len(theirs) > 0 and ours == theirs, "remote records print as cat prints the local files")
                url = base + "tfrecord/corrupt/pets_examples.record"
                r = run([exe, "error", url], env=env)
                cli = run([shardtool, "cat", url]).stderr.decode().splitlines()
                got = r.stdout.decode().splitlines()
                check(len(got) == 2 and cli and got[1] == cli[0][len("shardtool cat: "):],
                      "damaged remote input: %r vs %r" % (got, cli[:1]))
                # A manifest over http: its shards are URLs beside it.
                class QuietServer(http.server.ThreadingHTTPServer):
                    def handle_error(self, request, client_address):
                        pass  # a reader that closes once it has what it needs (no Range here)
                served = QuietServer(("127.0.0.1", 0), functools.partial(Quiet, directory=tmp))
                threading.Thread(target=served.serve_forever, daemon=True).start()
                try:
                    url = "http://127.0.0.1:%d/good/x.manifest.json" % served.server_address[1]
                    files = compare_manifest(exe, env, shardtool, url, "a manifest over http")
                    check(len(files) == 3 and all(f[1] == "1" and f[0].startswith("http://") for f in files),
                          "manifest over http: %r" % files)
                finally:
                    served.shutdown()
                    served.server_close()
        finally:
            server.shutdown()
            server.server_close()

        # Batches packed into one buffer (shardtool_batch_pack), each array
        # checked against the batch's columns: FeatureLists and context
        # features (events, TFX's sequence split), ragged numeric features
        # padded (TFX's splits), bytes (mnist).
        tfx = os.path.join(data, "tfrecord", "tfx")
        for inputs, padded in (([os.path.join(data, "tfrecord", "sequence", "events.tfrecord")], True),
                               ([os.path.join(tfx, "tfrecord_sequence", "Split-eval", "data_tfrecord_eval.gz")], True),
                               ([os.path.join(tfx, "csv_example_gen", "Split-eval", "data_tfrecord-00000-of-00012.gz")],
                                True),
                               ([os.path.join(tfx, "mnist", "mnist.tfrecord")], False)):
            r = run([exe, "pack"] + inputs, env=env)
            out = r.stdout.decode(errors="replace")
            check(r.returncode == 0 and "pack: ok" in out and ", 0 batches" not in out and
                  (", 0 padded" not in out) == padded,
                  "pack %s: %s" % (inputs, out + r.stderr.decode(errors="replace")))
        r = run([exe, "misuse", os.path.join(data, "tfrecord", "sequence", "events.tfrecord")], env=env)
        check(r.returncode == 0 and b"misuse: ok" in r.stdout,
              "misuse: %s" % (r.stdout + r.stderr).decode(errors="replace"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failures" % len(failures), file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
