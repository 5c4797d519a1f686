#!/usr/bin/env python3
"""tune_embed_winners and tune_generate_header after an edit of a header the kernel includes:
an incremental build does what a clean build does.

The consumer (tests/cmake/embed, over the kernels of tests/cmake/consumer) embeds the winners
of `scale`, which includes include/scale_tile.cuh, and generates its winners header. It takes
tune's functions alone (cmake/Tune.cmake, with this build's tuner) and a stand-in for
tune::runtime, and the test builds the generated files only (the embedded source and the
header), with the real nvcc compiling the winners: nothing of tune is compiled. The steps build
on each other (one build tree), so they run in order: test_1 ... test_5.
"""

import json
import shutil
import unittest

import consumer
from consumer import HERE, Project

EMBEDDED = "tune_embed/app/scale_embedded.cpp"
HEADER = "winners/scale_winners.hpp"
STALE = ("tuner embed: error: the record records/scale.json of 'scale' is stale: its winners are "
         "not what this build would compile (set TUNE_ALLOW_STALE=ON to embed it anyway)")
PINS = (("small", "BLOCK=128,UNROLL=2"), ("large", "BLOCK=256,UNROLL=1"))


class EmbedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Project("embed")
        shutil.copytree(HERE / "embed", cls.p.src, dirs_exist_ok=True)
        cls.configure = cls.p.configure()
        assert cls.configure.rc == 0, cls.configure
        cls.tile = cls.p.src / "include" / "scale_tile.cuh"
        cls.record = cls.p.src / "records" / "scale.json"
        cls.digests = cls.p.build / "tune_embed" / "app" / "scale_embedded.json"

    def build(self, target, build=None):
        return consumer.run([consumer.ARGS.cmake, "--build", build or self.p.build,
                             "--target", target], env=self.p.env)

    def pin(self):
        for bucket, config in PINS:
            r = self.p.tuner("record", "set", "--manifest", self.p.manifest("scale"),
                             "--bucket", bucket, "--config", config)
            self.assertEqual(r.rc, 0, r)

    def current_key(self, config):
        r = self.p.tuner("key", "--manifest", self.p.manifest("scale"), "--config", config)
        self.assertEqual(r.rc, 0, r)
        return r.stdout.strip()

    def embedded_keys(self):
        images = json.loads(self.digests.read_text())["images"]
        return {im["bucket"]: im["key"] for im in images}

    def record_keys(self):
        entries = json.loads(self.record.read_text())["entries"]
        return {e["bucket"]: e["cache_key"]["digest"] for e in entries}

    def edit_tile(self, note):
        self.tile.write_text(self.tile.read_text() + f"// {note}\n")

    def test_1_pinned_winners_embed_and_a_second_build_does_nothing(self):
        self.pin()
        for target in (EMBEDDED, HEADER):
            b = self.build(target)
            self.assertEqual(b.rc, 0, b)
        self.assertEqual(self.embedded_keys(), self.record_keys())
        self.assertEqual(len(self.p.compile_log()), 2)
        self.assertIn(", fresh\n", (self.p.build / HEADER).read_text())
        # The default namespace is tune's own, under the target's name: a library's namespace
        # (mylib::scale) is left to the library.
        embedded = (self.p.build / EMBEDDED).with_suffix(".hpp").read_text()
        self.assertIn("\nnamespace tune_winners::app::scale {\n", embedded)
        self.assertNotIn("namespace app::scale", embedded)
        # Everything the depfiles name exists: nothing runs again.
        for target in (EMBEDDED, HEADER):
            again = self.build(target)
            self.assertEqual(again.rc, 0, again)
            self.assertIn("ninja: no work to do.", again.stdout)

    def test_2_a_header_edit_fails_the_incremental_build_as_a_clean_one(self):
        self.edit_tile("edited after pinning")
        embed = self.build(EMBEDDED)
        self.assertNotEqual(embed.rc, 0, embed)
        self.assertIn(STALE, embed.stdout)
        self.assertIn("records/scale.json: note: the cache key of entries 'large', 'small' "
                      "changed: 'scale_tile.cuh' changed",
                      embed.stdout)
        # The winners header still generates, and says the record is stale.
        header = self.build(HEADER)
        self.assertEqual(header.rc, 0, header)
        self.assertIn("records/scale.json: warning: stale record used for the header of 'scale' "
                      "sm_90: entry 'large' cache_key: record has 'k1:", header.stdout)
        self.assertIn("// sm_90: stale record records/scale.json (", (self.p.build / HEADER)
                      .read_text())
        # A clean build tree of the same sources says the same.
        clean = self.p.root / "clean"
        r = self.p.configure(build=clean)
        self.assertEqual(r.rc, 0, r)
        embed = self.build(EMBEDDED, build=clean)
        self.assertNotEqual(embed.rc, 0, embed)
        self.assertIn(STALE, embed.stdout)
        shutil.rmtree(clean)

    def test_3_allow_stale_embeds_the_current_build_after_each_edit(self):
        r = self.p.configure("-DTUNE_ALLOW_STALE=ON")
        self.assertEqual(r.rc, 0, r)
        b = self.build(EMBEDDED)
        self.assertEqual(b.rc, 0, b)
        self.assertIn("(embedded anyway: TUNE_ALLOW_STALE)", b.stdout)
        current = {bucket: self.current_key(config) for bucket, config in PINS}
        self.assertEqual(self.embedded_keys(), current)
        self.assertEqual(len(self.p.compile_log()), 4)
        # A second edit: the step runs again on its own, and embeds what this build compiles.
        self.edit_tile("edited again")
        b = self.build(EMBEDDED)
        self.assertEqual(b.rc, 0, b)
        self.assertIn("Embedding the winners of scale into app", b.stdout)
        newer = {bucket: self.current_key(config) for bucket, config in PINS}
        self.assertNotEqual(newer, current)
        self.assertEqual(self.embedded_keys(), newer)
        self.assertIn(newer["small"], (self.p.build / EMBEDDED).read_text())
        self.assertEqual(len(self.p.compile_log()), 6)

    def test_4_pinning_again_makes_it_fresh(self):
        r = self.p.configure("-DTUNE_ALLOW_STALE=OFF")
        self.assertEqual(r.rc, 0, r)
        self.pin()
        for target in (EMBEDDED, HEADER):
            b = self.build(target)
            self.assertEqual(b.rc, 0, b)
            self.assertNotIn("warning", b.stdout)
        self.assertEqual(self.embedded_keys(), self.record_keys())
        self.assertIn(", fresh\n", (self.p.build / HEADER).read_text())
        # The default namespace is tune's own, under the target's name: a library's namespace
        # (mylib::scale) is left to the library.
        embedded = (self.p.build / EMBEDDED).with_suffix(".hpp").read_text()
        self.assertIn("\nnamespace tune_winners::app::scale {\n", embedded)
        self.assertNotIn("namespace app::scale", embedded)
        self.assertEqual(len(self.p.compile_log()), 6)  # the current build was embedded before
        tests = self.p.ctest("record.scale")
        self.assertEqual(tests.rc, 0, tests)

    def test_5_a_cubin_gone_from_the_cache_is_compiled_again(self):
        key = self.record_keys()["small"]
        (self.p.build / "tune" / "cache" / f"{key}.cubin").unlink()
        b = self.build(EMBEDDED)
        self.assertEqual(b.rc, 0, b)
        self.assertIn("Embedding the winners of scale into app", b.stdout)
        self.assertEqual(self.p.compile_log()[-1], (key, "BLOCK=128,UNROLL=2"))
        self.assertTrue((self.p.build / "tune" / "cache" / f"{key}.cubin").exists())


if __name__ == "__main__":
    consumer.main()
