#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dpdat authors
"""Docs that name what is not there: README.md, CONTRIBUTING.md, the guides
and the man pages are read for the names they give in `code spans` and
links, and each is looked up in the source tree:

  path      a file or folder of the project (lib/..., devtools/..., a
            guide's link to another guide)
  function  name() of dpdat's own prefixes, defined somewhere in the code
  man       name(3) or name(7): a page in doc/man
  flag      --flag after one of the project's commands (dpdat-perf,
            dpdat-testpmd, dpdat-run, devtools/*.sh, bench.sh, test.sh): in
            that command's source
  setting   DPDAT_* (registered in lib/conf/conf.c, or a name the headers
            or the libraries define)
            and BENCH_* (read by a devtools or test script)
  suite     meson test --suite NAME: a suite some meson.build declares

Usage: docs_check.py SRCROOT [--expect N] [FILE...]
  FILEs default to README.md, CONTRIBUTING.md, doc/guides/*.md and
  doc/man/*. With --expect
  N it exits 0 only when exactly N stale names are found (the test that
  shows each check can fail).
"""

import glob
import os
import re
import sys

OUR_PREFIXES = ("dpdat_", "port_", "rc_", "dev_", "cm_", "mr_", "evq_",
                "wire_", "roce_", "swift_", "dcqcn_", "resp_", "sr_", "zc_",
                "kern_", "memif_", "dv_", "df_", "perf_", "h_", "eal_",
                "unit_", "tpmd_", "ia_", "dat_dpdat")
# commands of the project and where their options are defined
TOOLS = {
    "dpdat-perf": ["app/dpdat-perf/*.c", "app/dpdat-perf/*.h"],
    "dpdat-testpmd": ["app/dpdat-testpmd/*.c", "app/dpdat-testpmd/*.h"],
    "dpdat-run": ["app/dpdat-run/*"],
    "dpdat-demo": ["app/dpdat-demo/*.c"],
    "bench.sh": ["devtools/bench*.sh", "devtools/lib-bench.sh"],
    "test.sh": ["devtools/test.sh"],
    "quickstart.sh": ["devtools/quickstart.sh"],
    "setup.sh": ["devtools/setup.sh"],
    "build.sh": ["devtools/build.sh"],
    "fuzz.sh": ["devtools/fuzz.sh"],
    "demo.sh": ["devtools/demo.sh"],
}
# names the docs give as wrong on purpose: the misspelt setting whose
# warning settings.md shows
DELIBERATE = {"DPDAT_ZERCOPY"}
TOP = ("app/", "lib/", "drivers/", "include/dpdat/", "include/rsm/", "test/",
       "devtools/", "doc/", ".ci/")
PLACEHOLDER = re.compile(r"[<>*{}]|\.\.\.|\bN\b|/N/|IF/|X\b")


class Tree:
    def __init__(self, root):
        self.root = root
        self._code = None
        self._api = None
        self._suites = None
        self._tool_src = {}

    def exists(self, rel):
        return os.path.exists(os.path.join(self.root, rel))

    def _read(self, patterns):
        """The files the glob patterns name, one string."""
        parts = []
        for pat in patterns:
            for f in glob.glob(os.path.join(self.root, pat), recursive=True):
                if os.path.isfile(f):
                    with open(f, errors="replace") as fh:
                        parts.append(fh.read())
        return "\n".join(parts)

    def code(self):
        """All of the C code, tests included."""
        if self._code is None:
            self._code = self._read(("lib/**/*.[ch]", "drivers/**/*.[ch]",
                                     "app/**/*.[ch]", "include/**/*.h",
                                     "test/**/*.[ch]"))
        return self._code

    def tool_src(self, tool):
        if tool not in self._tool_src:
            self._tool_src[tool] = self._read(TOOLS[tool])
        return self._tool_src[tool]

    def suites(self):
        if self._suites is None:
            s = set()
            for f in glob.glob(os.path.join(self.root, "**/meson.build"),
                               recursive=True):
                top = os.path.relpath(f, self.root).split("/")[0]
                if top.startswith("build"):	# build trees
                    continue
                with open(f) as fh:
                    s.update(re.findall(r"'([a-z0-9_+-]+)'", fh.read()))
            self._suites = s
        return self._suites

    def api(self):
        """The headers and the libraries' code: where the API's names are."""
        if self._api is None:
            self._api = self._read(("include/**/*.h", "lib/**/*.[ch]",
                                    "drivers/**/*.[ch]"))
        return self._api

    def setting(self, name):
        if name.startswith("DPDAT_"):
            # registered (lib/conf/conf.c), or a name of the API
            return re.search(r"\b%s\b" % name, self.api()) is not None
        for f in glob.glob(os.path.join(self.root, "devtools/*")) + \
                glob.glob(os.path.join(self.root, "test/**/*.sh"),
                          recursive=True):
            if os.path.isfile(f):
                with open(f, errors="replace") as fh:
                    if name in fh.read():
                        return True
        return False


