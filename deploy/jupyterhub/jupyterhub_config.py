"""A JupyterHub on one machine, for trying the series with a class (and for benchmarks/bench_classroom.py).

    pip install -r requirements.txt -r deploy/jupyterhub/requirements.txt   # or: python3 run.py test
    (cd deploy/jupyterhub && npm install)              # configurable-http-proxy into node_modules/ here
    jupyterhub -f deploy/jupyterhub/jupyterhub_config.py

Then open http://127.0.0.1:8000 and log in with any name (the dummy authenticator
takes any name and password): it is for a trial on your own machine, never for a
class on a network. docs/deploying.md says what to use for a real class (The
Littlest JupyterHub, Zero to JupyterHub) and how to size it.

What this hub does:
- listens on 127.0.0.1 only (the hub, its proxy and every student server);
- starts each student's server as a local process from the same Python
  environment as the hub (the "simple" spawner; every student shares the
  hub's system user, so this gives no isolation between students);
- gives each student a home folder under MHA_HUB_STATE/home/<name>, where
  nbgitpuller puts the series; the hub's database, cookie secret and pid files
  are in MHA_HUB_STATE too (default ~/.local/state/mha-hub): nothing is written
  into the project folder;
- shuts idle kernels (kernel culling): a kernel that ran nothing for
  MHA_CULL_IDLE_SECONDS (default 1200 = 20 minutes) is shut, even if its tab is
  still open, so that a student who opens notebook after notebook holds a
  bounded amount of memory;
- one BLAS thread per kernel: the series' matrices are small, and on a shared
  machine extra BLAS threads only spin;
- with MHA_HUB_SERVICE_TOKEN set, a service "classroom-bench" holding that API
  token and a role that may create users and start, stop and use their servers
  (what benchmarks/bench_classroom.py uses).

Settings, all optional, from the environment: MHA_HUB_STATE, MHA_HUB_PORT (8000;
the hub's own API listens on the next port, the proxy's API on the one after),
MHA_CULL_IDLE_SECONDS, MHA_CULL_INTERVAL_SECONDS (60), MHA_HUB_SERVICE_TOKEN.
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 -- JupyterHub provides get_config when it loads this file

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ.get("MHA_HUB_STATE", Path.home() / ".local" / "state" / "mha-hub"))
STATE.mkdir(parents=True, exist_ok=True)
PORT = int(os.environ.get("MHA_HUB_PORT", "8000"))
CULL_IDLE = int(os.environ.get("MHA_CULL_IDLE_SECONDS", "1200"))
CULL_INTERVAL = int(os.environ.get("MHA_CULL_INTERVAL_SECONDS", "60"))

# Network: loopback only.
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = PORT + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.ConfigurableHTTPProxy.command = [str(HERE / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.Spawner.ip = "127.0.0.1"

# Where the hub writes.
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")

# Who may log in: anyone, with any password (a trial on one's own machine only).
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True

# Each student's server: a local process from this environment, home under STATE/home.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.cmd = [str(Path(sys.executable).parent / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180  # a class logging in at once on a small machine
c.Spawner.http_timeout = 180
c.Spawner.environment = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
c.Spawner.args = [
    f"--MappingKernelManager.cull_idle_timeout={CULL_IDLE}",
    f"--MappingKernelManager.cull_interval={CULL_INTERVAL}",
    "--MappingKernelManager.cull_connected=True",  # an open tab does not keep an idle kernel alive
]
if os.geteuid() == 0:
    c.Spawner.args.append("--allow-root")  # the hub's user is root (e.g. a container); servers run as root too

# A service for scripts (the classroom benchmark): an API token with a role.
token = os.environ.get("MHA_HUB_SERVICE_TOKEN")
if token:
    c.JupyterHub.services = [{"name": "classroom-bench", "api_token": token}]
    c.JupyterHub.load_roles = [
        {
            "name": "classroom-bench",
            "scopes": ["admin:users", "admin:servers", "access:servers"],
            "services": ["classroom-bench"],
        }
    ]
