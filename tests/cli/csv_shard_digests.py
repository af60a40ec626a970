#!/usr/bin/env python3
"""Converts the suite's CSV inputs, a file of CSV edge cases and the first
50,000 rows of the benchmark table to TFRecord shards, and prints one line
per conversion: its exit status and a SHA-256 over the shards, the manifest
and the messages (less the timing line).

    csv_shard_digests.py SHARDTOOL WORKDIR

The golden case convert_csv_shard_digests.case holds the lines a build of
the code before the CSV fast paths printed: the parser, number conversion,
Example encoder and feature statistics may get faster, never different.
Deterministic: the generated inputs come from fixed seeds.
"""
import glob
import hashlib
import os
import random
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def float_texts(rng, n):
    """Number texts that reach every branch of the float conversion: short
    and long mantissas, exponents, denormals, values around float32's limits,
    halfway cases, leading '+', and texts that are not fast-path numbers."""
    out = []
    for _ in range(n):
        pick = rng.getrandbits(4)
        sign = ["", "-", "+"][rng.getrandbits(2) % 3]
        if pick < 4:  # d.ddd with up to 19 digits
            ni = rng.getrandbits(3)
            nf = rng.getrandbits(4)
            i = "".join(str(rng.getrandbits(4) % 10) for _ in range(ni)) or "0"
            f = "".join(str(rng.getrandbits(4) % 10) for _ in range(nf))
            out.append(sign + i + ("." + f if f or pick == 1 else ""))
        elif pick < 7:  # the exact text of a random float32, and neighbours
            bits = rng.getrandbits(32) & 0x7F7FFFFF
            v = struct.unpack("<f", struct.pack("<I", bits))[0]
            out.append(sign + repr(v))
            out.append(sign + "%.9g" % v)
            out.append(sign + "%.17g" % v)
        elif pick < 9:  # halfway between two float32s
            bits = rng.getrandbits(31) & 0x7F7FFFFE
            a = struct.unpack("<f", struct.pack("<I", bits))[0]
            b = struct.unpack("<f", struct.pack("<I", bits + 1))[0]
            out.append(sign + "%.25g" % ((a + b) / 2))
        elif pick < 11:  # exponents
            m = rng.getrandbits(40)
            out.append("%s%de%d" % (sign, m, rng.randint(-60, 45)))
        elif pick == 11:  # denormals and float32's edges
            out.append(sign + rng.choice(["1e-45", "1.4e-45", "7e-46", "1.17549435e-38",
                                          "1.1754942e-38", "3.4028235e38", "3.4028236e38",
                                          "3.40282357e38", "1e39", "1e-50", "0.0", "-0",
                                          "0.000000000000000000001", "4.9e-324"]))
        elif pick == 12:  # long mantissas (more than 19 digits)
            out.append(sign + str(rng.getrandbits(80)) + "." + str(rng.getrandbits(30)))
        elif pick == 13:  # whole numbers near 2^24, 2^53, 2^63
            base = rng.choice([1 << 24, 1 << 53, 1 << 63, 10 ** 18, 10 ** 19])
            out.append(sign + str(base + rng.randint(-3, 3)))
        elif pick == 14:
            out.append(sign + rng.choice(["nan", "NaN", "inf", "Infinity", "-inf", "0x1p3",
                                          "0X1.8P1", "1.", ".5", "-.5", "1e5", "1E+5", "1e-5"]))
        else:  # leading zeros
            out.append(sign + "000" + str(rng.getrandbits(20)) + "." + "0" * rng.getrandbits(3) + "1")
    return out


def int_texts(rng, n):
    out = []
    for _ in range(n):
        pick = rng.getrandbits(3)
        if pick < 3:
            out.append(str(rng.getrandbits(rng.getrandbits(6) + 1) * rng.choice([1, -1])))
        elif pick == 3:
            out.append(rng.choice(["9223372036854775807", "-9223372036854775808",
                                   "+9223372036854775807", "0009223372036854775807",
                                   "-0", "+0", "00", "999999999999999999",
                                   "1000000000000000000", "-999999999999999999"]))
        elif pick == 4:
            out.append("+" + str(rng.getrandbits(30)))
        elif pick == 5:
            out.append("0" * rng.getrandbits(3) + str(rng.getrandbits(59)))
        else:
            out.append(str(rng.getrandbits(62) - (1 << 61)))
    return out


