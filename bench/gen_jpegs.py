#!/usr/bin/python3
"""Writes the JPEGs of bench/verify_payloads.sh: DISTINCT real images made
with PIL (smooth gradients, shapes and noise of varying strength, 360-900
pixels a side, quality 80-95, some progressive), each 50-200 KB, then COUNT
records cycling through them into SHARDS TFRecord shards (feature
"image/encoded", and "image/format"), and the same images extracted to
files for jpeginfo.

    gen_jpegs.py OUT_DIR COUNT SHARDS DISTINCT
"""
import io
import os
import random
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
import example_shards  # noqa: E402


def one_image(rng):
    while True:
        w, h = rng.randint(360, 900), rng.randint(300, 700)
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        base = np.stack([
            128 + 100 * np.sin(x / rng.uniform(20, 200) + rng.uniform(0, 6)),
            128 + 100 * np.cos(y / rng.uniform(20, 200) + rng.uniform(0, 6)),
            128 + 100 * np.sin((x + y) / rng.uniform(30, 300)),
        ], axis=-1)
        noise = np.random.default_rng(rng.randint(0, 1 << 30)).normal(0, rng.uniform(4, 40), base.shape)
        pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
        out = io.BytesIO()
        Image.fromarray(pixels).save(out, "JPEG", quality=rng.randint(80, 95), progressive=rng.random() < 0.2)
        data = out.getvalue()
        if 50_000 <= len(data) <= 200_000:
            return data


def main():
    out, count, shards, distinct = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(20261129)
    images = [one_image(rng) for _ in range(distinct)]
    os.makedirs(os.path.join(out, "files"), exist_ok=True)
    per = (count + shards - 1) // shards
    for s in range(shards):
        idx = range(s * per, min(count, (s + 1) * per))
        example_shards.write_tfrecord(
            os.path.join(out, f"jpegs-{s:05d}-of-{shards:05d}.tfrecord"),
            ({"image/encoded": [images[i % distinct]], "image/format": [b"jpeg"]} for i in idx))
        for i in idx:
            with open(os.path.join(out, "files", f"{i:06d}.jpg"), "wb") as f:
                f.write(images[i % distinct])
    sizes = [len(d) for d in images]
    print(f"{count} JPEGs ({distinct} distinct, {min(sizes)}..{max(sizes)} bytes, "
          f"mean {sum(sizes) // len(sizes)}) in {shards} shards")


if __name__ == "__main__":
    main()
