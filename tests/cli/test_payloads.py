#!/usr/bin/python3
"""verify --payloads against independent checkers, on real images and audio.

    test_payloads.py SHARDTOOL [SOURCE_DIR]

Real files are made here with Debian's tools (ImageMagick's convert, cwebp,
sox, flac), then damaged the ways real data sets are: truncation, a flipped
byte in the entropy-coded or compressed data, a bad PNG chunk CRC, a header
claiming 100,000 x 100,000 pixels, a truncated or flipped FLAC frame, a WAV
whose data size runs past the end.  Each file goes into a TFRecord shard,
one record per file (and into Parquet, through convert), and for every file
shardtool's verdict must equal the independent checker's:

    JPEG  jpeginfo -c     PNG   pngcheck      WebP  dwebp
    FLAC  flac -t         GIF   PIL (python3-pil, Image.load of every frame)
    WAV   python's wave module (the frames the header promises are there)

Known differences, by design, are listed in EXPECTED_DIFFERENCES: a header
claiming more pixels than --max-pixels is refused unread ("payload too
large") even where a checker that does not decode (pngcheck) accepts it.
Every damaged file must also be named: record, feature, value, offsets and
the decoder's message.
"""
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import wave
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import example_shards  # noqa: E402

ST = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "shardtool"
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(*args, ok=(0,), **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, **kw)
    if r.returncode not in ok:
        raise SystemExit(f"{' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr.decode(errors='replace')}")
    return r


def st(*args):
    return subprocess.run([ST, *map(str, args)], capture_output=True, text=True)


# ---- making the files ----------------------------------------------------------------

def make_files(d):
    """{name: bytes} of intact files, made by the tools."""
    def tool(*args):
        run(*args, cwd=d)

    tool("convert", "-seed", "7", "-size", "120x90", "plasma:fractal", "-quality", "85", "base.jpg")
    tool("convert", "-seed", "7", "-size", "97x61", "plasma:fractal", "-interlace", "Plane", "prog.jpg")
    tool("convert", "-seed", "7", "-size", "64x64", "gradient:white-black", "-colorspace", "Gray", "gray.jpg")
    # baseline scans of other MCU shapes: 4:4:4 (three blocks) and 4:2:2 (four)
    tool("convert", "-seed", "9", "-size", "75x53", "plasma:fractal", "-quality", "92", "-sampling-factor", "1x1",
         "base444.jpg")
    tool("convert", "-seed", "9", "-size", "75x53", "plasma:fractal", "-quality", "70", "-sampling-factor", "2x1",
         "base422.jpg")
    tool("convert", "-seed", "7", "-size", "120x90", "plasma:fractal", "base.png")
    tool("convert", "-seed", "7", "-size", "50x40", "plasma:fractal", "-interlace", "PNG", "inter.png")
    tool("convert", "-seed", "7", "-size", "33x17", "gradient:red-blue", "-depth", "16", "deep.png")
    tool("cwebp", "-quiet", "-q", "80", "base.png", "-o", "base.webp")
    tool("cwebp", "-quiet", "-lossless", "inter.png", "-o", "lossless.webp")
    tool("convert", "-seed", "7", "-delay", "10", "-size", "30x20", "xc:red", "xc:blue", "xc:green", "anim.gif")
    tool("convert", "-seed", "7", "-size", "40x30", "plasma:fractal", "still.gif")
    tool("sox", "-n", "-r", "22050", "-c", "2", "-b", "16", "base.wav", "synth", "1.0", "sine", "300")
    tool("sox", "-n", "-r", "16000", "-c", "1", "-b", "16", "short.wav", "synth", "0.25", "sine", "440")
    tool("flac", "-s", "-f", "base.wav", "-o", "base.flac")
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def entropy_start(jpeg):
    """The first byte after the (first) SOS header."""
    sos = jpeg.index(b"\xff\xda")
    return sos + 2 + (jpeg[sos + 2] << 8 | jpeg[sos + 3])


