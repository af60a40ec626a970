#!/usr/bin/python3
"""Starts the test S3 server (s3rver) behind bench/delay_proxy.py, which
holds every request DELAY seconds and passes the answers back through the
kernel (splice), uploads SHARDS under s3://bench/set/, and runs
python_reader.py MODE over s3://bench/set/ through it: prints its line.

The tests put a SigV4-checking proxy written in Python in front of s3rver;
here it would copy every byte of the answers through Python on the cores
the reader runs on, and measure itself: the bench uses the lighter path
that bench/remote_latency.sh uses.

usage: python_reader_remote.py DELAY MODE SHARDS... [python_reader.py options]"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "remote"))
import rtest  # noqa: E402
import test_s3  # noqa: E402


def main():
    delay, mode = float(sys.argv[1]), sys.argv[2]
    args = sys.argv[3:]
    first_option = next((i for i, a in enumerate(args) if a.startswith("--")), len(args))
    shards, rest = args[:first_option], args[first_option:]
    s3bin = test_s3.s3rver_bin()
    if not s3bin:
        sys.exit("s3rver is not installed (npm ci in tests/remote)")
    tmp = tempfile.mkdtemp(prefix="st-bench-remote-")
    srv = test_s3.S3rver(s3bin, os.path.join(tmp, "s3rver"))
    port = rtest.free_port()
    delayed = subprocess.Popen([sys.executable, os.path.join(HERE, "delay_proxy.py"), str(port), str(srv.port),
                                str(delay * 1000)], stdout=subprocess.PIPE, text=True)
    try:
        if delayed.stdout.readline().strip() != "ready":
            sys.exit("delay_proxy.py did not start")
        srv.request("PUT", "/bench")
        for path in shards:
            with open(path, "rb") as f:
                st, _ = srv.request("PUT", "/bench/set/" + os.path.basename(path), body=f.read())
            if st != 200:
                sys.exit("cannot upload %s" % path)
        env = rtest.clean_env({"AWS_ACCESS_KEY_ID": test_s3.KEY, "AWS_SECRET_ACCESS_KEY": test_s3.SECRET,
                               "AWS_ENDPOINT_URL": "http://127.0.0.1:%d" % port})
        for k in ("SHARDTOOL_LIBRARY", "PYTHONPATH"):
            if k in os.environ:
                env[k] = os.environ[k]
        p = subprocess.run([sys.executable, "-W", "ignore", os.path.join(HERE, "python_reader.py"), mode,
                            "s3://bench/set/"] + rest, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(p.stderr[-2000:])
        print(p.stdout.strip())
    finally:
        delayed.terminate()
        delayed.wait()
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)  # the uploaded copy of the shards (hundreds of MB)


if __name__ == "__main__":
    main()
