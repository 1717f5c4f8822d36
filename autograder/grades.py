"""`make grades`: same as `python -m autograder grades ARGS` (see autograder/__main__.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.__main__ import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["grades", *sys.argv[1:]]))
