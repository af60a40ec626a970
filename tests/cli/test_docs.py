#!/usr/bin/env python3
"""The user documentation agrees with the option tables.

    python3 tests/cli/test_docs.py path/to/shardtool SOURCE_DIR

Takes the options from `shardtool --dump-options` (one line per option:
"command<TAB>--name<TAB>-s<TAB>METAVAR<TAB>choice,choice") and checks that:

  - every command has a man page, man/shardtool-COMMAND.1, whose OPTIONS
    section documents every option of the command (a `.TP` entry whose tag
    names the long form, the short form when there is one, and the metavar,
    and whose text names every choice), and documents nothing else;
  - man/shardtool.1 lists every command and documents in ENVIRONMENT every
    variable the sources read (getenv and friends);
  - `shardtool COMMAND --help` lists every option with its short form and
    metavar, and `shardtool --help` every command;
  - the bash, zsh and fish completions offer every command, and for every
    command exactly its options (long and short) with their choices; the
    bash completion (and the fish one, when fish is installed) is also run
    to see that it completes option names, choices and file names; and the
    three files are what completions/generate.py writes from the tables;
  - man/libshardtool.3 documents the public C API of include/shardtool.h:
    every SHARDTOOL_API function is in NAME, in SYNOPSIS and described
    after it, every public struct and enum and every member of a public
    struct is named, and NAME lists no function the header lacks;
  - every man page formats without warnings with `groff -man -ww` (skipped
    when groff is not installed), and the completions pass `bash -n`,
    `zsh -n` and `fish -n` where those shells are installed.

Then it checks itself: it removes an option from a man page and from each
completion file, and adds an unknown one, and makes sure each change is
reported.  Plain standard-library Python; exits 1 on any problem.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HELP = ("help", "h")  # every command's parser accepts -h/--help; it is in no table
REQUIRED_SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES",
                     "EXIT STATUS", "SEE ALSO")
FILE_METAVARS = {"FILE", "PATH", "PREFIX"}


class Option:
    def __init__(self, long, short, metavar, choices):
        self.long, self.short, self.metavar, self.choices = long, short, metavar, choices

    def key(self):
        return (self.long, self.short, self.metavar, tuple(sorted(self.choices)))


def load_table(binary):
    """{command: {long: Option}}, commands in table order."""
    out = subprocess.run([binary, "--dump-options"], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    table = {}
    for line in out.splitlines():
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 5 or not fields[1].startswith("--"):
            raise SystemExit(f"--dump-options: unexpected line {line!r}")
        cmd, long, short, metavar, choices = fields
        table.setdefault(cmd, {})[long[2:]] = Option(
            long[2:], short[1:], metavar, [c for c in choices.split(",") if c])
    if not table:
        raise SystemExit("--dump-options printed no options")
    return table


# ---- man pages ------------------------------------------------------------------

def roff_plain(text):
    """Roff source -> plain text: escapes resolved, font changes dropped."""
    text = text.replace("\\-", "-").replace("\\e", "\\")
    text = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", text)
    specials = {"aq": "'", "dq": '"', "lq": '"', "rq": '"', "em": "--", "bu": "*"}
    text = re.sub(r"\\\((..)", lambda m: specials.get(m.group(1), ""), text)
    for esc in ("\\&", "\\%", "\\:"):
        text = text.replace(esc, "")
    return text.replace("\\ ", " ")


def macro_text(line):
    """The words of a roff line as plain text (macro name and quotes removed)."""
    line = roff_plain(line)
    if line.startswith((".", "'")):
        line = line.split(None, 1)[1] if " " in line else ""
    return line.replace('"', " ")


def sections(source):
    """{section name: [lines]} of a man page."""
    out = {}
    current = None
    for line in source.splitlines():
        if line.startswith(".SH"):
            current = line[3:].strip().strip('"')
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def option_tokens(plain):
    longs = re.findall(r"(?<![\w-])--([A-Za-z0-9][\w-]*)", plain)
    shorts = re.findall(r"(?<![\w-])-([A-Za-z0-9])(?![\w-])", plain)
    return longs, shorts


def man_entries(lines):
    """[(tag plain text, body plain text)] of the .TP entries of a section."""
    entries = []
    i = 0
    while i < len(lines):
        if lines[i].startswith(".TP"):
            i += 1
            while i < len(lines) and lines[i].startswith('.\\"'):
                i += 1
            if i >= len(lines):
                break
            tag = macro_text(lines[i])
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith((".TP", ".SS", ".SH")):
                body.append(macro_text(lines[i]))
                i += 1
            entries.append((tag, " ".join(body)))
        else:
            i += 1
    return entries


def check_man_page(cmd, source, options, problems):
    """A command's page against its options."""
    where = f"man/shardtool-{cmd}.1"
    secs = sections(source)
    for name in REQUIRED_SECTIONS:
        if name not in secs:
            problems.append(f"{where}: no {name} section")
    if "OPTIONS" not in secs:
        return
    documented = {}
    for tag, body in man_entries(secs["OPTIONS"]):
        longs, shorts = option_tokens(tag)
        if not longs:
            problems.append(f"{where}: OPTIONS entry {tag.strip()!r} names no --option")
            continue
        if len(longs) > 1:
            problems.append(f"{where}: OPTIONS entry {tag.strip()!r} names several options")
        long = longs[0]
        if long in documented:
            problems.append(f"{where}: --{long} is documented twice")
        documented[long] = (set(shorts), tag, body)
    for long, opt in options.items():
        if long not in documented:
            problems.append(f"{where}: --{long} is missing from OPTIONS")
            continue
        shorts, tag, body = documented[long]
        if opt.short and opt.short not in shorts:
            problems.append(f"{where}: --{long}: its short form -{opt.short} is not in the entry")
        for s in shorts - {opt.short}:
            problems.append(f"{where}: --{long}: documents -{s}, which it does not have")
        if opt.metavar and opt.metavar not in tag:
            problems.append(f"{where}: --{long}: the entry does not show its value {opt.metavar}")
        if not opt.metavar and len(tag.replace(",", " ").split()) > len(shorts) + 1:
            problems.append(f"{where}: --{long}: the entry shows a value, but it takes none")
        for choice in opt.choices:
            if not re.search(r"(?<![\w-])" + re.escape(choice) + r"(?![\w-])", body):
                problems.append(f"{where}: --{long}: the choice {choice!r} is not described")
    for long, (shorts, _, _) in documented.items():
        if long == HELP[0]:
            if shorts != {HELP[1]}:
                problems.append(f"{where}: --help should be documented as -h, --help")
        elif long not in options:
            problems.append(f"{where}: documents --{long}, which {cmd} does not have")
    if HELP[0] not in documented:
        problems.append(f"{where}: -h, --help is missing from OPTIONS")


