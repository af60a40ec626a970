#!/usr/bin/env python3
"""Checks the "Optional parts" that `meson setup` prints (summary() in the
top-level meson.build):

    python3 tests/build_summary.py BUILD_DIR

- every optional part (avro, parquet, remote, isal, cuda, python) is listed, YES or NO;
- every feature option of the build (meson introspect --buildoptions) but
  `tests` has its line, so a part added later is not left out;
- each answer is what the build was configured with: st_config.h's
  ST_HAVE_* for avro, parquet, remote and isal, and for cuda whether the GPU
  module is compiled with ST_HAVE_CUDA=1 (build.ninja): the module itself is
  always built, with a stub backend when nvcc is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys

PARTS = ("avro", "parquet", "remote", "isal", "cuda", "python", "jpeg", "png", "webp", "gif", "flac")


def summary_section(log_text, title):
    """The last "title" section of the setup output: {name: "YES"/"NO"}."""
    found = None
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == title:
            found = {}
            for entry in lines[i + 1:]:
                m = re.match(r"^\s+(\S+)\s*:\s*(\S+)", entry)
                if not m:
                    break
                found[m.group(1)] = m.group(2)
    return found


def configured(build):
    with open(os.path.join(build, "st_config.h"), encoding="utf-8") as f:
        config = f.read()
    have = {}
    for part, macro in (("avro", "ST_HAVE_AVRO"), ("parquet", "ST_HAVE_PARQUET"),
                        ("remote", "ST_HAVE_REMOTE"), ("isal", "ST_HAVE_ISAL"),
                        ("jpeg", "ST_HAVE_LIBJPEG"), ("png", "ST_HAVE_LIBPNG"),
                        ("webp", "ST_HAVE_LIBWEBP"), ("gif", "ST_HAVE_GIFLIB"),
                        ("flac", "ST_HAVE_LIBFLAC")):
        m = re.search(r"#define %s (\d)" % macro, config)
        have[part] = bool(m and m.group(1) == "1")
    with open(os.path.join(build, "build.ninja"), encoding="utf-8") as f:
        have["cuda"] = "-DST_HAVE_CUDA=1" in f.read()
    return have


def feature_options(build):
    meson = shutil.which("meson")
    if not meson:
        return None
    out = subprocess.run([meson, "introspect", "--buildoptions", build], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    # a feature option is a user combo of enabled / disabled / auto
    return sorted(o["name"] for o in json.loads(out.stdout)
                  if o.get("section") == "user" and o["name"] != "tests"
                  and sorted(o.get("choices") or []) == ["auto", "disabled", "enabled"])


def main():
    build = os.path.abspath(sys.argv[1])
    problems = []
    with open(os.path.join(build, "meson-logs", "meson-log.txt"), encoding="utf-8", errors="replace") as f:
        parts = summary_section(f.read(), "Optional parts")
    if parts is None:
        print("FAIL: meson setup prints no \"Optional parts\" summary")
        return 1
    for name in PARTS:
        if parts.get(name) not in ("YES", "NO"):
            problems.append(f"{name}: {parts.get(name)!r} in the summary, not YES or NO")
    options = feature_options(build)
    if options is None:
        print("note: meson introspect not available: the options are not compared")
    else:
        for name in options:
            if name not in parts:
                problems.append(f"feature option {name} has no line in the summary")
    for name, have in configured(build).items():
        want = "YES" if have else "NO"
        if parts.get(name) != want:
            problems.append(f"{name}: the summary says {parts.get(name)}, the build is configured {want}")
    for p in problems:
        print("FAIL:", p)
    if problems:
        return 1
    print("ok: optional parts " + ", ".join(f"{n} {parts[n]}" for n in PARTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
