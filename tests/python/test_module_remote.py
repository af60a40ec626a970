#!/usr/bin/python3
"""ShardDataset over s3:// through the test S3 server (s3rver behind the
SigV4-checking proxy) with a fault proxy in the path (503 with
Retry-After, 500, 429, bodies cut mid-way, reset connections): a
DataLoader with num_workers 0, 2 and 4 (workers forked after the parent
has used the remote module) gives, each epoch, exactly `shardtool cat`'s
multiset of the same shards read locally; a damaged object raises with its
URL.

usage: test_module_remote.py SHARDTOOL LIBSHARDTOOL"""

import os
import shutil
import sys
import tempfile

import pytest_support as ps
from pytest_support import check

EXE = os.path.abspath(sys.argv[1])
LIBRARY = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(ps.ROOT, "tests", "remote"))
import rtest  # noqa: E402
import servers  # noqa: E402
import test_s3  # noqa: E402

SCHEDULE = ["ok", "503", "ok", "cut", "ok", "ok", "reset", "ok", "500", "ok", "429", "ok", "ok"]


def main():
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        print("s3rver is not installed and cannot be (npm ci in tests/remote)")
        return rtest.SKIP
    tmp = tempfile.mkdtemp(prefix="st-python-remote-")
    started = []
    try:
        srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
        started.append(srv)
        sig = servers.SigV4Proxy(srv.port, {test_s3.KEY: test_s3.SECRET})
        started.append(sig)
        faults = servers.FaultProxy(sig.port, SCHEDULE, clean_first=3)
        started.append(faults)
        st, body = srv.request("PUT", "/test")
        if st != 200:
            raise rtest.Failure("cannot create the bucket: %d %s" % (st, body))
        env = rtest.clean_env({"AWS_ACCESS_KEY_ID": test_s3.KEY, "AWS_SECRET_ACCESS_KEY": test_s3.SECRET,
                               "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % faults.port})
        os.environ.clear()
        os.environ.update(env)
        os.environ["SHARDTOOL_LIBRARY"] = LIBRARY
        sys.path.insert(0, os.path.join(ps.ROOT, "python"))
        from torch.utils.data import DataLoader
        from shardtool.torch import ShardDataset
        # Under AddressSanitizer (tests/meson.build sets SHARDTOOL_TEST_START_METHOD):
        # DataLoader workers start from a fresh forkserver, since a fork of a
        # process whose other threads hold the sanitizer's allocator lock deadlocks.
        if os.environ.get("SHARDTOOL_TEST_START_METHOD"):
            import torch.multiprocessing
            torch.multiprocessing.set_start_method(os.environ["SHARDTOOL_TEST_START_METHOD"], force=True)

        import shardtool
        # Small ranges and few transfers: many requests meet the faults.
        remote = dict(parallel=3, chunk_size=64 << 10, retries=8)
        shardtool.configure_remote(**remote)
        try:
            shardtool.configure_remote(parallel=300)
            check(False, "parallel=300 is refused")
        except shardtool.Error as e:
            check(e.code_name == "EUSAGE" and "parallel" in str(e), "parallel=300 is refused: %s" % e)
        tool = ps.Tool(EXE, env)

        csv = os.path.join(tmp, "table.csv")
        with open(csv, "w") as f:
            f.write("id,text,value\n")
            for i in range(20000):
                f.write("%d,%s,%d\n" % (i, "x" * (i % 97), i * 3))
        sets = {}
        for label, extra in (("8", ["--shards", "8"]), ("gz", ["--shards", "2", "--compression", "gzip"])):
            d = os.path.join(tmp, "set-" + label)
            os.makedirs(d)
            tool.ok(["convert", "--to", "tfrecord", "-o", os.path.join(d, "train")] + extra + [csv])
            for name in sorted(os.listdir(d)):
                with open(os.path.join(d, name), "rb") as f:
                    st, body = srv.request("PUT", "/test/%s/%s" % (label, name), body=f.read())
                if st != 200:
                    raise rtest.Failure("cannot store %s: %d" % (name, st))
            sets[label] = d

        module_ranges = []
        for label, d in sets.items():
            want = ps.multiset(tool.cat_records([d]))
            url = "s3://test/%s/" % label
            # The prefix holds the manifest too: a side file, never an input.
            check(ps.multiset(tool.cat_records([url])) == want, "cat %s leaves the manifest out" % url)
            first_of_module = len(faults.ranges)
            ds = ShardDataset(url, decode=False, shuffle_shards=True, seed=2, remote=remote)
            for epoch, workers in enumerate((0, 2, 4)):
                ds.set_epoch(epoch)
                got = []
                for batch in DataLoader(ds, batch_size=64, num_workers=workers, collate_fn=list):
                    got.extend(batch)
                check(ps.multiset(got) == want, "%s, %d workers, epoch %d: cat's records (%d of %d)"
                      % (url, workers, epoch, len(got), sum(want.values())))
            module_ranges += faults.ranges[first_of_module:]
        check(any(f != "ok" for f in faults.seen), "faults happened on the way: %s" % sorted(set(faults.seen)))
        ranges = [r for r in module_ranges if r]
        check(ranges and all(int(r.split("-")[1]) - int(r.split("=")[1].split("-")[0]) + 1 <= 64 << 10
                             for r in ranges if "-" in r and r.split("-")[1]),
              "configure_remote's chunk size bounds every ranged read: %s" % ranges[:5])
        try:
            shardtool.configure_remote(parallel=4)
            check(False, "configure after the first read is refused")
        except shardtool.Error as e:
            check("before the first URL" in str(e), "configure after the first read is refused: %s" % e)

        # A damaged object raises with its URL.
        name = sorted(n for n in os.listdir(sets["8"]) if n.endswith(".tfrecord"))[3]
        data = bytearray(open(os.path.join(sets["8"], name), "rb").read())
        data[len(data) // 3] ^= 0x01
        srv.request("PUT", "/test/damaged/%s" % name, body=bytes(data))
        try:
            list(DataLoader(ShardDataset("s3://test/damaged/", decode=False), batch_size=8, num_workers=2,
                            collate_fn=list))
            check(False, "a damaged object raises")
        except Exception as e:
            check("s3://test/damaged/%s" % name in str(e) and "crc" in str(e),
                  "the error names the damaged object's URL and the crc: %s" % e)

        # shardtool.convert into s3:// (through the faults): the objects are
        # the shards the command line writes locally, byte for byte, and the
        # manifest is stored beside them.
        local = os.path.join(tmp, "local-convert")
        tool.ok(["convert", csv, "-o", os.path.join(local, "train"), "--shards", "3"])
        report = shardtool.convert([csv], "s3://test/converted/train", shards=3)
        check(report["records"] == 20000 and report["shards"] == 3, "convert to s3: %r" % report)
        for name in sorted(os.listdir(local)):
            if not name.endswith(".tfrecord"):
                continue
            st, body = srv.request("GET", "/test/converted/%s" % name)
            with open(os.path.join(local, name), "rb") as f:
                check(st == 200 and body == f.read(), "s3://test/converted/%s is the local shard" % name)
        st, body = srv.request("GET", "/test/converted/train.manifest.json")
        check(st == 200 and b'"shards"' in body, "the manifest is stored beside the shards: %d" % st)
    except rtest.Failure as e:
        check(False, str(e))
    finally:
        for s in reversed(started):
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return ps.finish("python-module-remote")


if __name__ == "__main__":
    sys.exit(main())