def env_vars_read(source_dir):
    """Environment variables the C sources read."""
    names = set()
    pattern = re.compile(r"\b(?:getenv|secure_getenv|env\w*|\w*_path)\(\s*\"([A-Z][A-Z0-9_]+)\"")
    for top in ("src", "cli", "formats"):
        for root, _, files in os.walk(os.path.join(source_dir, top)):
            for name in files:
                if name.endswith((".c", ".h", ".cu")):
                    with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                        names.update(pattern.findall(f.read()))
    return names


def check_main_page(source, commands, env_names, problems):
    where = "man/shardtool.1"
    secs = sections(source)
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "INPUTS", "ENVIRONMENT",
                 "EXIT STATUS", "FILES", "SEE ALSO"):
        if name not in secs:
            problems.append(f"{where}: no {name} section")
    listed = {tag.split()[0] for tag, _ in man_entries(secs.get("COMMANDS", [])) if tag.split()}
    plain = roff_plain(source)
    for cmd in commands:
        if cmd not in listed:
            problems.append(f"{where}: the command {cmd} is not in COMMANDS")
        if f"shardtool-{cmd}" not in plain:
            problems.append(f"{where}: does not refer to shardtool-{cmd}(1)")
    for cmd in listed - set(commands):
        problems.append(f"{where}: COMMANDS lists {cmd}, which is not a command")
    for tag, _ in man_entries(secs.get("OPTIONS", [])):
        for long in option_tokens(tag)[0]:
            if long not in ("help", "version"):
                problems.append(f"{where}: documents --{long}, which shardtool does not have")
    env = " ".join(macro_text(l) for l in secs.get("ENVIRONMENT", []))
    for name in sorted(env_names):
        if not re.search(r"\b" + name + r"\b", env):
            problems.append(f"{where}: ENVIRONMENT does not document {name}, which is read")


