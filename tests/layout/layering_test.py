#!/usr/bin/env python3
"""The layers of tuner/ hold (docs/architecture.md): core includes nothing from cuda or cli, cli
nothing from cuda, and no .cpp grows past the size a reader can hold (about 500 lines) unless its
first lines say why (a comment containing 'longer than 500 lines because')."""
import re
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUNER = ROOT / "tuner"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](tuner/[^>"]+)[>"]', re.M)
FORBIDDEN = {"core": ("tuner/cuda/", "tuner/cli/"), "cli": ("tuner/cuda/",), "cuda": ("tuner/cli/",)}
MAX_LINES = 500


def sources(layer):
    return sorted(p for p in (TUNER / layer).rglob("*") if p.suffix in (".cpp", ".hpp", ".in"))


class Layering(unittest.TestCase):
    def test_no_layer_includes_upward(self):
        for layer, forbidden in FORBIDDEN.items():
            for path in sources(layer):
                for inc in INCLUDE.findall(path.read_text()):
                    with self.subTest(file=str(path.relative_to(ROOT)), include=inc):
                        self.assertFalse(inc.startswith(forbidden),
                                         f"{path.relative_to(ROOT)} includes <{inc}>")

    def test_core_includes_no_cuda_header(self):
        for path in sources("core"):
            self.assertNotRegex(path.read_text(), r'#\s*include\s*[<"](cuda|cuda_runtime|nvml)',
                                str(path.relative_to(ROOT)))

    def test_no_source_file_is_too_long_without_saying_why(self):
        for layer in FORBIDDEN:
            for path in sources(layer):
                if path.suffix != ".cpp":
                    continue
                text = path.read_text()
                lines = text.count("\n")
                head = "\n".join(text.splitlines()[:10])
                with self.subTest(file=str(path.relative_to(ROOT))):
                    self.assertTrue(lines <= MAX_LINES or "longer than 500 lines because" in head,
                                    f"{path.relative_to(ROOT)} has {lines} lines")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
