#!/usr/bin/python3
"""Every CSV / TSV file of tests/data/csv read by the csv reader (all cells as
text, at several chunk sizes) must give exactly the rows and cells Python's
csv module gives (RFC 4180 as Python reads it, strict=False).  Files that
are not RFC 4180 (backslash escapes) are left out.

    csv_interop.py CSV_DUMP DATA_DIR
"""
import csv
import io
import json
import os
import subprocess
import sys

FILES = [
    # (path under DATA_DIR, format, delimiter)
    ("csv/csv-spectrum/comma_in_quotes.csv", "csv", ","),
    ("csv/csv-spectrum/empty.csv", "csv", ","),
    ("csv/csv-spectrum/empty_crlf.csv", "csv", ","),
    ("csv/csv-spectrum/escaped_quotes.csv", "csv", ","),
    ("csv/csv-spectrum/json.csv", "csv", ","),
    ("csv/csv-spectrum/newlines.csv", "csv", ","),
    ("csv/csv-spectrum/newlines_crlf.csv", "csv", ","),
    ("csv/csv-spectrum/quotes_and_newlines.csv", "csv", ","),
    ("csv/csv-spectrum/simple.csv", "csv", ","),
    ("csv/csv-spectrum/simple_crlf.csv", "csv", ","),
    ("csv/csv-spectrum/utf8.csv", "csv", ","),
    ("csv/duckdb/utf8bom.csv", "csv", ","),
    ("csv/duckdb/semicolon_quote.csv", "csv", ";"),
    ("csv/duckdb/web_page.csv", "csv", "|"),
    ("csv/duckdb/greek_utf8.csv", "csv", "|"),
    ("csv/duckdb/ncvoter.csv", "tsv", "\t"),
    ("csv/arrow-testing/aggregate_test_100.csv", "csv", ","),
    ("csv/tfx/chicago_taxi_data.csv", "csv", ","),
    ("csv/tfx/multi_line_string.csv", "csv", ","),
    ("csv/tfx/empty_column.csv", "csv", ","),
]


def python_rows(path, delim):
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delim))
    return [r for r in rows if r]  # blank lines: skipped by both


def main():
    dump, data_dir = sys.argv[1], sys.argv[2]
    failures = 0
    checked = 0
    for rel, fmt, delim in FILES:
        path = os.path.join(data_dir, rel)
        expect = python_rows(path, delim)
        for chunk in ("0", "1", "97"):
            out = subprocess.run([dump, fmt, delim, path, chunk], capture_output=True)
            if out.returncode != 0:
                print(f"FAIL {rel} chunk {chunk}: {out.stderr.decode(errors='replace')}")
                failures += 1
                continue
            got = [json.loads(line) for line in out.stdout.decode("utf-8").splitlines()]
            if got != expect:
                failures += 1
                for i, (g, e) in enumerate(zip(got, expect)):
                    if g != e:
                        print(f"FAIL {rel} chunk {chunk} row {i}: got {g!r} expected {e!r}")
                        break
                else:
                    print(f"FAIL {rel} chunk {chunk}: {len(got)} rows, expected {len(expect)}")
            checked += 1
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