def header_api(header):
    """(functions, {type: [members]}) of the public header: the SHARDTOOL_API
    functions, and the typedef'd structs and enums with their members
    (those of a nested struct too)."""
    text = re.sub(r"/\*.*?\*/", " ", header, flags=re.S)
    functions = re.findall(r"SHARDTOOL_API\s+[^;(]*?\b(shardtool_\w+)\s*\(", text)
    types = {}
    for m in re.finditer(r"typedef\s+(struct|enum)\s+(shardtool_\w+)\s*\{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = re.sub(r"[{}]", ";", text[m.end():i - 1])
        if m.group(1) == "enum":
            members = re.findall(r"\b(SHARDTOOL_\w+)\s*=", body)
        else:
            members = [re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", decl.strip())[0]
                       for decl in body.split(";") if re.search(r"\w", decl) and
                       not re.fullmatch(r"\s*struct\s*", decl)]
        types[m.group(2)] = members
    for m in re.finditer(r"typedef\s+struct\s+(shardtool_\w+)\s+\1\s*;", text):
        types.setdefault(m.group(1), [])  # opaque handles
    return functions, types


def check_library_page(header, source, problems):
    """man/libshardtool.3 against include/shardtool.h."""
    where = "man/libshardtool.3"
    functions, types = header_api(header)
    if not functions:
        problems.append("include/shardtool.h: no SHARDTOOL_API function found")
        return
    secs = sections(source)
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "ERRORS", "SEE ALSO"):
        if name not in secs:
            problems.append(f"{where}: no {name} section")
    plain = {name: roff_plain("\n".join(lines)) for name, lines in secs.items()}
    after_synopsis = " ".join(text for name, text in plain.items() if name not in ("NAME", "SYNOPSIS"))
    whole = " ".join(plain.values())

    def named(word, text):
        return re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", text) is not None

    for fn in functions:
        if not named(fn, plain.get("NAME", "")):
            problems.append(f"{where}: {fn} is not in NAME")
        if not named(fn, plain.get("SYNOPSIS", "")):
            problems.append(f"{where}: {fn} is not in SYNOPSIS")
        if not named(fn, after_synopsis):
            problems.append(f"{where}: {fn} is not described after SYNOPSIS")
    for fn in re.findall(r"\bshardtool_\w+", plain.get("NAME", "")):
        if fn not in functions:
            problems.append(f"{where}: NAME lists {fn}, which include/shardtool.h does not declare")
    for typ, members in types.items():
        if not named(typ, whole):
            problems.append(f"{where}: the type {typ} is not named")
        for member in members:
            if not named(member, after_synopsis):
                problems.append(f"{where}: {typ}'s {member} is not described")


def check_groff(paths, problems, notes):
    groff = shutil.which("groff")
    if not groff:
        notes.append("groff not found: man page warnings not checked")
        return
    for path in paths:
        r = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", path], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0 or r.stderr.strip():
            problems.append(f"{os.path.basename(path)}: groff -man -ww: {r.stderr.strip() or r.returncode}")


# ---- --help --------------------------------------------------------------------------

def check_help(binary, table, problems):
    top = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60).stdout
    for cmd in table:
        if not re.search(r"^\s+" + re.escape(cmd) + r"\s", top, re.M):
            problems.append(f"shardtool --help: does not list {cmd}")
    for cmd, options in table.items():
        r = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            problems.append(f"shardtool {cmd} --help: exit status {r.returncode}")
        listed = {}
        for line in r.stdout.splitlines():
            # Option lines only: a wrapped description's continuation line
            # is indented further and may start with another option's name.
            # "--payloads[=MODE]": a value that may be given after '=' only
            m = re.match(r"^  (?:-(\w), |    )--([\w-]+)(\[=\S+\]| \S+)?", line)
            if m:
                listed[m.group(2)] = (m.group(1) or "", (m.group(3) or "").strip())
        for long, opt in options.items():
            if long not in listed:
                problems.append(f"shardtool {cmd} --help: --{long} is missing")
            elif listed[long] != (opt.short, opt.metavar):
                problems.append(f"shardtool {cmd} --help: --{long} is shown as "
                                f"{listed[long]}, the table says {(opt.short, opt.metavar)}")
        if listed.get(HELP[0], ("", ""))[0] != HELP[1]:
            problems.append(f"shardtool {cmd} --help: -h, --help is missing")
        check_help_choices(binary, cmd, options, problems)
        check_help_formats(r.stdout, cmd, options, problems)


# The names the documentation gives the formats --from accepts.
FORMAT_NAMES = {"tfrecord": "TFRecord", "arrayrecord": "ArrayRecord", "csv": "CSV", "tsv": "TSV",
                "jsonl": "JSON lines", "parquet": "Parquet", "avro": "Avro", "webdataset": "WebDataset"}


def formats_unnamed(text, options):
    """The formats --from accepts that `text` does not name."""
    flat = " ".join(text.split())
    return [FORMAT_NAMES.get(c, c) for c in options["from"].choices
            if not re.search(r"\b" + re.escape(FORMAT_NAMES.get(c, c)) + r"\b", flat)]


def check_man_formats(cmd, source, options, problems):
    """A reading command's page says in NAME or in DESCRIPTION's first
    paragraph every format it reads."""
    if "from" not in options:
        return
    parts = sections(source)
    first = []
    for line in parts.get("DESCRIPTION", []):
        if line.startswith((".PP", ".SS", ".TP", ".IP")):
            break
        first.append(line)
    text = " ".join(macro_text(line) for line in parts.get("NAME", []) + first)
    lacking = formats_unnamed(text, options)
    if lacking:
        problems.append(f"shardtool-{cmd}.1: NAME and DESCRIPTION's first paragraph do not name "
                        f"{', '.join(lacking)}, which --from accepts")


