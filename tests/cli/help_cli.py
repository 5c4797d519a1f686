#!/usr/bin/env python3
"""Every subcommand's --help, and each of their own subcommands', ends with the exit status it
returns ("Exit status: ..."), which CI scripts read; the subcommands are those `tuner --help`
lists, so a new one without the section fails here."""
import re
import subprocess
import sys
import unittest

import clitest

TUNER, DATA, WORK = clitest.paths()


def subcommands(*path):
    """The subcommands `tuner <path> --help` lists, and that page."""
    r = subprocess.run([TUNER, *path, "--help"], capture_output=True, text=True,
                       env=clitest.env())
    assert r.returncode == 0, (path, r.stderr)
    listed = r.stdout.split("\nSubcommands:\n", 1)
    names = re.findall(r"^  (\S+)  ", listed[1], re.M) if len(listed) == 2 else []
    return names, r.stdout


class HelpCli(unittest.TestCase):
    def test_every_help_page_says_its_exit_status(self):
        top, _ = subcommands()
        self.assertIn("status", top)
        self.assertIn("verify", top)
        pages = 0
        for name in top:
            nested, page = subcommands(name)
            with self.subTest(page=name):
                self.assertRegex(page, r"\nExit status: ", page)
            pages += 1
            for inner in nested:
                _, inner_page = subcommands(name, inner)
                with self.subTest(page=f"{name} {inner}"):
                    self.assertRegex(inner_page, r"\nExit status: ", inner_page)
                pages += 1
        self.assertGreaterEqual(pages, 25)

    def test_status_help_says_it_reads_the_declared_kernels(self):
        _, page = subcommands("status")
        self.assertIn("every kernel the build tree's last configure declared "
                      "(<dir>/tune/kernels.list; default: build)", " ".join(page.split()))
        self.assertIn("Exit status: 0 printed (with --check: every record fresh), 1 with --check "
                      "when any record is stale, missing or unreadable, 2 bad usage or input (no "
                      "manifest found, or one that does not read), 3 nvcc cannot be run.",
                      " ".join(page.split()))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
