#!/usr/bin/env python3
"""The repository's references resolve inside it.

- Every markdown link `[text](target)` of a .md file points to an existing file, and its
  `#anchor`, when it has one, to a heading of that file (GitHub's anchor rules).
- Every reference to a section written as text, `docs/<page>.md "<Heading>"` or
  `<page>.md "<Heading>"` (in code comments, CMake, scripts and docs alike, possibly wrapped
  over a comment line), names a page that exists and a heading it has; a heading with a
  trailing parenthesis (`## Fault injection (tuner/core/base/fault_inject.hpp)`) also answers to
  the text before it.
- Every `<name>.md` the repository mentions exists in it, and no path climbs out of it to the
  sibling `shared` folder (OUTSIDE below): a clone must be able to follow every pointer.

Usage: check_docs.py [--root <source dir>]; exit status 1 with one line per broken reference.
"""
import argparse
import os
import re
import subprocess
import sys

# Files whose references are not checked yet, each with the reason. The entry must be removed
# once the file is fixed or gone: the test fails on an entry that no longer excuses anything.
PENDING: dict = {}

SKIP_DIRS = ("tests/data/",)
TEXT_SUFFIXES = (".md", ".hpp", ".cpp", ".cuh", ".cu", ".h", ".py", ".sh", ".cmake", ".txt",
                 ".toml", ".in", ".json", ".yml", ".yaml")
OUTSIDE = "../" + "shared"  # spelled in two parts so that this file does not trip its own check

LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
# A page, an optional closing parenthesis (of a markdown link) and comma, then a quoted heading,
# which may start on the next comment line.
SECTION_REF = re.compile(
    r"((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)\)?,?[ \t]*(?:\n[ \t]*(?:/{2,3}|#|\*)?[ \t]*)?"
    r"\"([^\"]{1,160})\"")
MD_NAME = re.compile(r"(?<![A-Za-z0-9_./-])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)(?![A-Za-z0-9_])")
WRAP = re.compile(r"[ \t]*\n[ \t]*(?:/{2,3}|#|\*)?[ \t]*")


def repository_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        files = [f for f in out.splitlines() if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and
                           not (rel == "." and d.startswith("build"))]
            for f in filenames:
                files.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)))


def headings(text):
    """The headings of a markdown text (outside fenced code), markup removed, in order."""
    out, fence = [], None
    for line in text.splitlines():
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                out.append(h.group(1).replace("`", "").replace("*", ""))
    return out


def anchors(titles):
    """GitHub's anchors of the headings: lowercase, punctuation dropped, spaces as hyphens, a
    counter after repeats."""
    seen, out = {}, set()
    for t in titles:
        slug = re.sub(r"[^\w\- ]", "", t.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def has_heading(titles, wanted):
    wanted = wanted.replace("`", "")
    return any(t == wanted or t.startswith(wanted + " (") for t in titles)


def line_of(text, index):
    return text.count("\n", 0, index) + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    root = os.path.abspath(ap.parse_args().root)

    files = repository_files(root)
    md_names = {os.path.basename(f) for f in files if f.endswith(".md")}
    cache = {}

    def read(rel):
        if rel not in cache:
            with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                cache[rel] = f.read()
        return cache[rel]

    def resolve(page, source):
        """The repository path `page` names when written in `source`, or None."""
        here = os.path.dirname(source)
        for candidate in (os.path.join(here, page), page, os.path.join("docs", page)):
            candidate = os.path.normpath(candidate)
            if os.path.isfile(os.path.join(root, candidate)):
                return candidate
        return None

    problems = []
    excused = set()
    me = os.path.relpath(os.path.abspath(__file__), root)
    for rel in files:
        if rel == me or rel.startswith(SKIP_DIRS) or not rel.endswith(TEXT_SUFFIXES):
            continue
        if os.path.getsize(os.path.join(root, rel)) > 1_000_000:
            continue
        text = read(rel)
        found = []

        if OUTSIDE in text:
            found.append((line_of(text, text.index(OUTSIDE)), f"points outside the repository "
                          f"('{OUTSIDE}')"))
        for m in MD_NAME.finditer(text):
            name = m.group(1)  # never part of a URL: the match cannot start after a '/'
            if resolve(name, rel) is None and os.path.basename(name) not in md_names:
                found.append((line_of(text, m.start()), f"names '{name}', which is not in the "
                              "repository"))
        for m in SECTION_REF.finditer(text):
            page, title = m.group(1), WRAP.sub(" ", m.group(2)).strip()
            target = resolve(page, rel)
            if target is None:
                continue  # reported above as a missing page
            if not has_heading(headings(read(target)), title):
                found.append((line_of(text, m.start()), f"'{page} \"{title}\"': {target} has no "
                              "such heading"))
        if rel.endswith(".md"):
            for m in LINK.finditer(text):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
                if not os.path.exists(os.path.join(root, dest)):
                    found.append((line_of(text, m.start()), f"link to '{target}': no file "
                                  f"'{dest}'"))
                elif anchor and dest.endswith(".md") and \
                        anchor not in anchors(headings(read(dest))):
                    found.append((line_of(text, m.start()), f"link to '{target}': {dest} has no "
                                  f"heading with the anchor '#{anchor}'"))

        if rel in PENDING:
            if found:
                excused.add(rel)
            continue
        problems += [f"{rel}:{line}: {what}" for line, what in found]

    for rel, why in PENDING.items():
        if rel not in excused:
            problems.append(f"{os.path.relpath(os.path.abspath(__file__), root)}: PENDING lists "
                            f"'{rel}' ({why}), which has no broken reference any more (or is "
                            "gone): remove the entry")
    for p in problems:
        print(p)
    print(f"checked {len(files)} files: {len(problems)} broken reference"
          f"{'' if len(problems) == 1 else 's'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