def check_help_formats(text, cmd, options, problems):
    """A command that reads inputs says, before its options, every format it
    reads (`cat --help` left out WebDataset, which cat reads)."""
    if "from" not in options:
        return
    lacking = formats_unnamed(text.split("\nOptions:")[0], options)
    if lacking:
        problems.append(f"shardtool {cmd} --help: the description does not name {', '.join(lacking)}, "
                        "which --from accepts")


def check_help_choices(binary, cmd, options, problems):
    """An option's --help line names every value it accepts (any case), so
    that `--to FORMAT` is not left to be learnt from an error message."""
    wide = subprocess.run([binary, cmd, "--help"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, COLUMNS="1000")).stdout
    lines, current = {}, None
    for line in wide.splitlines():
        m = re.match(r"^  (?:-\w, |    )--([\w-]+)", line)
        if m:
            current = m.group(1)
            lines[current] = line[m.end():].lower()
        elif current and line.startswith("      "):
            lines[current] += " " + line.strip().lower()  # a long name's description
        else:
            current = None
    for long, opt in options.items():
        text = lines.get(long)
        if text is None or re.search(r"spelling of --", text):
            continue  # an alias: its option's line names the values
        lacking = [c for c in opt.choices
                   if not re.search(r"(?<![\w-])" + re.escape(c.lower()) + r"(?![\w-])", text)]
        if lacking:
            problems.append(f"shardtool {cmd} --help: --{long} does not name {', '.join(lacking)}")


# ---- completions: what each file declares -------------------------------------------

def bash_declared(text):
    """{command: {long: Option}} from the bash completion's table."""
    m = re.search(r"^_shardtool_table\(\)\s*\{(.*?)^\}", text, re.S | re.M)
    if not m:
        return {}
    out = {}
    for block in re.finditer(r"^\s+([\w-]+)\)\n(.*?);;", m.group(1), re.S | re.M):
        opts = {}
        for entry in re.findall(r"'([^']*)'", block.group(2)):
            fields = entry.split()
            if len(fields) != 4:
                continue
            long, short, metavar, choices = (None if f == "-" else f for f in fields)
            opts[long[2:]] = Option(long[2:], short[1:] if short else "", metavar or "",
                                    choices.split(",") if choices else [])
        out[block.group(1)] = opts
    return out


def bash_commands(text):
    m = re.search(r"local commands='([^']*)'", text)
    return set(m.group(1).split()) if m else set()


def zsh_declared(text):
    out = {}
    for fn in re.finditer(r"^_shardtool_([\w-]+)\(\)\s*\{\n(.*?)^\}", text, re.S | re.M):
        if fn.group(1) == "commands":
            continue
        opts = {}
        for line in fn.group(2).splitlines():
            line = line.strip()
            if not line.startswith(("'", "{")) or line.startswith("'*:"):
                continue
            head = re.sub(r"^'\([^)]*\)'", "", line).split("[", 1)[0]
            longs = re.findall(r"--([\w-]+)", head)
            shorts = re.findall(r"(?<![\w-])-(\w)(?=[+,=}']|$)", head)
            if not longs:
                continue
            takes = head.rstrip("'").endswith(("=", "+")) or "=" in head or "+," in head
            arg = re.search(r"\]:([^:]*):(.*?)'\s*\\?$", line)
            metavar = arg.group(1).replace("'\\''", "'") if arg else ""
            optional = re.search(r"=-\[.*\]::([^:]*):(.*?)'\s*\\?$", line)
            if optional:  # '--opt=-[...]::MODE:(a b)': a value after '=' only, optional
                arg, metavar = optional, "[=" + optional.group(1) + "]"
            choices = []
            if arg:
                c = re.fullmatch(r"\(([^()]*)\)", arg.group(2))
                choices = c.group(1).split() if c else []
            for long in longs:
                opts[long] = Option(long, shorts[0] if shorts else "", metavar if takes else "",
                                    choices)
        out[fn.group(1)] = opts
    return out


def zsh_commands(text):
    m = re.search(r"^_shardtool_commands\(\)\s*\{(.*?)^\}", text, re.S | re.M)
    return set(re.findall(r"^\s+'([\w-]+):", m.group(1), re.M)) if m else set()


