#!/usr/bin/env python3
"""Checks that what the man pages (man/*.1 and man/*.3) and --help refer to exists.

    test_man_refs.py SHARDTOOL SOURCE_ROOT

  - every --option a man page mentions is an option of some command (from
    `shardtool --dump-options`), or of the other program it is written
    beside (curl --retry, sbatch --array, ...: OTHER_PROGRAMS);
  - every --option a command's --help mentions is one of that command's;
  - every shardtool-X(1) names a page in man/, and no page names itself so
    (a page says "below" or "above", not "see shardtool-convert(1)", of its
    own sections);
  - every section a page sends the reader to ("see NESTED DATA", "FLOAT
    NARROWING in shardtool-convert(1)", "Parquet nesting below") is a
    section (.SH or .SS) of that page, and "above" / "below" point the
    right way;
  - no ENVIRONMENT variable is described twice in one page;
  - a few statements the binary can check: convert's EXIT STATUS and
    "-o DIR/", the README and --nested's default, and shardtool-version(1)'s
    example output and --json members against `shardtool version`.

Then it checks itself: each rule must catch a page broken on purpose.
Prints the problems and exits 1 when there are any.
"""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_docs import load_table, roff_plain  # noqa: E402

# Options of other programs that the pages show in commands or comparisons.
OTHER_PROGRAMS = {
    "sbatch": {"array", "wait", "output", "cpus-per-task", "mem", "time", "job-name", "parsable",
               "nodes", "ntasks"},
    "parallel": {"jobs", "halt", "joblog", "retries", "resume", "resume-failed", "bar", "tag",
                 "line-buffer"},
    "curl": {"retry", "speed-time", "speed-limit", "connect-timeout", "max-time", "fail", "insecure",
             "cacert"},
    "jq": {"slurp", "raw-output", "compact-output", "exit-status", "arg"},
    "kubectl": {"for", "timeout", "filename"},
    "gzip": {"stdout", "decompress", "no-name", "keep", "best", "fast"},
    "aws": {"endpoint-url", "no-sign-request", "recursive"},
    "meson": {"buildtype", "prefix", "wipe", "print-errorlogs", "list", "num-processes"},
    "python": {"version"},
    "pkg-config": {"cflags", "libs"},
    "tar": {"create", "extract"},
    "shardtool": {"help", "version", "dump-options"},
}


def plain_lines(source):
    """(plain text of the whole page with macros turned into words,
    [(line number, plain text)]) so that references split over macro
    lines ("see\\n.B NESTED DATA") read as one phrase."""
    out = []
    for n, line in enumerate(source.splitlines(), 1):
        if line.startswith('.\\"'):
            continue
        text = roff_plain(line)
        if text.startswith((".", "'")):
            head, _, rest = text.partition(" ")
            if head in (".SH", ".SS"):
                text = ""
            elif head in (".BR", ".RB", ".IR", ".RI", ".BI", ".IB"):
                # alternating fonts: the words are written without spaces
                text = "".join(w.strip('"') for w in re.findall(r'"[^"]*"|\S+', rest))
            else:
                text = rest.replace('"', "")
        out.append((n, text))
    return out


def section_lines(source):
    """{section name: line number} of .SH and .SS headings."""
    out = {}
    for n, line in enumerate(source.splitlines(), 1):
        if line.startswith((".SH", ".SS")):
            out.setdefault(line[3:].strip().strip('"'), n)
    return out


def joined(lines):
    """The page as one string, and for each character its source line."""
    text, where = [], []
    for n, t in lines:
        text.append(t + " ")
        where.extend([n] * (len(t) + 1))
    return "".join(text), where


def check_options(page, lines, all_options, problems):
    text, where = joined(lines)
    other = set().union(*OTHER_PROGRAMS.values())
    for m in re.finditer(r"(?<![\w/.-])--([a-z0-9][a-z0-9-]*[a-z0-9])", text):
        name = m.group(1)
        if name in all_options or name in other:
            continue
        problems.append(f"{page}:{where[m.start()]}: --{name} is no option of any command")


def check_page_refs(page, lines, pages, problems):
    own = page[:-2]  # shardtool-convert
    text, where = joined(lines)
    for m in re.finditer(r"\b(shardtool(?:-[a-z]+)?)\((\d)\)", text):
        name = m.group(1)
        if name not in pages:
            problems.append(f"{page}:{where[m.start()]}: {name}({m.group(2)}) is no page in man/")
        elif name == own:
            problems.append(f"{page}:{where[m.start()]}: refers to itself as {name}(1); "
                            "say which section, above or below")


