#!/usr/bin/env python3
"""Writes the benchmark table as CSV: ROWS rows x 13 columns (6 int, 4 float,
3 short strings), about 108 bytes a row; 2,000,000 rows make ~217 MB.
Deterministic (fixed seed), so runs are comparable.

With --wide, 13 wider columns instead: 6 int64s over their whole range,
4 doubles at full precision (repr), 3 short strings; about 200 bytes a row.
Wide values compress worse, so more of the work is deflate's.

    gen_table.py [--wide] OUT.csv [ROWS]
"""
import random
import sys


def wide_row(rng, words):
    ints = [rng.randrange(-2**63, 2**63) for _ in range(6)]
    floats = [repr(rng.uniform(-1e9, 1e9)), repr(rng.random()), repr(rng.gauss(0, 1e6)),
              repr(rng.expovariate(1e-3))]
    strs = [rng.choice(words), rng.choice(words)[:3] + str(rng.randrange(1000)),
            "".join(rng.choice("abcdefghijklmnop") for _ in range(6))]
    return ",".join(map(str, ints)) + "," + ",".join(floats) + "," + ",".join(strs)


def main():
    args = sys.argv[1:]
    wide = args[:1] == ["--wide"]
    if wide:
        args = args[1:]
    out, rows = args[0], int(args[1]) if len(args) > 1 else 2_000_000
    rng = random.Random(20261122)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa"]
    header = ",".join([f"i{k}" for k in range(6)] + [f"f{k}" for k in range(4)] +
                      [f"s{k}" for k in range(3)])
    with open(out, "w", buffering=1 << 20) as f:
        f.write(header + "\n")
        lines = []
        for r in range(rows):
            if wide:
                lines.append(wide_row(rng, words))
                if len(lines) == 10000:
                    f.write("\n".join(lines) + "\n")
                    lines = []
                continue
            ints = [r, rng.randrange(1000), rng.randrange(-50000, 50000),
                    rng.randrange(10**9), rng.randrange(10**12), rng.randrange(7)]
            floats = [f"{rng.uniform(-1000, 1000):.4f}", f"{rng.random():.6f}",
                      f"{rng.uniform(0, 1e6):.2f}", f"{rng.gauss(0, 1):.5f}"]
            strs = [rng.choice(words), rng.choice(words) + "-" + str(rng.randrange(100)),
                    "".join(rng.choice("abcdefghij") for _ in range(8))]
            lines.append(",".join(map(str, ints)) + "," + ",".join(floats) + "," + ",".join(strs))
            if len(lines) == 10000:
                f.write("\n".join(lines) + "\n")
                lines = []
        if lines:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