def flip(data, i):
    """data with byte i changed, never making or breaking a 0xFF (a marker)."""
    while data[i] == 0xFF or data[i - 1] == 0xFF or data[i] ^ 0x55 == 0xFF:
        i += 1
    return data[:i] + bytes([data[i] ^ 0x55]) + data[i + 1:]


def png_with_ihdr(png, width, height):
    b = bytearray(png)
    j = png.index(b"IHDR")
    b[j + 4:j + 12] = struct.pack(">II", width, height)
    b[j + 17:j + 21] = struct.pack(">I", zlib.crc32(bytes(b[j:j + 17])))
    return bytes(b)


def damage(files):
    """{name: bytes} of damaged files, each one way."""
    out = {}
    jpg = files["base.jpg"]
    out["trunc.jpg"] = jpg[:len(jpg) // 2]
    out["trunc-prog.jpg"] = files["prog.jpg"][:len(files["prog.jpg"]) * 2 // 3]
    start = entropy_start(jpg)
    # Flipped bytes through the entropy-coded data: some are caught (a bad
    # Huffman code), some decode to other pixels; jpeginfo decides.
    for k in range(12):
        out[f"flip{k:02d}.jpg"] = flip(jpg, start + (len(jpg) - 2 - start) * k // 12)
    for src in ("base444.jpg", "base422.jpg", "gray.jpg"):
        data, s0 = files[src], entropy_start(files[src])
        for k in range(8):
            out[f"flip{k:02d}-{src}"] = flip(data, s0 + (len(data) - 2 - s0) * k // 8)
        out[f"flip-last-{src}"] = flip(data, len(data) - 3)
    # The end of the entropy-coded data: bytes between it and EOI (one or
    # three: "extraneous bytes", or taken in by libjpeg's read-ahead;
    # jpeginfo decides), a 0xFF fill byte (allowed), the end cut short, EOI
    # missing, bytes after EOI (ignored).
    body = jpg[:-2]
    out["extra1-before-eoi.jpg"] = body + b"\x3c" + jpg[-2:]
    out["extra3-before-eoi.jpg"] = body + b"\x3c\x11\x7e" + jpg[-2:]
    out["extra9-before-eoi.jpg"] = body + bytes(range(1, 10)) + jpg[-2:]
    out["fill-before-eoi.jpg"] = body + b"\xff" + jpg[-2:]
    out["cut-tail.jpg"] = body[:-5] + jpg[-2:]
    out["cut-1-tail.jpg"] = body[:-1] + jpg[-2:]
    out["no-eoi.jpg"] = body
    out["after-eoi.jpg"] = jpg + b"\x00junk after the image"
    # A JPEG header cannot say 100,000: 65,500 x 65,500 is its largest.
    b = bytearray(jpg)
    sof = jpg.index(b"\xff\xc0")
    b[sof + 5:sof + 9] = struct.pack(">HH", 65500, 65500)
    out["huge.jpg"] = bytes(b)
    png = files["base.png"]
    i = png.index(b"IDAT")
    crc_at = i + 4 + struct.unpack(">I", png[i - 4:i])[0]
    out["badcrc.png"] = png[:crc_at] + bytes([png[crc_at] ^ 1]) + png[crc_at + 1:]
    out["trunc.png"] = png[:len(png) // 2]
    out["flip-idat.png"] = png[:i + 20] + bytes([png[i + 20] ^ 0x55]) + png[i + 21:]
    out["bomb.png"] = png_with_ihdr(png, 100000, 100000)
    webp = files["base.webp"]
    out["trunc.webp"] = webp[:len(webp) // 2]
    out["flip.webp"] = flip(webp, len(webp) // 2)
    gif = files["anim.gif"]
    out["trunc.gif"] = gif[:len(gif) - 12]
    flac = files["base.flac"]
    out["trunc.flac"] = flac[:len(flac) * 2 // 3]
    out["flip.flac"] = flip(flac, len(flac) * 2 // 3)
    wav = bytearray(files["base.wav"])
    j = wav.index(b"data")
    wav[j + 4:j + 8] = struct.pack("<I", struct.unpack("<I", wav[j + 4:j + 8])[0] + 4000)
    out["past-end.wav"] = bytes(wav)
    out["trunc.wav"] = files["short.wav"][:len(files["short.wav"]) - 1001]
    return out


# ---- the independent checkers ---------------------------------------------------------

def checker_verdict(name, data, d):
    """True when the independent checker finds the file intact."""
    path = os.path.join(d, "check-" + name)
    with open(path, "wb") as f:
        f.write(data)
    ext = name.rsplit(".", 1)[1]
    if ext == "jpg":
        # exit 1 for a warning (corrupt data worked around) as for an error
        return subprocess.run(["jpeginfo", "-c", path], capture_output=True).returncode == 0
    if ext == "png":
        return subprocess.run(["pngcheck", "-q", path], capture_output=True).returncode == 0
    if ext == "webp":
        return subprocess.run(["dwebp", "-quiet", path, "-o", os.devnull], capture_output=True).returncode == 0
    if ext == "flac":
        return subprocess.run(["flac", "-s", "-t", path], capture_output=True).returncode == 0
    if ext == "gif":
        from PIL import Image
        try:
            im = Image.open(io.BytesIO(data))
            for frame in range(getattr(im, "n_frames", 1)):
                im.seek(frame)
                im.load()
            return True
        except Exception:
            return False
    if ext == "wav":
        try:
            with wave.open(io.BytesIO(data)) as w:
                want = w.getnframes() * w.getsampwidth() * w.getnchannels()
                return len(w.readframes(w.getnframes())) == want
        except Exception:
            return False
    raise AssertionError(name)


# Files whose verdicts differ from the checker's by design: shardtool
# refuses a header of more than --max-pixels before decoding anything,
# pngcheck does not decode the image data and accepts it.
EXPECTED_DIFFERENCES = {"bomb.png": "pngcheck reads chunks, not pixels: it accepts a 100,000 x 100,000 "
                                    "header over 120 x 90 pixels of data"}


# ---- the shards --------------------------------------------------------------------------

def feature_for(name):
    ext = name.rsplit(".", 1)[1]
    return "audio" if ext in ("wav", "flac") else "image"


def write_shard(path, items):
    """items: [(name, bytes)], one record each; returns the record offsets."""
    return example_shards.write_tfrecord(path, ({feature_for(n): [data], "name": [n.encode()]} for n, data in items))


def verify_json(*args):
    r = st("verify", "--json", *args)
    check(r.returncode in (0, 1), f"verify {args}: exit {r.returncode}: {r.stderr}")
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, {"files": []}


def failures_by_record(doc):
    out = {}
    for f in doc["files"]:
        for fail in f.get("payloads", {}).get("failures", []):
            out.setdefault(fail["record"], fail)
    return out


def test_verdicts(work, files, damaged):
    items = sorted(files.items()) + sorted(damaged.items())
    shard = os.path.join(work, "all.tfrecord")
    offsets = write_shard(shard, items)
    r, doc = verify_json("--payloads", shard)
    check(r.returncode == 1, f"verify --payloads of damaged payloads: exit {r.returncode}, want 1")
    bad = failures_by_record(doc)
    payloads = doc["files"][0]["payloads"] if doc["files"] else {"payloads": 0, "not_checked": {}}
    check(payloads["payloads"] == len(items), f"{payloads['payloads']} payloads counted, {len(items)} in the shard")
    check(not payloads["not_checked"], f"values not checked: {payloads['not_checked']}")
    mismatches = []
    for index, (name, data) in enumerate(items):
        theirs = checker_verdict(name, data, work)
        ours = index not in bad
        if ours != theirs and name not in EXPECTED_DIFFERENCES:
            mismatches.append(f"{name}: shardtool says {'intact' if ours else 'bad'}, the checker "
                              f"{'intact' if theirs else 'bad'} ({bad.get(index, {}).get('message')})")
        if name in EXPECTED_DIFFERENCES:
            check(not ours, f"{name}: not refused ({EXPECTED_DIFFERENCES[name]})")
        if not ours:
            f = bad[index]
            check(f["feature"] == feature_for(name) and f["value"] == 0,
                  f"{name}: named feature {f['feature']!r} value {f['value']}")
            check(f["record_offset"] == offsets[index], f"{name}: record offset {f.get('record_offset')}, "
                  f"the record is at {offsets[index]}")
            # the value's first byte: the record's payload holds it in place
            want = offsets[index] + 12 + example_shards.example(
                {feature_for(name): [data], "name": [name.encode()]}).index(data)
            check(f.get("value_offset") == want, f"{name}: value offset {f.get('value_offset')}, want {want}")
            check(f["message"], f"{name}: no decoder message")
    for m in mismatches:
        check(False, m)
    # every intact file made by the tools is intact for us
    for index, (name, _) in enumerate(items):
        if name in files:
            check(index not in bad, f"intact {name} reported bad: {bad.get(index)}")
    # the damage is named as the decoders name it
    by_name = {items[i][0]: f for i, f in bad.items()}
    expect_words = {
        "trunc.jpg": "Premature end of JPEG file",
        "badcrc.png": "CRC",
        "trunc.png": "truncated",
        "bomb.png": "100000x100000",
        "huge.jpg": "65500x65500",
        "trunc.webp": "not enough data",
        "past-end.wav": "'data' chunk says",
        "trunc.wav": "truncated",
        "trunc.gif": "Failed to read",
        "trunc.flac": "",
    }
    for name, words in expect_words.items():
        f = by_name.get(name)
        check(f is not None, f"{name}: not reported")
        if f:
            check(words in f["message"], f"{name}: message {f['message']!r} lacks {words!r}")
    for name in ("bomb.png", "huge.jpg"):
        f = by_name.get(name)
        check(f and f["failure"] == "payload too large", f"{name}: {f and f['failure']}, want payload too large")
    # the text report: the first on the file's line, then one line each
    r = st("verify", "--payloads", shard)
    lines = [ln for ln in r.stdout.splitlines() if ": DAMAGED: " in ln]
    check(len(lines) == len(bad), f"{len(lines)} DAMAGED lines for {len(bad)} bad payloads:\n{r.stdout}")
    first = min(bad) if bad else -1
    check(lines and f"at record {first}, offset {offsets[first]} (feature '{feature_for(items[first][0])}' value 0"
          in lines[0], f"first line: {lines[:1]}")
    print(f"ok: {len(items)} files, {len(bad)} bad; verdicts equal the checkers' "
          f"(known differences: {', '.join(EXPECTED_DIFFERENCES)})")
    return items, bad


def test_parquet(work, items, bad):
    shard = os.path.join(work, "all.tfrecord")
    prefix = os.path.join(work, "pq", "all")
    r = st("convert", "-q", shard, "--to", "parquet", "-o", prefix, "--shards", "1")
    check(r.returncode == 0, f"convert to parquet: {r.stderr}")
    r, doc = verify_json("--payloads", prefix + "-00000-of-00001.parquet")
    check(r.returncode == 1, f"parquet: exit {r.returncode}")
    got = failures_by_record(doc)
    check(sorted(got) == sorted(bad), f"parquet: bad records {sorted(got)}, TFRecord {sorted(bad)}")
    check(all("record_offset" not in f for f in got.values()), "parquet records have no offsets")
    text = st("verify", "--payloads", prefix + "-00000-of-00001.parquet").stdout
    check(bad and f"at record {min(bad)} (feature" in text, f"parquet text line: {text.splitlines()[:1]}")
    print("ok: the same bad records through Parquet")


def test_headers(work, files, damaged):
    items = sorted(damaged.items())
    shard = os.path.join(work, "damaged.tfrecord")
    write_shard(shard, items)
    _, full = verify_json("--payloads", shard)
    _, heads = verify_json("--payloads=headers", shard)
    full_bad = {items[i][0] for i in failures_by_record(full)}
    head_bad = {items[i][0] for i in failures_by_record(heads)}
    check(head_bad <= full_bad, f"headers found {head_bad - full_bad}, which full decoding did not")
    check({"bomb.png", "huge.jpg"} <= head_bad, f"headers mode misses the oversized headers: {head_bad}")
    check("trunc.jpg" not in head_bad, "headers mode decoded the image data")
    check("past-end.wav" in head_bad, "a WAV's sizes are its header")
    # the sizes a header says
    shard = os.path.join(work, "good.tfrecord")
    write_shard(shard, sorted(files.items()))
    r = st("verify", "--payloads=headers", shard)
    check(r.returncode == 0, f"headers of intact files: exit {r.returncode}: {r.stdout}")
    print("ok: --payloads=headers")


def test_limits_and_notes(work, files):
    shard = os.path.join(work, "jpegs.tfrecord")
    example_shards.write_tfrecord(shard, [{"image.jpg": [files["base.jpg"]]}, {"image.jpg": [files["gray.jpg"]]},
                                          {"image.jpg": [files["base.png"]]}, {"image.jpg": [b"", b"not an image"]}])
    r = st("verify", "--payloads", shard)
    check(r.returncode == 0, f"notes are not damage: exit {r.returncode}\n{r.stdout}")
    check("mixes kinds: 2 jpeg, 1 png (the first not jpeg: record 2" in r.stdout, f"mixed kinds note:\n{r.stdout}")
    check("is named for jpeg but 1 value is not (the first: record 2" in r.stdout, f"extension note:\n{r.stdout}")
    check("holds 1 value that is no image or audio" in r.stdout and "record 3" in r.stdout,
          f"no-magic note:\n{r.stdout}")
    check("3 payloads: 2 jpeg, 1 png" in r.stdout, f"summary:\n{r.stdout}")
    r = st("verify", "--payloads", "--max-pixels", "5000", shard)
    check(r.returncode == 1 and "payload too large" in r.stdout and "more than --max-pixels 5000" in r.stdout,
          f"--max-pixels 5000: exit {r.returncode}\n{r.stdout}")
    check("120x90 = 10800 pixels" in r.stdout, f"--max-pixels message:\n{r.stdout}")
    r = st("verify", "--max-pixels", "5000", shard)
    check(r.returncode == 2 and "--max-pixels needs --payloads" in r.stderr, f"--max-pixels alone: {r.stderr}")
    r = st("verify", "--payloads=everything", shard)
    check(r.returncode == 2 and "not one of" in r.stderr, f"--payloads=everything: {r.stderr}")
    # a bare --payloads does not take the next argument as its value
    r = st("verify", "--payloads", shard, shard)
    check(r.returncode == 0 and r.stdout.count("OK (tfrecord") == 2, f"--payloads FILE FILE:\n{r.stdout}{r.stderr}")
    r = st("verify", "-j", "1", "--payloads", shard)
    check(r.returncode == 0, f"-j 1: exit {r.returncode}")
    print("ok: --max-pixels, notes, option forms")


def test_convert(work, items, bad):
    shard = os.path.join(work, "all.tfrecord")
    first = min(bad) if bad else -1
    r = st("convert", shard, "--check-payloads", "-o", os.path.join(work, "refused", "x"))
    check(r.returncode == 1, f"convert --check-payloads: exit {r.returncode}, want 1")
    check(f"all.tfrecord: record {first} at offset" in r.stderr and "bad payload: feature" in r.stderr
          and "--skip-corrupt" in r.stderr, f"convert's refusal: {r.stderr}")
    check(not os.path.exists(os.path.join(work, "refused")) or
          not [n for n in os.listdir(os.path.join(work, "refused")) if n.endswith(".tfrecord")],
          "a refused convert left shards")
    names_kept = sorted(n for i, (n, _) in enumerate(items) if i not in bad)
    for to in ("tfrecord", "parquet"):
        prefix = os.path.join(work, "kept-" + to, "x")
        r = st("convert", shard, "--check-payloads", "--skip-corrupt", "--to", to, "-o", prefix, "--shards", "2")
        check(r.returncode == 0, f"--skip-corrupt --to {to}: exit {r.returncode}: {r.stderr}")
        check(f"skipped {len(bad)} records with a bad payload" in r.stderr, f"--to {to}: summary {r.stderr}")
        with open(prefix + ".manifest.json") as f:
            manifest = json.load(f)
        skipped = manifest.get("skipped", {})
        listed = skipped.get("listed", [])
        check(skipped.get("count") == len(bad) and [e["index"] for e in listed] == sorted(bad),
              f"--to {to}: manifest lists {[e['index'] for e in listed]}, bad records are {sorted(bad)}")
        check(all(e["path"].endswith("all.tfrecord") and e["error"] for e in listed), f"--to {to}: {listed[:2]}")
        offsets = example_shards_offsets(items)
        check(all(e["offset"] == offsets[e["index"]] for e in listed), f"--to {to}: skipped offsets {listed[:3]}")
        outputs = sorted(os.path.join(os.path.dirname(prefix), n) for n in os.listdir(os.path.dirname(prefix))
                         if n.endswith("." + to))
        r = st("verify", "--payloads", *outputs)
        check(r.returncode == 0, f"--to {to}: the kept records do not verify:\n{r.stdout}")
        r = st("cat", *outputs)
        got = sorted(json.loads(line)["name"][0] for line in r.stdout.splitlines())
        check(got == names_kept, f"--to {to}: kept {len(got)} records, want {len(names_kept)}")
    # only the columns written are checked
    r = st("convert", "-q", shard, "--check-payloads", "--exclude", "image,audio", "-o",
           os.path.join(work, "names-only", "x"))
    check(r.returncode == 0, f"--check-payloads --exclude image,audio: exit {r.returncode}: {r.stderr}")
    r = st("convert", shard, "--skip-corrupt", "-o", os.path.join(work, "usage", "x"))
    check(r.returncode == 2 and "--skip-corrupt needs --check-payloads" in r.stderr, f"--skip-corrupt alone: {r.stderr}")
    print("ok: convert --check-payloads refuses, --skip-corrupt leaves out and lists exactly the bad records")


def test_stat(work, files):
    """stat's payload columns against identify (ImageMagick), PIL and soxi."""
    from collections import Counter
    from PIL import Image
    made = os.path.join(work, "made")
    images = [n for n in sorted(files) if n.rsplit(".", 1)[1] in ("jpg", "png", "webp")]
    gifs = [n for n in sorted(files) if n.endswith(".gif")]
    audio = [n for n in sorted(files) if n.rsplit(".", 1)[1] in ("wav", "flac")]
    records = [{"image": [files[n]]} for n in images] + [{"anim": [files[n]]} for n in gifs] + \
        [{"audio": [files[n]]} for n in audio]
    shard = os.path.join(work, "stat.tfrecord")
    example_shards.write_tfrecord(shard, records)
    r = st("stat", "--json", shard)
    check(r.returncode == 0, f"stat: exit {r.returncode}: {r.stderr}")
    cols = json.loads(r.stdout)["files"][0].get("payload_columns", {})
    total = json.loads(r.stdout)["total"].get("payload_columns", {})
    check(cols == total, "one file: its payload columns are the total's")

    def identify(name):
        out = run("identify", "-format", "%w %h %z\n", os.path.join(made, name)).stdout.decode().split("\n")[0]
        return tuple(int(x) for x in out.split())

    seen = {n: identify(n) for n in images + gifs}
    img = cols.get("image", {})
    want_kinds = Counter({"jpg": "jpeg", "png": "png", "webp": "webp"}[n.rsplit(".", 1)[1]] for n in images)
    check(img.get("kinds") == dict(want_kinds), f"image kinds {img.get('kinds')}, want {dict(want_kinds)}")
    ws = [seen[n][0] for n in images]
    hs = [seen[n][1] for n in images]
    check(img.get("width") == {"min": min(ws), "max": max(ws)} and img.get("height") == {"min": min(hs), "max": max(hs)},
          f"image ranges {img.get('width')} {img.get('height')}, identify says {min(ws)}..{max(ws)} x {min(hs)}..{max(hs)}")
    sizes = Counter((seen[n][0], seen[n][1]) for n in images)
    want_common = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0][0] << 32 | kv[0][1]))[:5]
    got_common = [((c["width"], c["height"]), c["count"]) for c in img.get("common_sizes", [])]
    check(got_common == want_common, f"common sizes {got_common}, identify: {want_common}")
    depths = Counter(str(seen[n][2]) for n in images)
    check(img.get("bit_depths") == dict(depths), f"bit depths {img.get('bit_depths')}, identify: {dict(depths)}")
    bands = Counter(str(len(Image.open(os.path.join(made, n)).getbands())) for n in images)
    check(img.get("channels") == dict(bands), f"channels {img.get('channels')}, PIL: {dict(bands)}")
    anim = cols.get("anim", {})
    check(anim.get("kinds") == {"gif": len(gifs)}, f"gif column {anim}")
    aud = cols.get("audio", {})

    def soxi(flag, name):
        return run("soxi", flag, os.path.join(made, name)).stdout.decode().strip()

    rates = Counter(soxi("-r", n) for n in audio)
    check(aud.get("sample_rates") == dict(rates), f"sample rates {aud.get('sample_rates')}, soxi: {dict(rates)}")
    chans = Counter(soxi("-c", n) for n in audio)
    check(aud.get("audio_channels") == dict(chans), f"audio channels {aud.get('audio_channels')}, soxi: {dict(chans)}")
    secs = [int(soxi("-s", n)) / int(soxi("-r", n)) for n in audio]
    got = aud.get("seconds", {})
    check(abs(got.get("min", -1) - min(secs)) < 1e-6 and abs(got.get("max", -1) - max(secs)) < 1e-6 and
          abs(got.get("mean", -1) - sum(secs) / len(secs)) < 1e-6, f"durations {got}, soxi: {secs}")
    text = st("stat", shard).stdout
    check("payloads (from their headers" in text and "most common" in text and " Hz (" in text,
          f"stat's text:\n{text}")
    # a column without payloads gets no description
    plain = os.path.join(work, "plain.tfrecord")
    example_shards.write_tfrecord(plain, [{"text": [b"hello"]}])
    r = st("stat", "--json", plain)
    check("payload_columns" not in r.stdout and "payloads (" not in st("stat", plain).stdout,
          "stat describes payloads where there are none")
    print("ok: stat's payload columns agree with identify, PIL and soxi")


def example_shards_offsets(items):
    offsets, at = [], 0
    for name, data in items:
        offsets.append(at)
        at += len(example_shards.frame(example_shards.example({feature_for(name): [data], "name": [name.encode()]})))
    return offsets


def main():
    for tool in ("convert", "identify", "cwebp", "sox", "soxi", "flac", "jpeginfo", "pngcheck", "dwebp"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (.ci/install-deps installs it)")
            return 77
    with tempfile.TemporaryDirectory() as work:
        made = os.path.join(work, "made")
        os.mkdir(made)
        files = make_files(made)
        damaged = damage(files)
        items, bad = test_verdicts(work, files, damaged)
        test_parquet(work, items, bad)
        test_convert(work, items, bad)
        test_headers(work, files, damaged)
        test_limits_and_notes(work, files)
        test_stat(work, files)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