def write_edge_files(work):
    """Returns the paths of the generated edge-case inputs."""
    rng = random.Random(15008)
    paths = []

    # Numbers only: int64 and float columns that stay so (whole-file
    # inference keeps them), with empty cells and CRLF line ends mixed in.
    p = os.path.join(work, "numbers.csv")
    floats = float_texts(rng, 6000)
    ints = int_texts(rng, len(floats))
    good = [t for t in floats if re.fullmatch(r"[+-]?[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?", t)]
    ints = [t for t in ints if -(1 << 63) <= int(t) < (1 << 63)]
    with open(p, "w", newline="") as f:
        f.write("i,f,g,s\r\n")
        for k, t in enumerate(good):
            i = "" if k % 97 == 5 else ints[k % len(ints)]
            g = "" if k % 89 == 3 else t
            end = "\r\n" if k % 3 == 0 else "\n"
            f.write(f"{i},{t},{g},x{k % 7}{end}")
    paths.append(p)

    # Every float text (nan, inf, hex ...): a column of them.
    p = os.path.join(work, "float_texts.csv")
    with open(p, "w") as f:
        f.write("v,w\n")
        for k, t in enumerate(floats):
            f.write(f"{t},{k}\n")
    paths.append(p)

    # Ints at and past the int64 limits: past them the column is float.
    p = os.path.join(work, "int_limits.csv")
    with open(p, "w") as f:
        f.write("a,b,c\n")
        for k, t in enumerate(ints[:3000]):
            over = "9223372036854775808" if k == 1500 else t
            f.write(f"{t},{over},{'-' if k == 17 else t}\n")
    paths.append(p)

    # Quotes, escapes, quoted newlines, empty and quoted-empty fields, a huge
    # field, CRLF, a BOM, a last line without its newline.
    p = os.path.join(work, "quoted.csv")
    with open(p, "wb") as f:
        f.write(b'\xef\xbb\xbfname,n,x,text\r\n')
        for k in range(2500):
            q = k % 9
            if q == 0:
                row = b'"a ""quoted"" word",%d,%d.5,"line one\nline two"' % (k, k)
            elif q == 1:
                row = b'"",%d,,plain' % k
            elif q == 2:
                row = b'"%d",+%d,"%d.25",' % (k, k, k)
            elif q == 3:
                row = b'big,%d,1e%d,"%s"' % (k, k % 40, b"z" * (70000 if k == 3 else 300))
            elif q == 4:
                row = b'tab\there,-%d, 1.5 ,x' % k
            elif q == 5:
                row = b'x,%d,%d,"a,b"\r' % (k, k)
            else:
                row = b'w%d,%d,%d.%d,"""s"""' % (k, k, k, k)
            f.write(row + (b"\r\n" if k % 2 else b"\n"))
        f.write(b"last,1,2,3")
    paths.append(p)

    # The benchmark table, first 50,000 rows.
    p = os.path.join(work, "table-50000.csv")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_table.py"), p, "50000"],
                   check=True)
    paths.append(p)
    return paths


def digest(st, src, out_dir, extra, stdin=False):
    os.makedirs(out_dir)
    cmd = [st, "convert", "-" if stdin else src, "-o", os.path.join(out_dir, "x")] + extra
    with open(src, "rb") as f:
        proc = subprocess.run(cmd, stdin=f if stdin else subprocess.DEVNULL,
                              capture_output=True)
    h = hashlib.sha256()
    for name in sorted(os.listdir(out_dir)):
        h.update(name.encode() + b"\0")
        with open(os.path.join(out_dir, name), "rb") as f:
            data = f.read()
        if name.endswith(".json"):  # the manifest names the input and output
            data = data.replace(src.encode(), b"IN").replace(out_dir.encode(), b"OUT")
            # and records the input's size and time, which a checkout sets
            data = re.sub(rb',"input_files":\[[^\]]*\]', b"", data)
            # members added beside the first layout's (numbers as numbers,
            # plain feature names, kinds as a list): the digests stay those
            # of the first layout
            data = re.sub(rb',\s*"numbers":\s*\{[^}]*\}', b"", data)
            data = re.sub(rb',\s*"feature_name":\s*"(\\.|[^"\\])*",\s*"kinds":\s*\[[^\]]*\]', b"", data)
        h.update(data)
    err = re.sub(rb"in [0-9.]+ s \([0-9]+ records/s\)", b"", proc.stderr)
    err = err.replace(out_dir.encode(), b"OUT").replace(src.encode(), b"IN")
    h.update(b"\0stderr\0" + err)
    return proc.returncode, h.hexdigest()[:24]


def main():
    st, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    inputs = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.csv"), recursive=True))
    inputs += write_edge_files(os.path.join(work))
    variants = [
        ("shards3", ["--shards", "3", "--jobs", "2"], False),
        ("empty", ["--shards", "2", "--jobs", "1", "--empty", "empty"], False),
        ("stdin", ["--shards", "2", "--jobs", "2"], True),
    ]
    n = 0
    for src in inputs:
        rel = os.path.relpath(src, ROOT) if src.startswith(ROOT) else os.path.basename(src)
        for vname, extra, stdin in variants:
            n += 1
            rc, d = digest(st, src, os.path.join(work, "o%d" % n), extra, stdin)
            print(f"{rel} {vname}: exit {rc} {d}")


if __name__ == "__main__":
    main()
