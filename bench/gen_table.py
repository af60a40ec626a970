#!/usr/bin/env python3
"""Writes the benchmark table as CSV: ROWS rows x 13 columns (6 int, 4 float,
3 short strings), about 108 bytes a row; 2,000,000 rows make ~217 MB.
Deterministic (fixed seed), so runs are comparable.

    gen_table.py OUT.csv [ROWS]
"""
import random
import sys


def main():
    out, rows = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    rng = random.Random(20261122)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
             "india", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa"]
    header = ",".join([f"i{k}" for k in range(6)] + [f"f{k}" for k in range(4)] +
                      [f"s{k}" for k in range(3)])
    with open(out, "w", buffering=1 << 20) as f:
        f.write(header + "\n")
        lines = []
        for r in range(rows):
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
