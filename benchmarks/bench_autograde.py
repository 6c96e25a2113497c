"""How long nbgrader takes to autograde the lab (labs/attention_lab.ipynb), per submission.

    .venv/bin/python benchmarks/bench_autograde.py                 # 4 submissions (the solution, copied)
    .venv/bin/python benchmarks/bench_autograde.py --submissions 8

In a temporary course directory (removed at the end): ``nbgrader generate_assignment``, then N copies of the solution
submitted and graded with ``nbgrader autograde`` with the lab's ``labs/nbgrader_config.py`` (no kernel: for each of
the 7 parts a grader process and a sandbox process, lab.py's design), then ``nbgrader generate_feedback``; then
autograde again without the operating system's boundary around the sandbox (``MHA_LAB_BOUNDARY=off``), for its cost.
Prints the wall time and the CPU time (of nbgrader and every process it started) of each command and per submission,
the grading of one part alone (the grader and the sandbox, without nbgrader and a kernel), and the machine: cores and
load average before and after. On a busy machine the wall time grows with the load; the CPU time does not.
Needs nbgrader (requirements-dev.txt) and the trained model of notebook 09 (part 4 runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "labs" / "attention_lab.ipynb"
SOLUTION_REGION = re.compile(r"[ \t]*### BEGIN SOLUTION\n(.*?)[ \t]*### END SOLUTION\n?", re.S)


def cpu_of_children():
    """CPU seconds (user + system) used so far by the processes this one started and waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(course, env, *args):
    """Run an nbgrader command; return (wall seconds, CPU seconds of it and everything it started)."""
    start, cpu = time.perf_counter(), cpu_of_children()
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=3600,
    )
    if done.returncode:
        sys.exit(f"nbgrader {' '.join(args)} failed:\n{done.stdout[-3000:]}")
    return time.perf_counter() - start, cpu_of_children() - cpu


def solved(release_path):
    """The student version with the source's solutions filled in."""
    source = json.loads(LAB.read_text(encoding="utf-8"))
    answers = {
        c["metadata"]["nbgrader"]["grade_id"]: SOLUTION_REGION.sub(lambda m: m.group(1), "".join(c["source"]))
        for c in source["cells"]
        if c["metadata"].get("nbgrader", {}).get("solution")
    }
    nb = json.loads(release_path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            cell["source"] = answers[meta["grade_id"]]
    return nb


def one_part_alone(env=None):
    """Seconds to grade part 1 of the solution through lab.check (grader + sandbox, no nbgrader, no kernel)."""
    cell = next(
        "".join(c["source"])
        for c in json.loads(LAB.read_text(encoding="utf-8"))["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "my_masked_softmax"
    )
    code = (
        "import time\nimport numpy as np\nfrom mha_lib.exercises import lab\n"
        + SOLUTION_REGION.sub(lambda m: m.group(1), cell)
        + "\n"
        "t = time.perf_counter()\nv = lab.check('masked_softmax', globals())\ndt = time.perf_counter() - t\n"
        "assert v['passed'], v\nprint(dt)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True, timeout=300, env=env)
    if done.returncode:
        sys.exit(f"grading part 1 alone failed:\n{done.stderr[-3000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=4, help="how many copies of the solution to grade")
    args = parser.parse_args()
    if args.submissions < 1:
        parser.error(f"--submissions={args.submissions}: give 1 or more")
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="bench_autograde_"))
    try:
        course = tmp / "course"
        env = dict(
            os.environ,
            MPLBACKEND="Agg",
            OPENBLAS_NUM_THREADS="1",
            PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        )
        for var, sub in (
            ("JUPYTER_CONFIG_DIR", "config"),
            ("JUPYTER_RUNTIME_DIR", "runtime"),
            ("JUPYTER_DATA_DIR", "data"),
            ("IPYTHONDIR", "ipython"),
        ):
            (tmp / sub).mkdir()
            env[var] = str(tmp / sub)
        (course / "source" / "attention_lab").mkdir(parents=True)
        shutil.copy(LAB, course / "source" / "attention_lab" / LAB.name)
        (course / "nbgrader_config.py").write_text(
            (LAB.parent / "nbgrader_config.py").read_text(encoding="utf-8")  # the course's config, as the guide says
            + "\n"
            f"c.CourseDirectory.root = {str(course)!r}\n"
            f"c.CourseDirectory.db_url = {'sqlite:///' + str(course / 'gradebook.db')!r}\n"
            "c.CourseDirectory.course_id = 'bench'\n"
        )
        generate = run(course, env, "generate_assignment", "attention_lab", "--force")
        nb = solved(course / "release" / "attention_lab" / LAB.name)
        for i in range(args.submissions):
            folder = course / "submitted" / f"student{i + 1:03d}" / "attention_lab"
            folder.mkdir(parents=True)
            (folder / LAB.name).write_text(json.dumps(nb), encoding="utf-8")
        # with the operating system's boundary around the sandbox (where this machine has one), then without it
        autograde = run(course, env, "autograde", "attention_lab", "--force")
        feedback = run(course, env, "generate_feedback", "attention_lab", "--force")
        part = one_part_alone(env)
        off = dict(env, MHA_LAB_BOUNDARY="off")
        autograde_off = run(course, off, "autograde", "attention_lab", "--force")
        part_off = one_part_alone(off)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()
    from mha_lib.exercises import lab

    print(lab.boundary_note())
    print(
        f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
        f"{', '.join(f'{x:.2f}' for x in load_before)}, after {', '.join(f'{x:.2f}' for x in load_after)}"
    )
    n = args.submissions
    print(f"generate_assignment: {generate[0]:.1f} s ({generate[1]:.1f} s of CPU)")
    print(
        f"autograde, {n} submissions: {autograde[0]:.1f} s = {autograde[0] / n:.1f} s per submission "
        f"({300 * autograde[0] / n / 60:.0f} minutes for 300); CPU: {autograde[1] / n:.1f} s per submission "
        f"({300 * autograde[1] / n / 60:.0f} minutes of one core for 300)"
    )
    print(f"generate_feedback: {feedback[0]:.1f} s ({feedback[1]:.1f} s of CPU)")
    print(f"one part alone (lab.check: grader + sandbox, no kernel): {part:.2f} s")
    print(
        f"without the boundary (MHA_LAB_BOUNDARY=off): autograde {autograde_off[0] / n:.1f} s per submission, CPU "
        f"{autograde_off[1] / n:.1f} s; one part alone {part_off:.2f} s. The boundary's cost per submission: "
        f"{(autograde[0] - autograde_off[0]) / n:+.2f} s wall, {(autograde[1] - autograde_off[1]) / n:+.2f} s CPU"
    )


if __name__ == "__main__":
    main()
