#!/usr/bin/env python3
"""Every file name made from a bucket label goes through bucket_file_name
(tuner/core/base/bucket_name.hpp), which bounds it: a long label once killed `tuner run --shard`
with `File name too long` because a shard log was named by hand. This test fails when code in
tuner/ encodes a bucket label or names a per-bucket file any other way.

Usage: bounded_names_test.py [--root <repository>]
"""
import argparse
import re
import sys
from pathlib import Path

# The one place allowed to call encode_bucket to make a name.
HOME = {"tuner/core/base/bucket_name.cpp", "tuner/core/base/bucket_name.hpp",
        "tuner/core/base/safe_file.cpp", "tuner/core/base/safe_file.hpp"}

RULES = [
    (re.compile(r"\bencode_bucket\s*\("),
     "encode_bucket(...) outside bucket_name.cpp: use bucket_file_name(label, suffix)"),
    (re.compile(r"\bbounded_file_name\s*\("),
     "bounded_file_name(...) called directly: use bucket_file_name(label, suffix)"),
    # A per-bucket suffix glued onto something by hand: `x + ".trials.jsonl"`, `x += ".lock"`.
    (re.compile(r"(\+|\+=)\s*\"\.(result\.json|trials\.jsonl|merged\.trials\.jsonl|shard-)"),
     "a per-bucket file name built by concatenation: use bucket_file_name(label, suffix)"),
]


def code_lines(text):
    """(number, line) for each line, comments removed (// to the end of the line)."""
    for n, line in enumerate(text.splitlines(), 1):
        yield n, re.sub(r"//.*", "", line)


def offences(root):
    out = []
    for path in sorted((root / "tuner").rglob("*")):
        if path.suffix not in (".cpp", ".hpp"):
            continue
        rel = path.relative_to(root).as_posix()
        for n, line in code_lines(path.read_text(encoding="utf-8")):
            for pattern, why in RULES:
                if rel in HOME or "bucket_file_name(" in line:
                    continue
                if pattern.search(line):
                    out.append(f"{rel}:{n}: {why}\n    {line.strip()}")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=Path(__file__).resolve().parents[2])
    root = Path(parser.parse_args().root)
    found = offences(root)
    # The check must be able to fail: a construction of the old kind is found.
    probe = 'const fs::path p = dir / (encode_bucket(b) + ".shard-1-of-2.trials.jsonl");'
    assert any(pat.search(probe) for pat, _ in RULES), "the rules no longer catch the old bug"
    if found:
        print("\n".join(found))
        print(f"{len(found)} file names made from a bucket label outside bucket_file_name")
        return 1
    print("every bucket file name goes through bucket_file_name")
    return 0


if __name__ == "__main__":
    sys.exit(main())
