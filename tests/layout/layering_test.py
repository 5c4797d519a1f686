#!/usr/bin/env python3
"""The layers of tuner/ hold (docs/architecture.md): core includes nothing from cuda or cli, cli
nothing from cuda; inside core, each area (a folder of tuner/core/) includes only itself and the
areas below it (AREAS); and no .cpp grows past the size a reader can hold (about 500 lines)
unless its first lines say why (a comment containing 'longer than 500 lines because')."""
import re
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUNER = ROOT / "tuner"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](tuner/[^>"]+)[>"]', re.M)
FORBIDDEN = {"core": ("tuner/cuda/", "tuner/cli/"), "cli": ("tuner/cuda/",), "cuda": ("tuner/cli/",)}
MAX_LINES = 500

# The areas of core, each with the areas it may include besides itself (docs/architecture.md
# "The areas of core"). base is below everything; no area includes one above it.
AREAS = {
    "base": set(),
    "process": {"base"},
    "space": {"base"},
    "build": {"base", "process", "space"},
    "search": {"base", "process", "space"},
    "store": {"base", "process", "space", "build", "search"},
    "record": {"base", "process", "space", "build", "search"},
    "tune": {"base", "process", "space", "build", "search", "store", "record"},
    "scale": {"base", "process", "space", "build", "search", "store", "record", "tune"},
}


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

    def test_core_is_in_its_areas(self):
        core = TUNER / "core"
        loose = [p.name for p in core.iterdir() if p.is_file()]
        self.assertEqual(loose, [], "every core file lives in the folder of its area")
        folders = {p.name for p in core.iterdir() if p.is_dir()}
        self.assertEqual(folders, set(AREAS), "the folders of tuner/core/ are the areas of AREAS")

    def test_no_area_includes_one_above_it(self):
        offending = []
        for path in sources("core"):
            area = path.relative_to(TUNER / "core").parts[0]
            allowed = AREAS.get(area, set()) | {area}
            for inc in INCLUDE.findall(path.read_text()):
                parts = inc.split("/")
                if parts[:2] != ["tuner", "core"] or len(parts) < 4:
                    continue
                if parts[2] not in allowed:
                    offending.append(f"{path.relative_to(ROOT)}: #include <{inc}> ({area} may "
                                     f"include {', '.join(sorted(allowed))})")
        self.assertEqual(offending, [], "\n" + "\n".join(offending))

    def test_the_map_of_docs_architecture_md_names_every_header_where_it_is(self):
        # docs/architecture.md "The areas of core": one section per area (### `<area>/`), whose
        # table names its headers in backquotes; a reader finds each one there, and every
        # header of core is on the map.
        doc = (ROOT / 'docs' / 'architecture.md').read_text()
        mapped = set()
        for area, body in re.findall(r"^### `([a-z]+)/`[^\n]*\n\n((?:\|[^\n]*\n)+)", doc, re.M):
            for name in re.findall(r"`([a-z0-9_]+\.hpp)`", body):
                with self.subTest(area=area, header=name):
                    path = TUNER / "core" / area / name
                    generated = path.with_suffix(".hpp.in")
                    self.assertTrue(path.is_file() or generated.is_file(),
                                    f"docs/architecture.md maps {name} to tuner/core/{area}/")
                mapped.add(f"{area}/{name}")
        headers = {p.relative_to(TUNER / "core").as_posix().removesuffix(".in")
                   for p in (TUNER / "core").rglob("*.hpp*")}
        self.assertEqual(headers - mapped, set(), 'headers missing from docs/architecture.md')

    def test_a_candidate_has_one_path_through_the_candidate_store(self):
        # Warm, compile-ahead, the tune and embed get a compiled candidate from the candidate
        # store (tuner/core/store/candidate_store.hpp) only: nothing else compiles into the
        # kernel cache or fetches a candidate from the remote store. `tuner store pull` is the
        # store's own command and fetches on purpose.
        allowed = {"core/store/candidate_store.cpp", "core/build/kernel_cache.cpp",
                   "core/store/remote_store.cpp", "cli/cmd_store.cpp"}
        offending = []
        for layer in FORBIDDEN:
            for path in sources(layer):
                name = path.relative_to(TUNER).as_posix()
                if name in allowed or path.suffix != ".cpp":
                    continue
                for call in re.findall(r"\b(compile_into_cache|fetch_entry|upload_entry)\s*\(",
                                       path.read_text()):
                    offending.append(f"tuner/{name} calls {call}")
        self.assertEqual(offending, [], "\n" + "\n".join(offending))

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