def fish_words(line):
    """Splits a fish command line (single and double quotes, backslash escapes)."""
    words, cur, i, quote, started = [], [], 0, None, False
    while i < len(line):
        c = line[i]
        if quote == "'":
            if c == "\\" and i + 1 < len(line) and line[i + 1] in "'\\":
                cur.append(line[i + 1])
                i += 1
            elif c == "'":
                quote = None
            else:
                cur.append(c)
        elif quote == '"':
            if c == "\\" and i + 1 < len(line) and line[i + 1] in '"\\$':
                cur.append(line[i + 1])
                i += 1
            elif c == '"':
                quote = None
            else:
                cur.append(c)
        elif c in "'\"":
            quote, started = c, True
        elif c == "\\" and i + 1 < len(line):
            cur.append(line[i + 1])
            started = True
            i += 1
        elif c.isspace():
            if cur or started:
                words.append("".join(cur))
            cur, started = [], False
        elif c == "#" and not cur and not started:
            break
        else:
            cur.append(c)
            started = True
        i += 1
    if cur or started:
        words.append("".join(cur))
    return words


def fish_declared(text):
    out, commands = {}, set()
    for line in text.splitlines():
        w = fish_words(line)
        if len(w) < 3 or w[0] != "complete":
            continue
        args = {}
        flags = set()
        i = 1
        while i < len(w):
            if w[i] in ("-c", "-n", "-s", "-l", "-a", "-d", "-o"):
                if i + 1 < len(w):
                    args.setdefault(w[i], w[i + 1])
                i += 2
            else:
                flags.add(w[i])
                i += 1
        if args.get("-c") != "shardtool":
            continue
        cond = args.get("-n", "")
        if cond == "__fish_use_subcommand" and "-a" in args and "-l" not in args:
            commands.update(args["-a"].split())
            continue
        m = re.fullmatch(r"__fish_seen_subcommand_from ([\w-]+)", cond)
        if not m or "-l" not in args:
            continue
        # -f with -a and neither -r nor -x: a value that may be left out
        takes = bool(flags & {"-r", "-x", "--require-parameter", "--exclusive"}) or \
            ("-f" in flags and "-a" in args)
        opt = Option(args["-l"], args.get("-s", ""), "?" if takes else "",
                     args["-a"].split() if "-a" in args else [])
        out.setdefault(m.group(1), {})[opt.long] = opt
    return out, commands


def compare_declared(where, declared, table, problems, metavar_exact):
    for cmd, options in table.items():
        have = declared.get(cmd)
        if have is None:
            problems.append(f"{where}: no options for the command {cmd}")
            continue
        for long, opt in options.items():
            got = have.get(long)
            if got is None:
                problems.append(f"{where}: {cmd} --{long} is missing")
                continue
            if got.short != opt.short:
                problems.append(f"{where}: {cmd} --{long}: short form "
                                f"{'-' + got.short if got.short else 'none'}, the table says "
                                f"{'-' + opt.short if opt.short else 'none'}")
            if metavar_exact and got.metavar != opt.metavar:
                problems.append(f"{where}: {cmd} --{long}: value {got.metavar!r}, "
                                f"the table says {opt.metavar!r}")
            if not metavar_exact and bool(got.metavar) != bool(opt.metavar):
                problems.append(f"{where}: {cmd} --{long}: "
                                + ("takes no value here" if opt.metavar else "takes a value here"))
            if sorted(got.choices) != sorted(opt.choices):
                problems.append(f"{where}: {cmd} --{long}: choices {got.choices}, "
                                f"the table says {opt.choices}")
        for long in have:
            if long not in options and long != HELP[0]:
                problems.append(f"{where}: {cmd} --{long} is not an option of {cmd}")
    for cmd in declared:
        if cmd not in table:
            problems.append(f"{where}: completes options for {cmd}, which is not a command")


def check_completion_texts(texts, table, problems):
    """texts: {"bash": ..., "zsh": ..., "fish": ...} file contents."""
    commands = set(table)
    bash = texts["bash"]
    compare_declared("completions/shardtool.bash", bash_declared(bash), table, problems, True)
    if bash_commands(bash) != commands:
        problems.append(f"completions/shardtool.bash: commands {sorted(bash_commands(bash))}, "
                        f"expected {sorted(commands)}")
    if not re.search(r"^\s*complete -F _shardtool shardtool\s*$", bash, re.M):
        problems.append("completions/shardtool.bash: does not register _shardtool for shardtool")
    zsh = texts["zsh"]
    if not zsh.startswith("#compdef shardtool"):
        problems.append("completions/_shardtool: the first line is not '#compdef shardtool'")
    compare_declared("completions/_shardtool", zsh_declared(zsh), table, problems, True)
    if zsh_commands(zsh) != commands:
        problems.append(f"completions/_shardtool: commands {sorted(zsh_commands(zsh))}, "
                        f"expected {sorted(commands)}")
    fish, fish_cmds = fish_declared(texts["fish"])
    compare_declared("completions/shardtool.fish", fish, table, problems, False)
    if fish_cmds - {"help"} != commands:
        problems.append(f"completions/shardtool.fish: commands {sorted(fish_cmds)}, "
                        f"expected {sorted(commands)}")


