#!/usr/bin/env python3
"""verify must catch every single-bit flip and every truncation.

Builds a small TFRecord file from a real TFX shard, then
  - flips every bit of it, one at a time: `verify` must exit 1 each time;
  - truncates it at every length: at a record boundary the shorter file is
    a valid TFRecord file (exit 0, fewer records); anywhere else `verify`
    must exit 1 and say "truncated";
  - does the truncations again through standard input, where the size is
    unknown and truncation is found at the end of the stream;
  - truncates a GZIP-compressed copy at every length: always exit 1.
Prints "N passed, M failed".
"""
import gzip
import os
import subprocess
import sys
import tempfile


def run(st, args, data=None, path=None):
    if path is not None:
        with open(path, "wb") as f:
            f.write(data)
        return subprocess.run([st, "verify", path] + args, capture_output=True, text=True)
    return subprocess.run([st, "verify", "-"] + args, input=data, capture_output=True)


def boundaries(data):
    """Offsets where records start (and the end)."""
    out, at = [0], 0
    while at < len(data):
        length = int.from_bytes(data[at:at + 8], "little")
        at += 16 + length
        out.append(at)
    return set(out)


def main():
    st, source = sys.argv[1], sys.argv[2]
    shard = os.path.join(source, "tests", "data", "tfrecord", "tfx", "penguin", "Split-eval",
                         "data_tfrecord-00000-of-00001.gz")
    small = subprocess.run([st, "cat", "-f", "tfrecord", "-n", "2", shard],
                           capture_output=True, check=True).stdout
    ok = bad = 0
    failures = []

    def expect(cond, what):
        nonlocal ok, bad
        if cond:
            ok += 1
        else:
            bad += 1
            if len(failures) < 20:
                failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "case.tfrecord")
        r = run(st, [], small, path)
        expect(r.returncode == 0 and "2 records" in r.stdout, f"intact file: {r.stdout}{r.stderr}")

        for bit in range(len(small) * 8):
            flipped = bytearray(small)
            flipped[bit // 8] ^= 1 << (bit % 8)
            r = run(st, [], bytes(flipped), path)
            expect(r.returncode == 1 and "DAMAGED" in r.stdout,
                   f"bit {bit}: exit {r.returncode}: {r.stdout.strip()}")

        cuts = boundaries(small)
        for length in range(len(small)):
            r = run(st, [], small[:length], path)
            if length in cuts:
                expect(r.returncode == 0, f"cut at boundary {length}: exit {r.returncode}")
            else:
                expect(r.returncode == 1 and "truncated" in r.stdout,
                       f"cut at {length}: exit {r.returncode}: {r.stdout.strip()}")

        for length in range(len(small)):
            r = run(st, [], small[:length])
            out = r.stdout.decode()
            if length in cuts:
                expect(r.returncode == 0, f"stdin cut at boundary {length}: exit {r.returncode}")
            else:
                expect(r.returncode == 1 and "truncated" in out,
                       f"stdin cut at {length}: exit {r.returncode}: {out.strip()}")

        packed = gzip.compress(small, mtime=0)
        gz_path = os.path.join(tmp, "case.tfrecord.gz")
        for length in range(1, len(packed)):
            r = run(st, [], packed[:length], gz_path)
            expect(r.returncode == 1, f"gzip cut at {length}: exit {r.returncode}: {r.stdout.strip()}")

        # Every CRC32C implementation this CPU runs (SHARDTOOL_CRC32C forces
        # one), on records long enough for the folding paths: the intact
        # file passes, and a flipped bit anywhere in a payload is caught with
        # the CRC that plain Python computes for the damaged bytes.
        sys.path.insert(0, os.path.join(source, "tests"))
        import tfrecord_frames
        payloads = [bytes((i * 7 + j) % 251 for j in range(n)) for i, n in enumerate((600, 4099, 70001))]
        big = b"".join(tfrecord_frames.frame(p) for p in payloads)
        big_path = os.path.join(tmp, "big.tfrecord")
        names = subprocess.run([st, "version"], capture_output=True, text=True).stdout
        impls = ["avx512-vpclmul", "avx2-vpclmul", "sse42-3way-clmul", "sse42", "armv8-crc", "slice8"]
        ran = []
        for impl in impls:
            env = dict(os.environ, SHARDTOOL_CRC32C=impl)
            v = subprocess.run([st, "version", "--json"], capture_output=True, text=True, env=env).stdout
            if '"crc32c": "%s"' % impl not in v:
                continue  # this CPU cannot run it
            ran.append(impl)
            with open(big_path, "wb") as f:
                f.write(big)
            r = subprocess.run([st, "verify", big_path], capture_output=True, text=True, env=env)
            expect(r.returncode == 0 and "3 records" in r.stdout, f"{impl}: intact: {r.stdout}{r.stderr}")
            start = (600 + 16) + (4099 + 16) + 12  # the third payload
            for at in (start, start + 1, start + 511, start + 4096 + 17, start + 70000):
                damaged = bytearray(big)
                damaged[at] ^= 0x10
                with open(big_path, "wb") as f:
                    f.write(damaged)
                r = subprocess.run([st, "verify", big_path], capture_output=True, text=True, env=env)
                computed = "computed 0x%08x" % tfrecord_frames.masked(
                    tfrecord_frames.crc32c(bytes(damaged[start:start + 70001])))
                expect(r.returncode == 1 and "record 2" in r.stdout and computed in r.stdout,
                       f"{impl}: flip at {at}: {r.stdout.strip()} (want {computed})")
        expect("slice8" in ran and len(ran) >= 2 or "crc32c: slice8" in names,
               f"SHARDTOOL_CRC32C forced these implementations: {ran}")

        # Files of 1 MiB and more are mapped, and lent to the reader in
        # windows of 8 MiB: records across a window's end, flipped bits and
        # cuts anywhere give the same verdict, record and offset as the same
        # file read with read(2) (SHARDTOOL_MMAP=0), and the CRC Python
        # computes.
        sizes = [(i * 7919) % 300000 + 1 for i in range(120)]
        frames = [tfrecord_frames.frame(bytes((i + j) % 253 for j in range(n))) for i, n in enumerate(sizes)]
        mapped = b"".join(frames)
        starts, at = [], 0
        for fr in frames:
            starts.append(at)
            at += len(fr)
        window = 8 << 20
        across = next(i for i, s0 in enumerate(starts) if s0 + len(frames[i]) > window)
        mapped_path = os.path.join(tmp, "mapped.tfrecord")

        def both(data, what):
            with open(mapped_path, "wb") as f:
                f.write(data)
            m = subprocess.run([st, "verify", "--jobs", "1", mapped_path], capture_output=True, text=True)
            r = subprocess.run([st, "verify", "--jobs", "1", mapped_path], capture_output=True, text=True,
                               env=dict(os.environ, SHARDTOOL_MMAP="0"))
            expect(m.stdout == r.stdout and m.returncode == r.returncode,
                   f"mapped {what}: mapped {m.returncode} {m.stdout.strip()} / read {r.returncode} {r.stdout.strip()}")
            return m

        m = both(mapped, "intact")
        expect(m.returncode == 0 and f"{len(frames)} records" in m.stdout, f"mapped intact: {m.stdout}{m.stderr}")
        for at in (5, starts[across] + 3, starts[across] + 12 + 1, window - 1, window, window + 1,
                   len(mapped) - 5):
            damaged = bytearray(mapped)
            damaged[at] ^= 0x01
            m = both(bytes(damaged), f"flip at {at}")
            expect(m.returncode == 1 and "DAMAGED" in m.stdout, f"mapped flip at {at}: {m.stdout.strip()}")
        i = across
        payload = mapped[starts[i] + 12:starts[i] + len(frames[i]) - 4]
        damaged = bytearray(mapped)
        damaged[window] ^= 0x40
        computed = "computed 0x%08x" % tfrecord_frames.masked(
            tfrecord_frames.crc32c(bytes(damaged[starts[i] + 12:starts[i] + 12 + len(payload)])))
        m = both(bytes(damaged), "flip in the record across the window")
        expect(f"record {i}, offset {starts[i]}" in m.stdout and computed in m.stdout,
               f"mapped: flip across the window: {m.stdout.strip()} (want record {i}, {computed})")
        for cut in (window - 3, window + 7, starts[across] + 11, len(mapped) - 1, (1 << 20) + 1):
            m = both(mapped[:cut], f"cut at {cut}")
            expect(m.returncode == 1 and "truncated" in m.stdout, f"mapped cut at {cut}: {m.stdout.strip()}")

        # A mapped file that another process truncates while verify reads
        # it (SIGBUS on the pages past its new end) is never a crash: verify
        # finishes first (OK), or says the file changed while being read
        # (or, cut before it opened the file, finds it truncated).
        import time
        for delay in (0.01, 0.03, 0.05, 0.08, 0.12, 0.2):
            with open(mapped_path, "wb") as f:
                f.write(mapped * 6)
            p = subprocess.Popen([st, "verify", "--jobs", "1", mapped_path], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
            os.truncate(mapped_path, len(mapped) // 3)
            out, errs = p.communicate()
            said = out + errs
            expect(p.returncode >= 0, f"truncated under verify after {delay} s: killed by signal {-p.returncode}")
            expect((p.returncode == 0 and "OK" in out) or "changed while being read" in said
                   or (p.returncode == 1 and "truncated" in out),
                   f"truncated under verify after {delay} s: exit {p.returncode}: {said.strip()}")

    for f in failures:
        print("FAIL " + f)
    print(f"{ok} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
