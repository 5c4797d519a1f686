"""What every CLI test script (tests/cli/*_cli.py) takes from ctest: --tuner <tuner executable>,
--data <tests/data> and --work <scratch folder>. Unknown arguments are left to unittest."""
import argparse
import os
from pathlib import Path


def paths():
    """(the tuner as an absolute path, tests/data resolved, the scratch folder resolved)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tuner", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    args, _ = parser.parse_known_args()
    return os.path.abspath(args.tuner), Path(args.data).resolve(), Path(args.work).resolve()