def spans(text):
    """The code spans of markdown, or of a man page's bold/italic runs."""
    return re.findall(r"`([^`\n]+)`", text)


def check_paths(tree, doc, text, out):
    base = os.path.dirname(doc)
    for s in spans(text):
        for tok in s.split():
            tok = tok.strip("(),.;:'\"")
            if not tok.startswith(TOP) or PLACEHOLDER.search(tok):
                continue
            if not tree.exists(tok.rstrip("/")):
                out.append(("path", tok))
    # links to other guides and files: [text](target)
    for target in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
            continue
        rel = os.path.normpath(os.path.join(base, target))
        if not tree.exists(rel):
            out.append(("path", target))


def check_functions(tree, text, out):
    code = tree.code()
    for name in set(re.findall(r"\b([a-z_][a-z0-9_]*)\(\)", text)):
        if not name.startswith(OUR_PREFIXES):
            continue
        if not re.search(r"\b%s\b" % re.escape(name), code):
            out.append(("function", name + "()"))


def check_man(tree, text, out):
    for name, sec in set(re.findall(r"\b(dpdat_[a-z0-9_]+|fi_dpdat)\((3|7)\)",
                                    text)):
        if not tree.exists("doc/man/%s.%s" % (name, sec)):
            out.append(("man", "%s(%s)" % (name, sec)))
    # man page markup: .BR name (3)
    for name, sec in set(re.findall(r"^\.BR? (dpdat_[a-z0-9_]+) \((3|7)\)",
                                    text, re.M)):
        if not tree.exists("doc/man/%s.%s" % (name, sec)):
            out.append(("man", "%s(%s)" % (name, sec)))


def flags_of(words):
    """The --flags that belong to the command starting words."""
    tool = os.path.basename(words[0])
    flags = []
    takes_value = {"--dev", "--ip", "--mtu", "--env", "--link"}
    i = 1
    while i < len(words):
        w = words[i]
        if w in ("|", "||", "&&", ";") or w.startswith(("|", ">", "2>")):
            break
        if w.startswith("--") and len(w) > 2:
            flags.append(w.split("=")[0])
            if tool == "dpdat-run" and w in takes_value:
                i += 1
        elif tool == "dpdat-run" and not w.startswith("-"):
            break	# the program and its arguments
        i += 1
    return tool, flags


def check_flags(tree, text, out):
    for s in spans(text):
        words = s.split()
        for k, w in enumerate(words):
            tool = os.path.basename(w)
            if tool not in TOOLS:
                continue
            tool, flags = flags_of(words[k:])
            src = tree.tool_src(tool)
            for f in flags:
                bare = f[2:]
                if PLACEHOLDER.search(bare):
                    continue
                if f not in src and '"%s"' % bare not in src:
                    out.append(("flag", "%s %s" % (tool, f)))


def check_settings(tree, text, out):
    for name in set(re.findall(r"\b((?:DPDAT|BENCH)_[A-Z0-9_]+[A-Z0-9])\b",
                               text)):
        if name not in DELIBERATE and not tree.setting(name):
            out.append(("setting", name))


def check_suites(tree, text, out):
    for name in set(re.findall(r"--(?:no-)?suite[ =]([a-z0-9_+-]+)", text)):
        if name not in tree.suites():
            out.append(("suite", name))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root, rest, expect = argv[1], argv[2:], None
    if rest[:1] == ["--expect"]:
        expect, rest = int(rest[1]), rest[2:]
    files = rest or (["README.md", "CONTRIBUTING.md"] +
                     sorted(glob.glob(os.path.join(root, "doc/guides/*.md"))) +
                     sorted(glob.glob(os.path.join(root, "doc/man/*.[37]"))))
    tree = Tree(root)
    found = 0
    for f in files:
        path = f if os.path.isabs(f) else os.path.join(root, f)
        rel = os.path.relpath(path, root)
        with open(path, errors="replace") as fh:
            text = fh.read()
        # a man page's title line names the page itself, in capitals
        text = re.sub(r"^\.TH .*$", "", text, flags=re.M)
        out = []
        check_paths(tree, rel, text, out)
        check_functions(tree, text, out)
        check_man(tree, text, out)
        check_flags(tree, text, out)
        check_settings(tree, text, out)
        check_suites(tree, text, out)
        for kind, name in sorted(set(out)):
            print("%s: %s %s: not in the tree" % (rel, kind, name))
        found += len(set(out))
    if expect is not None:
        print("docs_check: %d stale names, %d expected" % (found, expect))
        return 0 if found == expect else 1
    print("docs_check: %d files, %d stale names" % (len(files), found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