def check_section_refs(page, source, lines, pages_sections, problems):
    own = pages_sections[page[:-2]]
    text, where = joined(lines)
    names = sorted({s for secs in pages_sections.values() for s in secs}, key=len, reverse=True)
    upper = [s for s in names if s.upper() == s and len(s) > 3]
    # "see NAME", "(see NAME", "see NAME in shardtool-X(1)", "NAME above/below"
    pattern = re.compile(r"\b[Ss]ee\s+(?:the\s+)?([A-Z][A-Za-z0-9 ,'&/-]*)")
    for m in pattern.finditer(text):
        phrase = m.group(1)
        line = where[m.start()]
        hit = next((s for s in names if phrase.startswith(s) and
                    (len(phrase) == len(s) or not phrase[len(s)].isalnum())), None)
        if hit is None:
            # An all-capitals phrase is a section name by this project's custom.
            caps = re.match(r"([A-Z][A-Z0-9]+(?: [A-Z][A-Z0-9]+)*)\b", phrase)
            if caps and len(caps.group(1)) > 3 and caps.group(1) not in ("CSV", "TSV", "JSON", "HTTP",
                                                                        "GZIP", "ZLIB", "DALI"):
                problems.append(f"{page}:{line}: 'see {caps.group(1)}' names no section")
            continue
        rest = text[m.start(1) + len(hit):m.start(1) + len(hit) + 40]
        target = re.match(r"\s*(?:in|of)\s+(shardtool(?:-[a-z]+)?)\(1\)", rest)
        secs = pages_sections.get(target.group(1)) if target else own
        if secs is None:
            continue
        if hit not in secs:
            where_to = target.group(1) if target else page[:-2]
            problems.append(f"{page}:{line}: 'see {hit}': {where_to}(1) has no such section")
            continue
        direction = re.match(r"\s*(above|below)\b", rest)
        if direction and not target:
            at = secs[hit]
            if (direction.group(1) == "above") != (at < line):
                problems.append(f"{page}:{line}: '{hit} {direction.group(1)}', but the section is "
                                f"at line {at}, {'below' if at > line else 'above'}")
    # Bare "NAME above" / "NAME below" of a section of this page.
    for s in upper:
        for m in re.finditer(re.escape(s) + r"\s+(above|below)\b", text):
            if s not in own:
                continue
            line, at = where[m.start()], own[s]
            if (m.group(1) == "above") != (at < line):
                problems.append(f"{page}:{line}: '{s} {m.group(1)}', but the section is at line {at}")


def check_environment(page, source, problems):
    seen = {}
    in_env = False
    prev_tp = False
    for n, line in enumerate(source.splitlines(), 1):
        if line.startswith(".SH"):
            in_env = "ENVIRONMENT" in line
        elif in_env and prev_tp:
            for name in re.findall(r"\b[A-Z][A-Z0-9_]{2,}\b", roff_plain(line)):
                if name in seen:
                    problems.append(f"{page}:{n}: {name} is described twice in ENVIRONMENT "
                                    f"(also line {seen[name]})")
                seen.setdefault(name, n)
        prev_tp = in_env and line.startswith(".TP")


def check_help(binary, table, all_options, problems):
    other = set().union(*OTHER_PROGRAMS.values())
    for cmd, options in table.items():
        out = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True,
                             env=dict(os.environ, COLUMNS="1000"), timeout=60).stdout
        commands = "|".join(re.escape(c) for c in table if c != cmd)
        for m in re.finditer(r"(?<![\w/.-])--([a-z0-9][a-z0-9-]*[a-z0-9])", out):
            name = m.group(1)
            if name in options or name == "help":
                continue
            # "`convert --task I/N`": another command's option, named with it
            line_start = out.rfind("\n", 0, m.start()) + 1
            before = out[max(line_start, m.start() - 60):m.start()]
            if re.search(r"\b(" + commands + r")\b", before) or (name == "version" and "shardtool" in before):
                continue
            if name in all_options or name in other:
                problems.append(f"{cmd} --help: mentions --{name}, which {cmd} does not have")
            else:
                problems.append(f"{cmd} --help: mentions --{name}, which no command has")


def check_claims(binary, root, sources, problems):
    """Statements that the tool itself can confirm or refute."""
    import tempfile
    # "-o DIR/" names a directory (a note says so); EXIT STATUS must not call it a usage error.
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "a.csv"), "w") as f:
            f.write("x\n1\n")
        r = subprocess.run([binary, "convert", "-q", os.path.join(tmp, "a.csv"), "-o",
                            os.path.join(tmp, "dir") + "/"], capture_output=True, timeout=60)
    status = sections_plain(sources.get("shardtool-convert.1", ""), "EXIT STATUS")
    if r.returncode == 0 and re.search(r"-o\s+or one that ends in\s+/", status):
        problems.append("shardtool-convert.1: EXIT STATUS calls -o DIR/ a usage error, but it works")
    # The README on lists of lists against --nested's default.
    help_text = subprocess.run([binary, "convert", "--help"], capture_output=True, text=True,
                               env=dict(os.environ, COLUMNS="1000"), timeout=60).stdout
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    if re.search(r"--nested MODE .*FeatureLists \((sequence, the )?default\)", help_text) and \
            re.search(r"nested lists are refused", readme):
        problems.append("README.md: says nested lists are refused, but --nested sequence is the default")
    check_version_page(binary, sources.get("shardtool-version.1", ""), problems)