# ---- completions: running them --------------------------------------------------------

def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def completion_queries(table):
    """[(id, words, expected, exact)]: what completing `words` must offer."""
    queries = [("commands", ["shardtool", ""], set(table) | {"help"}, True)]
    for cmd, options in table.items():
        longs = {"--" + o for o in options} | {"--help"}
        shorts = {"-" + o.short for o in options.values() if o.short} | {"-h"}
        queries.append((f"{cmd} longs", ["shardtool", cmd, "--"], longs, False))
        queries.append((f"{cmd} shorts", ["shardtool", cmd, "-"], shorts, False))
        queries.append((f"{cmd} files", ["shardtool", cmd, "docs-pro"], {"docs-probe.txt"}, False))
        for o in options.values():
            forms = ["--" + o.long] + (["-" + o.short] if o.short else [])
            for form in forms:
                if o.metavar.startswith("[="):
                    # the value only after '=': the next word is a file
                    queries.append((f"{cmd} {form}", ["shardtool", cmd, form, "docs-pro"],
                                    {"docs-probe.txt"}, False))
                elif o.choices:
                    queries.append((f"{cmd} {form}", ["shardtool", cmd, form, ""],
                                    set(o.choices), True))
                elif o.metavar in FILE_METAVARS:
                    queries.append((f"{cmd} {form}", ["shardtool", cmd, form, "docs-pro"],
                                    {"docs-probe.txt"}, False))
            if o.choices:
                queries.append((f"{cmd} --{o.long}=", ["shardtool", cmd, "--" + o.long, "=", ""],
                                set(o.choices), True))
    return queries


def judge(shell, queries, answers, problems):
    for qid, words, expected, exact in queries:
        got = answers.get(qid)
        if got is None:
            problems.append(f"{shell} completion: no answer for {' '.join(words)!r}")
        elif exact and got != expected:
            problems.append(f"{shell} completion of {' '.join(words)!r}: {sorted(got)}, "
                            f"expected {sorted(expected)}")
        elif not exact and not expected <= got:
            problems.append(f"{shell} completion of {' '.join(words)!r}: missing "
                            f"{sorted(expected - got)}")


