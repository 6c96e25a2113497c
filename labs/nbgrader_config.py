# nbgrader configuration for the attention lab: copy it into the course directory (the folder with source/).
#
# Autograde never runs a submission in a kernel: nbgrader's Execute step is left out, and every part of the lab is
# graded from the submitted notebook's cells (mha_lib.exercises.lab.GradeFromTheFile), which run in the lab's sandbox
# (a fresh Python that can read only numpy's and Python's own files, write nothing, start nothing, and not import
# mha_lib). So a submission can change neither its own grade nor anything else (the gradebook, this file, another
# student's notebook), and grades.csv and the feedback are what `python labs/regrade.py` gives. The feedback shows
# each part's verdict under the student's code (the code's own outputs are not re-made).
#
# The feedback pages (nbgrader generate_feedback) and the formgrader show the student's cells as HTML: what a student
# wrote there (a markdown cell's <img onerror=...>, an output's <script>) is made harmless, not run.
import os

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    IgnorePattern,
    LimitOutput,
    SaveAutoGrades,
)

from mha_lib.exercises import lab

c = get_config()  # noqa: F821 - nbgrader's config loader defines it

os.environ[lab.GRADED_FROM_THE_FILE] = "1"  # (a test cell run in a kernel after all leaves grading to GradeFromTheFile)
c.Autograde.autograde_preprocessors = [
    IgnorePattern,
    ClearMetadataPreprocessor,
    lab.GradeFromTheFile,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]

# HTML pages of the student's notebook (feedback, formgrader): markdown cells cleaned after rendering (nbgrader's own
# templates apply strip_files_prefix to each, and nbconvert's sanitize_html does not reach them), outputs sanitized
c.HTMLExporter.filters = {"strip_files_prefix": lab.feedback_html}
c.HTMLExporter.sanitize_html = True

# The inputs of each part come from a fixed seed made of a course number and the part, so a notebook gets the same
# grade every time. For credit, set a number of your own here, in the course's copy only (docs/teaching.md, "The
# inputs of a course"), and the same for labs/regrade.py:
# os.environ[lab.LAB_SEED] = "40962"
