#!/usr/bin/env python3
"""Where the commands write and what they read from a build tree, against files that are not
regular files:

- `-o/--output` (export, report; header in header_cli.py) writes through a temporary renamed
  over a regular file or nothing: a FIFO, a device node or a directory there is refused with a
  message and left as it was (a rename replaced it with a regular file, and as root that
  destroyed /dev/full).
- A failed write to stdout (`> /dev/full`) makes every command that prints its result exit 3
  with a message, instead of 0 with the output lost.
- `status --build-dir` lists every kernel when one kernel's source is missing (an error row
  for it).
- A FIFO at <build>/tune/kernels.list no longer blocks `status --build-dir` (the CI gate) and
  `shards --build-dir`: the list is read only when it is a regular file.
"""
import os
import shutil
import stat
import subprocess
import sys
import unittest

import clitest

TUNER, DATA_ROOT, WORK = clitest.paths()
GEMM_LOG = DATA_ROOT / "records" / "gemm.trials.jsonl"
RUNNER_DATA = DATA_ROOT / "runner"


class OutputsCli(unittest.TestCase):
    def setUp(self):
        self.dir = WORK / self.id().split(".")[-1]
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)

    def tuner(self, *args, stdout=subprocess.PIPE):
        return subprocess.run([TUNER, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                              text=True, cwd=self.dir, env=clitest.env(), timeout=30)

    def targets(self):
        """(path, its file type test, its kind in the message) for a FIFO, a directory and,
        where this user may make one, a character device (a copy of /dev/null)."""
        fifo = self.dir / "fifo"
        os.mkfifo(fifo)
        folder = self.dir / "folder"
        folder.mkdir()
        out = [(fifo, stat.S_ISFIFO, "a FIFO"), (folder, stat.S_ISDIR, "a directory")]
        try:
            node = self.dir / "devnode"
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            out.append((node, stat.S_ISCHR, "a character device"))
        except OSError:
            pass  # not root here: the FIFO and the directory still show the rule
        return out

    def test_export_and_report_refuse_an_output_that_is_not_a_regular_file(self):
        for path, is_kind, kind in self.targets():
            for cmd in (["export", "--format", "t4", GEMM_LOG, "-o", path],
                        ["report", GEMM_LOG, "-o", path]):
                r = self.tuner(*cmd)
                self.assertNotEqual(r.returncode, 0, (cmd, r.stderr))
                self.assertIn(f"'{path}' is {kind}; tune writes a file only where a regular "
                              "file or nothing is", r.stderr)
                self.assertTrue(is_kind(os.lstat(path).st_mode), (cmd, kind))
                self.assertEqual([p.name for p in self.dir.iterdir() if ".tmp." in p.name], [])

    def test_a_regular_file_and_a_symlink_are_replaced(self):
        # The rule is what is there: a regular file is replaced; a link is replaced itself,
        # its target (here the FIFO) never written through.
        plain = self.dir / "plain.json"
        plain.write_text("old")
        self.assertEqual(self.tuner("export", "--format", "t4", GEMM_LOG, "-o", plain).returncode,
                         0)
        self.assertIn('"schema_version"', plain.read_text())
        fifo = self.dir / "fifo"
        os.mkfifo(fifo)
        link = self.dir / "link.json"
        link.symlink_to(fifo)
        r = self.tuner("export", "--format", "t4", GEMM_LOG, "-o", link)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(link.is_symlink())
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_a_failed_write_to_stdout_is_an_error(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        manifest = clitest.saxpy_tree(self.dir / "tree", clitest.NVCC,
                                      RUNNER_DATA / "fake_worker.py", DATA_ROOT)
        commands = [["export", "--format", "t4", GEMM_LOG], ["show", "--json", GEMM_LOG],
                    ["show", GEMM_LOG], ["report", "--json", GEMM_LOG],
                    ["status", "--json", "--manifest", manifest]]
        for cmd in commands:
            with open("/dev/full", "w") as full:
                r = self.tuner(*cmd, stdout=full)
            self.assertEqual(r.returncode, 3, (cmd, r.stderr))
            # (The reason, when the last write is the one that failed: No space left on device.)
            self.assertIn(f"tuner {cmd[0]}: error: cannot write the output to stdout", r.stderr)
            # The same command with somewhere to write succeeds (or answers as it would).
            self.assertNotEqual(self.tuner(*cmd).returncode, 3, cmd)

    def test_a_fifo_as_kernels_list_does_not_block_the_build_tree_readers(self):
        build = self.dir / "tree" / "build"
        clitest.saxpy_tree(self.dir / "tree", clitest.NVCC, RUNNER_DATA / "fake_worker.py",
                           DATA_ROOT)
        os.mkfifo(build / "tune" / "kernels.list")
        for cmd in (["status", "--build-dir", build], ["shards", "--build-dir", build,
                                                        "--count", 2]):
            try:
                r = self.tuner(*cmd)
            except subprocess.TimeoutExpired:
                self.fail(f"{cmd[0]} --build-dir blocked on a FIFO at kernels.list")
            # The kernels are found without the list, from their manifests.
            self.assertIn("saxpy", r.stdout + r.stderr, cmd)

    def test_a_kernel_whose_source_is_missing_is_one_error_row(self):
        # It made `status --build-dir` list nothing (the missing source was thrown past the
        # other kernels) and exit 2.
        top = self.dir / "tree"
        clitest.saxpy_tree(top, clitest.NVCC, RUNNER_DATA / "fake_worker.py", DATA_ROOT)
        build = top / "build"
        missing = top / "src" / "missing.cu"
        clitest.manifest(build / "tune" / "other" / "manifest.json", top / "src", "other",
                         build=build, sources=[missing], space=top / "src" / "saxpy.toml",
                         records={"sm_90": top / "src" / "other.json"}, nvcc=clitest.NVCC)
        (build / "tune" / "kernels.list").write_text("saxpy\nother\n")
        r = self.tuner("status", "--build-dir", build)
        self.assertEqual(r.returncode, 2, r.stderr)
        rows = r.stdout.splitlines()
        self.assertEqual(len(rows), 2, r.stdout)
        self.assertTrue(rows[0].startswith("saxpy "), r.stdout)
        self.assertIn("missing", rows[0])
        self.assertTrue(rows[1].startswith("other "), r.stdout)
        self.assertIn("error", rows[1])
        self.assertIn(f"source '{missing}' cannot be read", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