def run_bash_completion(path, table, workdir, problems, notes):
    bash = shutil.which("bash")
    if not bash:
        notes.append("bash not found: bash completion not run")
        return
    queries = completion_queries(table)
    script = [f"source {shell_quote(path)} || exit 1",
              "q() { local id=$1; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1));"
              " COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; COMPREPLY=(); _shardtool;"
              " printf '@@%s\\n' \"$id\"; printf '%s\\n' \"${COMPREPLY[@]}\"; }"]
    for qid, words, _, _ in queries:
        script.append("q " + " ".join(shell_quote(w) for w in [qid] + words))
    r = subprocess.run([bash, "--norc", "--noprofile", "-c", "\n".join(script)], cwd=workdir,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        problems.append(f"bash completion: the script failed: {r.stderr.strip()[:500]}")
        return
    judge("bash", queries, parse_answers(r.stdout, tab=False), problems)


def run_fish_completion(path, table, workdir, problems, notes):
    fish = shutil.which("fish")
    if not fish:
        notes.append("fish not found: fish completion not run")
        return
    queries = [q for q in completion_queries(table) if "=" not in q[1]]
    script = [f"source {shell_quote(path)}"]
    for qid, words, _, _ in queries:
        script.append(f"echo @@{shell_quote(qid)}")
        script.append("complete -C " + shell_quote(" ".join(words)))
    env = dict(os.environ, HOME=workdir, XDG_CONFIG_HOME=workdir, XDG_DATA_HOME=workdir)
    r = subprocess.run([fish, "--no-config", "-c", "\n".join(script)], cwd=workdir, env=env,
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        problems.append(f"fish completion: the script failed: {r.stderr.strip()[:500]}")
        return
    judge("fish", queries, parse_answers(r.stdout, tab=True), problems)


def parse_answers(stdout, tab):
    answers, current = {}, None
    for line in stdout.splitlines():
        if line.startswith("@@"):
            current = line[2:]
            answers[current] = set()
        elif current is not None and line:
            answers[current].add(line.split("\t", 1)[0] if tab else line)
    return answers


def check_generated(binary, source_dir, texts, problems):
    """The completion files are what completions/generate.py writes now, so
    that descriptions follow the --help texts too."""
    gen_path = os.path.join(source_dir, "completions", "generate.py")
    if not os.path.exists(gen_path):
        problems.append("completions/generate.py does not exist")
        return
    import importlib.util
    spec = importlib.util.spec_from_file_location("shardtool_completions_generate", gen_path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    commands = gen.load(binary)
    for shell, name, text in (("bash", "shardtool.bash", gen.bash_script(commands)),
                              ("zsh", "_shardtool", gen.zsh_script(commands)),
                              ("fish", "shardtool.fish", gen.fish_script(commands))):
        if texts.get(shell) != text:
            problems.append(f"completions/{name} is not what completions/generate.py writes; "
                            f"run: python3 completions/generate.py {binary}")


def check_shell_syntax(paths, problems, notes):
    for shell, path, args in (("bash", paths["bash"], ["-n"]), ("zsh", paths["zsh"], ["-n"]),
                              ("fish", paths["fish"], ["--no-execute"])):
        exe = shutil.which(shell)
        if not exe:
            notes.append(f"{shell} not found: {os.path.basename(path)} syntax not checked")
            continue
        r = subprocess.run([exe, *args, path], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            problems.append(f"{shell} -n {os.path.basename(path)}: {r.stderr.strip()[:500]}")


# ---- the test checks itself -------------------------------------------------------------

def self_test(table, pages, texts, library=None):
    """Breaks the documentation in a few ways; each must be reported."""
    failures = []
    cmd = next(iter(table))
    opt = next(o for o in table[cmd].values() if o.short) if any(
        o.short for o in table[cmd].values()) else next(iter(table[cmd].values()))
    long_roff = "\\-\\-" + opt.long.replace("-", "\\-")

    def expect(what, run, needle):
        problems = []
        run(problems)
        if not any(needle in p for p in problems):
            failures.append(f"self-test: {what} was not reported (got {problems[:3]})")

    # An option's entry removed from its page.
    src = pages[cmd]
    lines = src.splitlines()
    idx = next((i for i, l in enumerate(lines)
                if l.startswith((".B", ".I")) and long_roff in l and i > 0
                and lines[i - 1].startswith(".TP")), None)
    if idx is None:
        failures.append(f"self-test: could not find the entry of --{opt.long} to remove")
    else:
        broken = "\n".join(lines[:idx - 1] + lines[idx + 1:])
        expect(f"--{opt.long} removed from shardtool-{cmd}.1",
               lambda p: check_man_page(cmd, broken, table[cmd], p), f"--{opt.long} is missing")
        # Its short form dropped from the tag.
        if opt.short:
            tag = lines[idx].replace("\\-" + opt.short + ",", "").replace("\\-" + opt.short + " ", "")
            broken = "\n".join(lines[:idx] + [tag] + lines[idx + 1:])
            expect(f"-{opt.short} dropped from shardtool-{cmd}.1",
                   lambda p: check_man_page(cmd, broken, table[cmd], p), f"-{opt.short} is not")
    # An option that does not exist, documented.
    bogus = src.replace(".SH OPTIONS\n", ".SH OPTIONS\n.TP\n.B \\-\\-no\\-such\\-option\nStale.\n", 1)
    expect(f"a stale option in shardtool-{cmd}.1",
           lambda p: check_man_page(cmd, bogus, table[cmd], p), "--no-such-option")

    # An option removed from each completion file.
    for shell, pattern in (("bash", r"^\s*'--%s [^\n]*\n"),
                           ("zsh", r"^[^\n]*--%s[=\[][^\n]*\n"),
                           ("fish", r"^complete [^\n]*'__fish_seen_subcommand_from %s'[^\n]*-l %s [^\n]*\n")):
        text = texts[shell]
        if shell == "bash":
            # Only in the block of `cmd`.
            m = re.search(r"^\s+%s\)\n.*?;;" % re.escape(cmd), text, re.S | re.M)
            block = m.group(0) if m else ""
            new_block = re.sub(pattern % re.escape(opt.long), "", block, count=1, flags=re.M)
            broken = text.replace(block, new_block, 1) if block else text
        elif shell == "zsh":
            m = re.search(r"^_shardtool_%s\(\)\s*\{\n.*?^\}" % re.escape(cmd), text, re.S | re.M)
            block = m.group(0) if m else ""
            new_block = re.sub(pattern % re.escape(opt.long), "", block, count=1, flags=re.M)
            broken = text.replace(block, new_block, 1) if block else text
        else:
            broken = re.sub(pattern % (re.escape(cmd), re.escape(opt.long)), "", text, count=1,
                            flags=re.M)
        if broken == text:
            failures.append(f"self-test: could not remove --{opt.long} from the {shell} completion")
            continue
        mutated = dict(texts, **{shell: broken})
        expect(f"--{opt.long} removed from the {shell} completion",
               lambda p: check_completion_texts(mutated, table, p), f"{cmd} --{opt.long} is missing")

    # The library page: a function left out of NAME, a struct member never
    # described, a function the header gains.
    if library:
        header, page = library
        name_start = page.index(".SH NAME")
        name_end = page.index(".SH", name_start + 1)
        broken = page[:name_start] + re.sub(r"shardtool_reader_close,\s*", "", page[name_start:name_end], count=1) + \
            page[name_end:]
        expect("shardtool_reader_close removed from NAME of libshardtool.3",
               lambda p: check_library_page(header, broken, p), "shardtool_reader_close is not in NAME")
        member = "skip_corrupt"
        expect(f"{member} undescribed in libshardtool.3",
               lambda p: check_library_page(header, page.replace(member, "skip"), p),
               f"{member} is not described")
        grown = header.replace("#ifdef __cplusplus\n}",
                               "SHARDTOOL_API int shardtool_frobnicate(void);\n#ifdef __cplusplus\n}", 1)
        expect("a new header function missing from libshardtool.3",
               lambda p: check_library_page(grown, page, p), "shardtool_frobnicate is not in NAME")
    return failures


# ---- main ------------------------------------------------------------------------------

def check_sample_script(source_dir, problems):
    """The sample script shows whole tables: a shardtool command whose
    output goes through head or tail is cut mid-table (stat --totals gives
    a short report instead)."""
    path = os.path.join(source_dir, "examples", "run-sample.sh")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if re.search(r"\$st\b.*\|\s*(head|tail)\b", line):
                problems.append(f"examples/run-sample.sh:{n}: output cut by head or tail: {line.strip()}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, source_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    table = load_table(binary)
    problems, notes = [], []

    pages, page_paths = {}, []
    for cmd in table:
        path = os.path.join(source_dir, "man", f"shardtool-{cmd}.1")
        if not os.path.exists(path):
            problems.append(f"man/shardtool-{cmd}.1 does not exist")
            continue
        with open(path, encoding="utf-8") as f:
            pages[cmd] = f.read()
        page_paths.append(path)
        check_man_page(cmd, pages[cmd], table[cmd], problems)
        check_man_formats(cmd, pages[cmd], table[cmd], problems)
    main_path = os.path.join(source_dir, "man", "shardtool.1")
    if os.path.exists(main_path):
        with open(main_path, encoding="utf-8") as f:
            check_main_page(f.read(), list(table), env_vars_read(source_dir), problems)
        page_paths.append(main_path)
    else:
        problems.append("man/shardtool.1 does not exist")
    library_page = os.path.join(source_dir, "man", "libshardtool.3")
    header_path = os.path.join(source_dir, "include", "shardtool.h")
    library = None
    if os.path.exists(library_page) and os.path.exists(header_path):
        with open(library_page, encoding="utf-8") as f, open(header_path, encoding="utf-8") as h:
            library = (h.read(), f.read())
        check_library_page(*library, problems)
        page_paths.append(library_page)
    elif os.path.exists(header_path):
        problems.append("man/libshardtool.3 does not exist")
    check_groff(page_paths, problems, notes)

    check_help(binary, table, problems)
    check_sample_script(source_dir, problems)

    paths = {"bash": os.path.join(source_dir, "completions", "shardtool.bash"),
             "zsh": os.path.join(source_dir, "completions", "_shardtool"),
             "fish": os.path.join(source_dir, "completions", "shardtool.fish")}
    texts = {}
    for shell, path in paths.items():
        if not os.path.exists(path):
            problems.append(f"{os.path.relpath(path, source_dir)} does not exist")
        else:
            with open(path, encoding="utf-8") as f:
                texts[shell] = f.read()
    if len(texts) == 3:
        check_completion_texts(texts, table, problems)
        check_generated(binary, source_dir, texts, problems)
        check_shell_syntax(paths, problems, notes)
        with tempfile.TemporaryDirectory(prefix="shardtool-docs-") as work:
            open(os.path.join(work, "docs-probe.txt"), "w").close()
            run_bash_completion(paths["bash"], table, work, problems, notes)
            run_fish_completion(paths["fish"], table, work, problems, notes)

    if not problems and len(pages) == len(table) and len(texts) == 3:
        problems += self_test(table, pages, texts, library)

    for note in notes:
        print("note:", note)
    for p in problems:
        print("FAIL:", p)
    total = sum(len(o) for o in table.values())
    if problems:
        print(f"{len(problems)} problem(s) in the documentation of {len(table)} commands, "
              f"{total} options")
        return 1
    print(f"ok: {len(table)} commands, {total} options documented in man pages, --help "
          f"and bash, zsh and fish completions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
