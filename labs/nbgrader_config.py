# nbgrader configuration for the attention lab: copy it into the course directory (the folder with source/).
#
# Autograde grades every part of the lab from the submitted notebook's cells, outside the student's kernel
# (mha_lib.exercises.lab.GradeFromTheFile, after nbgrader's Execute): nothing a submission does to its own kernel
# can change its grade, and grades.csv and the feedback are what `python labs/regrade.py` gives.
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    Execute,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from mha_lib.exercises import lab

c = get_config()  # noqa: F821 - nbgrader's config loader defines it

os.environ[lab.GRADED_FROM_THE_FILE] = "1"  # the test cells in the student's kernel leave grading to GradeFromTheFile
c.Autograde.autograde_preprocessors = [
    Execute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    lab.GradeFromTheFile,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
c.Execute.timeout = 120  # seconds per cell: the student's own cells, on a loaded grading machine
