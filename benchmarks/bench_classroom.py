"""Play a class on a real JupyterHub on this machine, and measure it.

    .venv/bin/python benchmarks/bench_classroom.py                   # 20 students, every notebook
    .venv/bin/python benchmarks/bench_classroom.py --students 2 --notebooks 00,03 --cull-idle 30   # smoke

Needs the hub tooling: `pip install -r deploy/jupyterhub/requirements.txt` (in
requirements-dev.txt, so `python3 run.py test` installs it) and
configurable-http-proxy (`npm install` in deploy/jupyterhub; run.py test does it).

What it does, all on 127.0.0.1:
1. starts JupyterHub with deploy/jupyterhub/jupyterhub_config.py (dummy
   authenticator, local-process spawner, kernel culling), its state in a
   temporary folder, and a service token whose role may manage users and servers;
2. serves the series as a local git repository (a bare clone of this project's
   committed HEAD) and builds the nbgitpuller link a lecturer would hand out;
3. plays N students at once. Each one logs in through the hub's login form,
   asks the hub for an API token (as a logged-in user can), starts a server,
   pulls the series through nbgitpuller's API (what the link's page calls),
   then, notebook after notebook, opens a session (POST /api/sessions, as
   JupyterLab does) and runs every code cell through the kernel's websocket.
   Every --slider-every'th student also moves an explorer's slider three times
   through the widget comm (the message a browser sends when a slider is
   dragged). Every --shut-every'th student shuts each kernel when done with its
   notebook; the others leave their kernels running, and the hub's kernel culler
   shuts them after --cull-idle seconds of idleness;
4. records the server start time; each kernel's peak memory (VmHWM) and CPU
   time (its start, every cell, any slider moves), per notebook; each student's
   peak memory (server plus kernels, sampled twice a second) and largest number
   of kernels alive; the hub's and proxy's peak memory; the time each notebook
   takes under contention; slider latency; and every failure (a failed login,
   start, pull, cell or slider move);
5. stops every server through the hub's API, stops the hub, then checks every
   process it started (hub, proxy, servers, kernels) by its PID and ends any
   that is left.

It prints a Markdown summary and, with --json, writes every figure to a file.
The exit status is 1 when anything failed. Nothing is written into the project
folder (the bare clone, the hub's state and the students' homes are in a
temporary folder, removed at the end unless --keep).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import psutil
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

ROOT = Path(__file__).resolve().parent.parent
HUB_DIR = ROOT / "deploy" / "jupyterhub"
CONFIG = HUB_DIR / "jupyterhub_config.py"
PROXY = HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
SLIDER_MODELS = ("IntSliderModel", "FloatSliderModel", "SelectionSliderModel")
MB = 1024 * 1024


# ---------------------------------------------------------------------------------------------------------
# Records


@dataclass
class Student:
    name: str
    moves_sliders: bool
    shuts_kernels: bool
    token: str = ""
    login_s: float = float("nan")
    server_start_s: float = float("nan")
    pull_s: float = float("nan")
    server_pid: int | None = None
    notebook_s: dict = field(default_factory=dict)  # notebook -> seconds to run every cell
    kernel_peak_mb: dict = field(default_factory=dict)  # notebook -> VmHWM of its kernel
    kernel_cpu_s: dict = field(default_factory=dict)  # notebook -> CPU time of its kernel (start, all cells)
    slider_ms: list = field(default_factory=list)  # per move: until the picture's update has arrived
    slider_cpu_ms: list = field(default_factory=list)  # per move: CPU of the student's kernel and Jupyter server
    peak_mb: float = 0.0  # server + kernels, sampled
    server_peak_mb: float = 0.0  # the Jupyter server process alone, sampled
    max_kernels: int = 0
    failures: list = field(default_factory=list)


class Failure(Exception):
    """Something a student could not do (counted, never hidden)."""


# ---------------------------------------------------------------------------------------------------------
# Processes and memory


def free_ports(count):
    """A first port p such that p, p+1, ..., p+count-1 are free on 127.0.0.1."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + count >= 65535:
            continue
        try:
            for p in range(first, first + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return first
        except OSError:
            continue
    raise RuntimeError("no free ports on 127.0.0.1")


def vm_hwm_mb(pid):
    """Peak resident memory of a process (VmHWM), in MB; None when it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def kernel_processes(server_pid):
    """{kernel id: psutil.Process} for the kernels of a student's server."""
    found = {}
    try:
        children = psutil.Process(server_pid).children(recursive=True)
    except psutil.Error:
        return found
    for proc in children:
        try:
            match = re.search(r"kernel-([0-9a-f-]{36})\.json", " ".join(proc.cmdline()))
        except psutil.Error:
            continue
        if match:
            found[match.group(1)] = proc
    return found


def tree_rss_mb(pid):
    """Resident memory of a process and all its children, in MB, and the number of kernels among them."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0, 0
    total, kernels = 0, 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
            if proc is not root and "ipykernel" in " ".join(proc.cmdline()):
                kernels += 1
        except psutil.Error:
            continue
    return total / MB, kernels


# ---------------------------------------------------------------------------------------------------------
# HTTP with a cookie jar (the login form), and with a token (everything after)


class Browser:
    """Just enough of a browser for the hub's login form: cookies and the _xsrf token."""

    def __init__(self, base):
        self.base = base
        self.cookies = SimpleCookie()
        self.http = AsyncHTTPClient()

    def _cookie_header(self):
        return "; ".join(f"{k}={m.value}" for k, m in self.cookies.items())

    async def fetch(self, path, method="GET", body=None, headers=None):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = self._cookie_header()
        req = HTTPRequest(
            self.base + path, method=method, body=body, headers=headers, follow_redirects=False, request_timeout=300
        )
        resp = await self.http.fetch(req, raise_error=False)
        for value in resp.headers.get_list("Set-Cookie"):
            self.cookies.load(value)
        return resp


async def api(base, path, token, method="GET", body=None, timeout=600, ok=(200, 201, 202, 204)):
    """A hub or server REST call with a token; the decoded JSON (or text for non-JSON answers)."""
    req = HTTPRequest(
        base + path,
        method=method,
        headers={"Authorization": f"token {token}"},
        body=None if body is None else json.dumps(body),
        request_timeout=timeout,
        allow_nonstandard_methods=True,
    )
    resp = await AsyncHTTPClient().fetch(req, raise_error=False)
    if resp.code not in ok:
        text = resp.body.decode(errors="replace")[:300] if resp.body else resp.reason
        raise Failure(f"{method} {path} -> HTTP {resp.code}: {text}")
    if not resp.body:
        return None
    try:
        return json.loads(resp.body)
    except ValueError:
        return resp.body.decode(errors="replace")


# ---------------------------------------------------------------------------------------------------------
# A kernel, through its websocket (the Jupyter messaging protocol, as JupyterLab speaks it)


class Kernel:
    def __init__(self, ws, session_id, username):
        self.ws, self.session_id, self.username = ws, session_id, username
        self.waiting = {}  # msg_id -> asyncio.Queue of replies and iopub messages
        self.widgets = {}  # comm_id -> widget state (from comm_open)
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def connect(cls, base, user, kernel_id, token):
        session_id = uuid.uuid4().hex
        url = base.replace("http://", "ws://") + f"/user/{user}/api/kernels/{kernel_id}/channels?session_id={session_id}"
        ws = await websocket_connect(
            HTTPRequest(url, headers={"Authorization": f"token {token}"}, request_timeout=300), max_message_size=256 * MB
        )
        return cls(ws, session_id, user)

    @staticmethod
    def _decode(raw):
        if isinstance(raw, bytes):  # a message with binary buffers: offsets, then the JSON part first
            nbufs = int.from_bytes(raw[:4], "big")
            offsets = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(nbufs)]
            end = offsets[1] if nbufs > 1 else len(raw)
            raw = raw[offsets[0] : end].decode()
        return json.loads(raw)

    async def _read(self):
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                for q in self.waiting.values():
                    q.put_nowait(None)
                return
            msg = self._decode(raw)
            if msg.get("msg_type") == "comm_open" and msg["content"].get("target_name") == "jupyter.widget":
                self.widgets[msg["content"]["comm_id"]] = msg["content"].get("data", {}).get("state", {})
            elif msg.get("msg_type") == "comm_msg" and msg["content"].get("comm_id") in self.widgets:
                data = msg["content"].get("data", {})  # a later cell changed the widget (its options, its value)
                if data.get("method") == "update":
                    self.widgets[msg["content"]["comm_id"]].update(data.get("state", {}))
            parent = msg.get("parent_header", {}).get("msg_id")
            if parent in self.waiting:
                self.waiting[parent].put_nowait(msg)

    async def request(self, msg_type, content, timeout):
        """Send a shell message; wait for the kernel to be idle again. Returns (reply, iopub messages)."""
        msg_id = uuid.uuid4().hex
        q = self.waiting[msg_id] = asyncio.Queue()
        header = {
            "msg_id": msg_id,
            "username": self.username,
            "session": self.session_id,
            "msg_type": msg_type,
            "version": "5.3",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        }
        await self.ws.write_message(
            json.dumps(
                {
                    "header": header,
                    "parent_header": {},
                    "metadata": {},
                    "content": content,
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        reply, iopub, idle = None, [], False
        deadline = time.monotonic() + timeout
        try:
            while reply is None or not idle:
                msg = await asyncio.wait_for(q.get(), max(deadline - time.monotonic(), 0.01))
                if msg is None:
                    raise Failure("the kernel's websocket closed (did the kernel die?)")
                if msg["channel"] == "shell":
                    reply = msg
                elif msg["channel"] == "iopub":
                    iopub.append(msg)
                    if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                        idle = True
                        if msg_type == "comm_msg":  # comm messages get no reply
                            break
        except asyncio.TimeoutError:
            raise Failure(f"{msg_type} got no answer within {timeout} s") from None
        finally:
            del self.waiting[msg_id]
        return reply, iopub

    async def move(self, comm_id, state, timeout, settle=2.0):
        """A slider move (a widget ``update`` as the browser sends it): the iopub messages until the kernel is idle
        again and the picture's update has arrived (a state change of another widget: the explorer draws in the
        kernel's next loop turn, so it follows the idle), or ``settle`` seconds after the idle without one."""
        msg_id = uuid.uuid4().hex
        q = self.waiting[msg_id] = asyncio.Queue()
        header = {
            "msg_id": msg_id,
            "username": self.username,
            "session": self.session_id,
            "msg_type": "comm_msg",
            "version": "5.3",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        }
        content = {"comm_id": comm_id, "data": {"method": "update", "state": state, "buffer_paths": []}}
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}
        await self.ws.write_message(json.dumps({**message, "buffers": []}))
        iopub, idle, pictured = [], None, False
        deadline = time.monotonic() + timeout
        try:
            while not (idle is not None and (pictured or time.monotonic() - idle >= settle)):
                wait = deadline - time.monotonic() if idle is None else settle - (time.monotonic() - idle)
                try:
                    msg = await asyncio.wait_for(q.get(), max(wait, 0.01))
                except asyncio.TimeoutError:
                    if idle is None:
                        raise Failure(f"comm_msg got no answer within {timeout} s") from None
                    break
                if msg is None:
                    raise Failure("the kernel's websocket closed (did the kernel die?)")
                if msg["channel"] != "iopub":
                    continue
                iopub.append(msg)
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                    idle = time.monotonic()
                elif msg["msg_type"] == "comm_msg" and msg["content"].get("comm_id") != comm_id:
                    pictured = msg["content"].get("data", {}).get("method") in ("update", "echo_update")
        finally:
            del self.waiting[msg_id]
        return iopub, pictured

    def close(self):
        self.reader.cancel()
        self.ws.close()


def _cpu(procs):
    """CPU seconds (user + system) of these processes so far."""
    total = 0.0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            total += t.user + t.system
    return total


def iopub_problems(iopub):
    """Tracebacks the kernel sent while handling a message (errors, or a traceback written to stderr)."""
    problems = []
    for msg in iopub:
        if msg["msg_type"] == "error":
            problems.append(f"{msg['content'].get('ename')}: {msg['content'].get('evalue')}")
        elif (
            msg["msg_type"] == "stream"
            and msg["content"].get("name") == "stderr"
            and "Traceback" in msg["content"].get("text", "")
        ):
            problems.append(msg["content"]["text"].strip().splitlines()[-1])
    return problems


def slider_moves(state):
    """Three valid new states for a slider widget (there and back), or [] if it cannot move."""
    model = state.get("_model_name")
    if model == "SelectionSliderModel":
        n, i = len(state.get("_options_labels", [])), state.get("index", 0)
        if n < 2:
            return []
        j = i + 1 if i + 1 < n else i - 1
        return [{"index": j}, {"index": i}, {"index": j}]
    lo, hi, step, v = state.get("min"), state.get("max"), state.get("step") or 1, state.get("value")
    if None in (lo, hi, v) or hi <= lo:
        return []
    w = v + step if v + step <= hi else v - step
    return [{"value": w}, {"value": v}, {"value": w}]


# ---------------------------------------------------------------------------------------------------------
# One student


async def play_student(st, hub, series_url, branch, notebooks, service_token, args):
    try:
        t = time.monotonic()
        browser = Browser(hub)
        await browser.fetch("/hub/login")
        xsrf = browser.cookies["_xsrf"].value if "_xsrf" in browser.cookies else ""
        form = urlencode({"username": st.name, "password": "class", "_xsrf": xsrf})
        resp = await browser.fetch("/hub/login?next=", "POST", form, {"Content-Type": "application/x-www-form-urlencoded"})
        if resp.code != 302:
            raise Failure(f"login: HTTP {resp.code}")
        await browser.fetch("/hub/home")  # as a browser lands after login: the hub sets the session's _xsrf
        xsrf = browser.cookies["_xsrf"].value
        resp = await browser.fetch(
            f"/hub/api/users/{st.name}/tokens",
            "POST",
            json.dumps({"note": "classroom benchmark", "expires_in": 7200}),
            {"X-XSRFToken": xsrf, "Content-Type": "application/json"},
        )
        if resp.code not in (200, 201):
            raise Failure(f"token: HTTP {resp.code} {resp.body[:200]!r}")
        st.token = json.loads(resp.body)["token"]
        st.login_s = time.monotonic() - t

        t = time.monotonic()
        await api(hub, f"/hub/api/users/{st.name}/server", st.token, "POST", {})
        while True:
            model = await api(hub, f"/hub/api/users/{st.name}", service_token)
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                st.server_pid = (server.get("state") or {}).get("pid")
                break
            if time.monotonic() - t > args.start_timeout:
                raise Failure(f"the server was not ready after {args.start_timeout} s")
            await asyncio.sleep(0.5)
        st.server_start_s = time.monotonic() - t

        # The nbgitpuller link a lecturer hands out, and the call its page makes.
        query = urlencode(
            {
                "repo": series_url,
                "branch": branch,
                "targetpath": "series",
                "urlpath": "lab/tree/series/notebooks/00_overview.ipynb",
            }
        )
        where = f"/hub/user-redirect/git-pull?{query}"
        for _ in range(3):  # the hub sends the link through /hub/spawn/<name>, which passes a running server on
            resp = await browser.fetch(where)
            where = resp.headers.get("Location", "")
            if resp.code != 302 or where.startswith(f"/user/{st.name}/git-pull"):
                break
        if not where.startswith(f"/user/{st.name}/git-pull?"):
            raise Failure(f"the nbgitpuller link did not lead to the student's server (HTTP {resp.code}, to {where!r})")
        t = time.monotonic()
        events = await api(hub, f"/user/{st.name}/git-pull/api?{query}", st.token, timeout=600)
        if '"phase": "finished"' not in events:
            raise Failure(f"nbgitpuller did not finish: {events[-300:]}")
        st.pull_s = time.monotonic() - t

        for nb in notebooks:
            await run_notebook(st, hub, nb, args)
    except Failure as exc:
        st.failures.append(str(exc))
    except (HTTPClientError, OSError, KeyError, ValueError) as exc:
        st.failures.append(f"{type(exc).__name__}: {exc}")


async def run_notebook(st, hub, nb, args):
    path = f"series/notebooks/{nb}"
    content = await api(hub, f"/user/{st.name}/api/contents/{path}", st.token)
    cells = content["content"]["cells"]
    t = time.monotonic()
    session = await api(
        hub,
        f"/user/{st.name}/api/sessions",
        st.token,
        "POST",
        {"path": path, "name": nb, "type": "notebook", "kernel": {"name": "python3"}},
    )
    kernel_id = session["kernel"]["id"]
    kernel = await Kernel.connect(hub, st.name, kernel_id, st.token)
    try:
        for index, cell in enumerate(cells):
            if cell["cell_type"] != "code" or not "".join(cell["source"]).strip():
                continue
            reply, iopub = await kernel.request(
                "execute_request",
                {
                    "code": "".join(cell["source"]),
                    "silent": False,
                    "store_history": True,
                    "user_expressions": {},
                    "allow_stdin": False,
                    "stop_on_error": True,
                },
                args.cell_timeout,
            )
            expected = "raises-exception" in cell.get("metadata", {}).get("tags", [])
            if reply["content"]["status"] != "ok" and not expected:
                problems = iopub_problems(iopub) or [reply["content"].get("evalue", "?")]
                raise Failure(f"{nb} cell {index}: {problems[0]}")
        st.notebook_s[nb] = time.monotonic() - t

        if st.moves_sliders:
            sliders = [
                (cid, s)
                for cid, s in kernel.widgets.items()
                if s.get("_model_name") in SLIDER_MODELS and not s.get("disabled") and slider_moves(s)
            ]
            if sliders:
                comm_id, state = sliders[0]
                procs = [kernel_processes(st.server_pid).get(kernel_id)] if st.server_pid else []
                with contextlib.suppress(psutil.Error):
                    procs.append(psutil.Process(st.server_pid) if st.server_pid else None)
                procs = [p for p in procs if p is not None]
                for new in slider_moves(state):
                    cpu0 = _cpu(procs)
                    t = time.monotonic()
                    iopub, pictured = await kernel.move(comm_id, new, args.cell_timeout)
                    if pictured:  # a move that changes no picture (a refused setting) is not counted
                        st.slider_ms.append((time.monotonic() - t) * 1000)
                    if procs:
                        st.slider_cpu_ms.append((_cpu(procs) - cpu0) * 1000)
                    problems = iopub_problems(iopub)
                    if problems:
                        raise Failure(f"{nb} slider move {new}: {problems[0]}")

        if st.server_pid:
            proc = kernel_processes(st.server_pid).get(kernel_id)
            peak = vm_hwm_mb(proc.pid) if proc else None
            if peak is not None:
                st.kernel_peak_mb[nb] = peak
                try:
                    cpu = proc.cpu_times()
                    st.kernel_cpu_s[nb] = cpu.user + cpu.system
                except psutil.Error:
                    pass
    finally:
        kernel.close()
    if st.shuts_kernels:
        await api(hub, f"/user/{st.name}/api/sessions/{session['id']}", st.token, "DELETE")


# ---------------------------------------------------------------------------------------------------------
# The class


async def sample_memory(students, hub_pid, peaks, stop):
    """Every 0.5 s: each student's server + kernels, and the hub + proxy."""
    while not stop.is_set():
        for st in students:
            if st.server_pid:
                mb, kernels = tree_rss_mb(st.server_pid)
                st.peak_mb = max(st.peak_mb, mb)
                try:
                    st.server_peak_mb = max(st.server_peak_mb, psutil.Process(st.server_pid).memory_info().rss / MB)
                except psutil.Error:
                    pass
                st.max_kernels = max(st.max_kernels, kernels)
        try:
            hub = psutil.Process(hub_pid)
            peaks["hub_mb"] = max(peaks.get("hub_mb", 0), hub.memory_info().rss / MB)
            for child in hub.children():
                if "configurable-http-proxy" in " ".join(child.cmdline()):
                    peaks["proxy_mb"] = max(peaks.get("proxy_mb", 0), child.memory_info().rss / MB)
        except psutil.Error:
            pass
        await asyncio.sleep(0.5)


async def wait_for_hub(hub, proc, timeout=120):
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"the hub exited at start (exit {proc.returncode}); see its log")
        try:
            resp = await AsyncHTTPClient().fetch(hub + "/hub/api/", raise_error=False, request_timeout=5)
            if resp.code == 200:
                return time.monotonic() - t
        except OSError:
            pass
        await asyncio.sleep(0.3)
    raise RuntimeError(f"the hub did not answer within {timeout} s")


def pick_notebooks(spec):
    every = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if spec == "all":
        return every
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    chosen = [nb for nb in every if any(nb.startswith(w) for w in wanted)]
    if len(chosen) != len(wanted):
        raise SystemExit(f"--notebooks {spec!r}: found {chosen}; give prefixes such as 00,03")
    return chosen


def git(*cmd, cwd=None):
    return subprocess.run(["git", *cmd], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


async def play_class(args, work):
    AsyncHTTPClient.configure(None, max_clients=10 * args.students + 10)  # tornado queues beyond 10 by default
    notebooks = pick_notebooks(args.notebooks)
    port = free_ports(3)
    hub = f"http://127.0.0.1:{port}"
    service_token = secrets.token_hex(32)
    state = work / "hub"
    state.mkdir()

    # The series as a local git repository (what the lecturer's link points at).
    branch = git("rev-parse", "--abbrev-ref", "HEAD", cwd=ROOT)
    branch = "main" if branch == "HEAD" else branch
    series = work / "series.git"
    git("clone", "--quiet", "--bare", "--branch", branch, str(ROOT), str(series))

    env = dict(
        os.environ,
        MHA_HUB_STATE=str(state),
        MHA_HUB_PORT=str(port),
        MHA_HUB_SERVICE_TOKEN=service_token,
        MHA_CULL_IDLE_SECONDS=str(args.cull_idle),
        MHA_CULL_INTERVAL_SECONDS=str(args.cull_interval),
    )
    env.pop("MPLBACKEND", None)  # the students' kernels draw inline, as in JupyterLab
    jupyterhub = Path(sys.executable).parent / "jupyterhub"
    log = open(work / "hub.log", "w")
    started = {}  # pid -> what it is: every process this script caused to run
    proc = subprocess.Popen(
        [str(jupyterhub), "-f", str(CONFIG)],
        cwd=state,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    started[proc.pid] = "hub"
    result = {"students": args.students, "notebooks": notebooks, "port": port}
    students = [
        Student(f"student{i + 1:02d}", moves_sliders=(i % args.slider_every == 0), shuts_kernels=(i % args.shut_every == 0))
        for i in range(args.students)
    ]
    stop = asyncio.Event()
    peaks = {}
    t_class = time.monotonic()
    try:
        result["hub_start_s"] = await wait_for_hub(hub, proc)
        for child in psutil.Process(proc.pid).children(recursive=True):
            started[child.pid] = "proxy"
        sampler = asyncio.ensure_future(sample_memory(students, proc.pid, peaks, stop))
        await asyncio.gather(
            *(play_student(st, hub, str(series), branch, notebooks, service_token, args) for st in students)
        )
        result["class_s"] = time.monotonic() - t_class
        for st in students:
            if st.server_pid:
                started[st.server_pid] = f"server of {st.name}"
                for _kid, kproc in kernel_processes(st.server_pid).items():
                    started[kproc.pid] = f"kernel of {st.name}"
        stop.set()
        await sampler
        # Stop every server through the hub, then the hub itself.
        await asyncio.gather(
            *(
                api(hub, f"/hub/api/users/{st.name}/server", service_token, "DELETE", ok=(202, 204, 400, 404))
                for st in students
            ),
            return_exceptions=True,
        )
    finally:
        stop.set()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()
        result["left_running"] = end_processes(started)

    result["hub_peak_mb"] = peaks.get("hub_mb")
    result["proxy_peak_mb"] = peaks.get("proxy_mb")
    result["per_student"] = [st.__dict__ | {"token": None} for st in students]
    result["failures"] = [f"{st.name}: {f}" for st in students for f in st.failures]
    return result


def end_processes(started):
    """Check every process by PID; end (TERM, then KILL) any still running. Returns what had been left."""
    left = []
    for pid, what in started.items():
        try:
            p = psutil.Process(pid)
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
        except psutil.NoSuchProcess:
            continue
        left.append(f"{what} (pid {pid})")
        try:
            p.terminate()
            p.wait(10)
        except psutil.TimeoutExpired:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    return left


# ---------------------------------------------------------------------------------------------------------
# Report


def describe(values, unit, digits=0):
    values = [v for v in values if v == v]  # drop NaN
    if not values:
        return "-"
    fmt = f"{{:.{digits}f}}"
    return f"median {fmt.format(statistics.median(values))} {unit}, max {fmt.format(max(values))} {unit}"


def summary(result):
    st = result["per_student"]
    lines = [
        f"**{result['students']} students, {len(result['notebooks'])} notebooks, "
        f"{os.cpu_count()} CPU cores; the class took {result.get('class_s', float('nan')):.0f} s; "
        f"failures: {len(result['failures'])}**",
        "",
    ]
    lines += [
        "| what | figure |",
        "| --- | --- |",
        f"| hub start | {result.get('hub_start_s', float('nan')):.1f} s |",
        f"| login (form + token) | {describe([s['login_s'] for s in st], 's', 1)} |",
        f"| server start (request to ready) | {describe([s['server_start_s'] for s in st], 's', 1)} |",
        f"| nbgitpuller pull of the series | {describe([s['pull_s'] for s in st], 's', 1)} |",
        f"| a student's Jupyter server alone (JupyterLab, no kernel) | "
        f"{describe([s['server_peak_mb'] for s in st], 'MB')} |",
        f"| peak memory per student (server and kernels), kernels shut after each notebook | "
        f"{describe([s['peak_mb'] for s in st if s['shuts_kernels']], 'MB')} |",
        f"| peak memory per student (server and kernels), kernels left to the culler | "
        f"{describe([s['peak_mb'] for s in st if not s['shuts_kernels']], 'MB')} |",
        f"| most kernels alive at once per student, left to the culler | "
        f"{max([s['max_kernels'] for s in st if not s['shuts_kernels']], default='-')} |",
        f"| hub peak memory (its process) | {result.get('hub_peak_mb') or float('nan'):.0f} MB |",
        f"| proxy peak memory | {result.get('proxy_peak_mb') or float('nan'):.0f} MB |",
        f"| slider move through the widget comm, until the picture's update arrived | "
        f"{describe([m for s in st for m in s['slider_ms']], 'ms')} |",
        f"| CPU per slider move (the student's kernel and Jupyter server) | "
        f"{describe([m for s in st for m in s.get('slider_cpu_ms', [])], 'ms')} |",
        f"| processes left running at the end | {len(result['left_running'])} |",
        "",
    ]
    lines += [
        "| notebook | time under contention | kernel CPU time | kernel peak memory (VmHWM) |",
        "| --- | --- | --- | --- |",
    ]
    for nb in result["notebooks"]:
        lines.append(
            f"| {nb} | {describe([s['notebook_s'].get(nb, float('nan')) for s in st], 's', 1)} | "
            f"{describe([s['kernel_cpu_s'].get(nb, float('nan')) for s in st], 's', 1)} | "
            f"{describe([s['kernel_peak_mb'].get(nb, float('nan')) for s in st], 'MB')} |"
        )
    if result["failures"]:
        lines += ["", "Failures:"] + [f"- {f}" for f in result["failures"]]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--notebooks", default="all", help="'all' or comma-separated prefixes, e.g. 00,03")
    parser.add_argument("--slider-every", type=int, default=3, help="every k-th student moves sliders")
    parser.add_argument("--shut-every", type=int, default=2, help="every k-th student shuts its kernels")
    parser.add_argument("--cull-idle", type=int, default=60, help="seconds before an idle kernel is shut")
    parser.add_argument("--cull-interval", type=int, default=10)
    parser.add_argument("--start-timeout", type=int, default=300)
    parser.add_argument("--cell-timeout", type=int, default=600)
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, homes)")
    args = parser.parse_args(argv)
    if args.students < 1:
        parser.error("--students must be at least 1")
    if not PROXY.exists():
        sys.exit(f"configurable-http-proxy is missing: run `npm install` in {HUB_DIR} (python3 run.py test does)")
    if shutil.which("git") is None:
        sys.exit("git is needed (nbgitpuller clones the series with it)")
    work = Path(tempfile.mkdtemp(prefix="mha-classroom-"))
    try:
        result = asyncio.run(play_class(args, work))
    finally:
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(summary(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 1 if result["failures"] or result["left_running"] else 0


if __name__ == "__main__":
    sys.exit(main())
