"""Grade submitted lab notebooks from their files alone, without a kernel (the same grading as nbgrader with
labs/nbgrader_config.py), and optionally write a gradebook CSV:

    python labs/regrade.py submitted/*/attention_lab/attention_lab.ipynb --csv regrade.csv
"""

import sys

from mha_lib.exercises.lab import _main

if __name__ == "__main__":
    sys.exit(_main(["regrade", *sys.argv[1:]]))
