"""What every CLI test script (tests/cli/*_cli.py) takes from ctest: --tuner <tuner executable>,
--data <tests/data> and --work <scratch folder>. Unknown arguments are left to unittest."""
import argparse
import os
from pathlib import Path

# What an objective or a fake worker reads (exec's OBJ_*, the runner tests' FAKE_*) and tune's
# own switches: none of an outer run's may leak into a test.
TEST_PREFIXES = ("OBJ_", "FAKE_", "TUNE_")


def paths():
    """(the tuner as an absolute path, tests/data resolved, the scratch folder resolved)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuner", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    args, _ = parser.parse_known_args()
    return os.path.abspath(args.tuner), Path(args.data).resolve(), Path(args.work).resolve()


def env(**settings):
    """This environment without TEST_PREFIXES variables, plus `settings` (values as strings)."""
    out = {k: v for k, v in os.environ.items() if not k.startswith(TEST_PREFIXES)}
    out.update({k: str(v) for k, v in settings.items()})
    return out
