#!/usr/bin/env python3
"""What a product that embeds winners links of tune: tune::runtime alone.

The consumer (tests/cmake/runtime over the kernels of tests/cmake/consumer, tune through
add_subdirectory) ships a C++17 static library `mylib` that embeds the winners of `scale` with
FALLBACK first_incumbent, and a program `app` that links it. The library compiles without C++20
or fmt's definitions, the program links libtune_runtime.a and nothing of tune_core, fmt,
OpenSSL or curl, and every image carries its own params, the fallback's included. Only
tune_runtime of tune is compiled (the tuner is this build's).
"""

import os
import re
import shutil
import unittest

import consumer
from consumer import HERE, Project

PINS = (("small", "BLOCK=128,UNROLL=2"), ("large", "BLOCK=256,UNROLL=1"))


class RuntimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.p = Project("runtime")
        shutil.copytree(HERE / "runtime", cls.p.src, dirs_exist_ok=True)
        # An incumbent that no bucket wins: the fallback image is an extra one, of its config.
        space = cls.p.src / "spaces" / "scale.toml"
        space.write_text(space.read_text().replace(
            'prune = ["BLOCK * UNROLL <= N"]\n',
            'prune = ["BLOCK * UNROLL <= N"]\nrequire = [{ BLOCK = 256, UNROLL = 2 }]\n'))
        cls.configure = cls.p.configure()
        assert cls.configure.rc == 0, cls.configure
        for bucket, config in PINS:
            r = cls.p.tuner("record", "set", "--manifest", cls.p.manifest("scale"),
                            "--bucket", bucket, "--config", config)
            assert r.rc == 0, r
        cls.built = cls.p.build_target("app")

    def ninja_commands(self, target):
        r = consumer.run(["ninja", "-C", self.p.build, "-t", "commands", target])
        self.assertEqual(r.rc, 0, r)
        return r.stdout.splitlines()

    def test_1_the_program_links_the_runtime_and_nothing_of_the_tuner(self):
        self.assertEqual(self.built.rc, 0, self.built)
        link = [c for c in self.ninja_commands("app") if re.search(r"-o app(\s|$)", c)]
        self.assertEqual(len(link), 1, link)
        self.assertIn("libtune_runtime.a", link[0])
        for heavy in ("libtune_core", "libtune_cuda", "fmt", "crypto", "ssl", "curl",
                      "toml"):
            self.assertNotIn(heavy, link[0])
        self.assertFalse((self.p.build / "tune" / "tuner" / "libtune_core.a").exists())

    def test_2_the_library_compiles_as_cxx17_without_fmt(self):
        compiles = [c for c in self.ninja_commands("mylib") if " -c " in c and "mylib" in c]
        self.assertTrue(any("mylib.cpp" in c for c in compiles), compiles)
        for c in compiles:
            self.assertNotIn("c++20", c)
            self.assertNotIn("gnu++20", c)
            self.assertNotIn("FMT_", c)
            if "tune_embed" in c or "mylib.cpp" in c:
                self.assertRegex(c, r"-std=(gnu|c)\+\+17")

    def test_3_every_image_carries_its_params_the_fallback_its_own(self):
        env = dict(self.p.env, TUNE_LIBCUDA=str(self.p.root / "no-libcuda.so.1"))
        r = consumer.run([self.p.build / "app"], env=env)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(
            r.stdout,
            "sm_90:\n"
            "small sm_90 BLOCK=128,UNROLL=2 BLOCK=128 UNROLL=2\n"
            "large sm_90 BLOCK=256,UNROLL=1 BLOCK=256 UNROLL=1\n"
            "sm_86:\n"
            "(fallback) sm_90 BLOCK=256,UNROLL=2 BLOCK=256 UNROLL=2\n"
            "(fallback) sm_90 BLOCK=256,UNROLL=2 BLOCK=256 UNROLL=2\n"
            f"load: no CUDA driver: {self.p.root / 'no-libcuda.so.1'} not found (is the NVIDIA "
            "driver installed?)\n")


if __name__ == "__main__":
    consumer.main()
