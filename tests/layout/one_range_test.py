#!/usr/bin/env python3
"""One range for one setting, wherever it is checked: the configure's check of TUNE_WARM_JOBS
(cmake/TuneKernel.cmake, _TUNE_MAX_JOBS) and the tuner's range for --compile-jobs, which the
tune rule passes it to (max_jobs in tuner/core/base/input_limits.hpp), are the same number,
and the CLI names the constant instead of a literal of its own. A build whose TUNE_WARM_JOBS
passed the configure failed its tune target on the CLI's range before."""
import re
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class OneRange(unittest.TestCase):
    def test_warm_jobs_and_compile_jobs_share_their_limit(self):
        header = (ROOT / "tuner/core/base/input_limits.hpp").read_text()
        core = re.search(r"inline constexpr long max_jobs = (\d+);", header)
        self.assertIsNotNone(core, "max_jobs in input_limits.hpp")
        cmake = re.search(r"set\(_TUNE_MAX_JOBS (\d+)\)",
                          (ROOT / "cmake/TuneKernel.cmake").read_text())
        self.assertIsNotNone(cmake, "the TUNE_WARM_JOBS check in TuneKernel.cmake")
        self.assertEqual(cmake.group(1), core.group(1))
        for name in ["cmd_run.cpp", "cmd_tune.cpp"]:
            text = (ROOT / "tuner/cli" / name).read_text()
            self.assertIn('"--compile-jobs"', text)
            self.assertIn("whole_number(1, max_jobs)", text, name)
        ahead = (ROOT / "tuner/core/search/compile_ahead.cpp").read_text()
        self.assertIn('env_whole_number("TUNE_COMPILE_JOBS", 1, max_jobs)', ahead)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