def check_version_page(binary, source, problems):
    """shardtool-version(1)'s example output has the lines `shardtool version`
    prints, in its order, and names every format this build lists; its --json
    entry names every member of `version --json`."""
    import json
    out = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=60).stdout
    doc = json.loads(subprocess.run([binary, "version", "--json"], capture_output=True, text=True,
                                    timeout=60).stdout)
    example = sections_plain_lines(source, "EXAMPLES")
    start = next((i for i, t in enumerate(example) if t.strip() == "$ shardtool version"), None)
    if start is None:
        problems.append("shardtool-version.1: EXAMPLES shows no '$ shardtool version'")
        return
    shown = []
    for t in example[start + 1:]:
        if not t.strip():
            break
        shown.append(t.strip())
    printed = out.splitlines()

    def keys(lines):
        return [line.split(":")[0] if ":" in line else line.split()[0] for line in lines]
    if keys(shown) != keys(printed):
        problems.append(f"shardtool-version.1: EXAMPLES shows the lines {keys(shown)}, "
                        f"shardtool version prints {keys(printed)}")
    shown_formats = next((line.split()[1:] for line in shown if line.startswith("formats:")), [])
    missing = [f for f in doc.get("formats", []) if f not in shown_formats]
    if missing:
        problems.append(f"shardtool-version.1: EXAMPLES' formats line lacks {missing}, which "
                        "shardtool version lists")
    options = sections_plain(source, "OPTIONS")
    for key in doc:
        if not re.search(r"\b" + re.escape(key) + r"\b", options):
            problems.append(f"shardtool-version.1: --json does not name the member {key!r}")


def sections_plain_lines(source, name):
    """The plain lines of one .SH section, as they are."""
    lines, inside = [], False
    src = source.splitlines()
    for n, t in plain_lines(source):
        line = src[n - 1]
        if line.startswith(".SH"):
            inside = line[3:].strip().strip('"') == name
        elif inside:
            lines.append(t)
    return lines


def sections_plain(source, name):
    """The plain text of one .SH section, words joined by spaces."""
    text, inside = [], False
    for n, t in plain_lines(source):
        line = source.splitlines()[n - 1]
        if line.startswith(".SH"):
            inside = line[3:].strip().strip('"') == name
        elif inside:
            text.append(t)
    return " ".join(" ".join(text).split())


def check_pages(sources, table, all_options):
    problems = []
    pages_sections = {name[:-2]: section_lines(src) for name, src in sources.items()}
    for page, source in sorted(sources.items()):
        lines = plain_lines(source)
        check_options(page, lines, all_options, problems)
        check_page_refs(page, lines, pages_sections, problems)
        check_section_refs(page, source, lines, pages_sections, problems)
        check_environment(page, source, problems)
    return problems


def self_test(sources, table, all_options):
    """Each rule must catch a page broken on purpose."""
    failures = []
    page = "shardtool-convert.1"
    base = sources[page]
    breakages = {
        "an unknown option": base.replace(".SH \"SEE ALSO\"", ".PP\nUse \\-\\-no\\-such\\-option.\n"
                                          ".SH \"SEE ALSO\"", 1),
        "a page naming itself": base.replace(".SH \"SEE ALSO\"", ".PP\nSee\n.BR shardtool\\-convert (1).\n"
                                             ".SH \"SEE ALSO\"", 1),
        "a missing page": base.replace(".SH \"SEE ALSO\"", ".PP\nSee\n.BR shardtool\\-frobnicate (1).\n"
                                       ".SH \"SEE ALSO\"", 1),
        "a missing section": base.replace(".SH \"SEE ALSO\"", ".PP\n(see\n.BR \"NO SUCH SECTION\" ).\n"
                                          ".SH \"SEE ALSO\"", 1),
        "a section above that is below": base.replace(".SH OPTIONS", ".PP\nsee\n.B SHUFFLING\nabove.\n"
                                                      ".SH OPTIONS", 1),
        "a section of another page that it lacks": base.replace(
            ".SH \"SEE ALSO\"", ".PP\nsee\n.B SHUFFLING\nin\n.BR shardtool\\-cat (1).\n.SH \"SEE ALSO\"", 1),
        "a variable described twice": sources["shardtool.1"].replace(
            ".SH ENVIRONMENT\n", ".SH ENVIRONMENT\n.TP\n.B HOME\nagain\n", 1),
    }
    for what, broken in breakages.items():
        name = "shardtool.1" if "variable" in what else page
        if broken == sources[name]:
            failures.append(f"self-test: could not build {what}")
            continue
        if not check_pages(dict(sources, **{name: broken}), table, all_options):
            failures.append(f"self-test: {what} went unnoticed")
    return failures


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    table = load_table(binary)
    all_options = {name for options in table.values() for name in options}
    sources = {}
    for path in sorted(glob.glob(os.path.join(root, "man", "*.[13]"))):
        with open(path, encoding="utf-8") as f:
            sources[os.path.basename(path)] = f.read()
    problems = check_pages(sources, table, all_options)
    check_help(binary, table, all_options, problems)
    check_claims(binary, root, sources, problems)
    if not problems:
        problems = self_test(sources, table, all_options)
    for p in problems:
        print("FAIL:", p)
    if problems:
        print(f"{len(problems)} problem(s)")
        return 1
    print(f"ok: {len(sources)} pages: every option, page and section they refer to exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
