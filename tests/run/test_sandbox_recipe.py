"""The host sandbox docs/running.md recommends for the agent keeps the bundle out of its reach.

The recipe is read from the docs (so the docs and what is tested are one text) and run with a probe in the
agent's place. The parent process looks like `itbench run`: its command line names the bundle and its working
folder holds the ground truth. The probe looks for either through /proc. Skips where bubblewrap is absent or
cannot make namespaces (an unprivileged container).
"""

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "running.md"
MARKER = "bundle-marker-5f1c"


def documented_recipe():
    text = DOCS.read_text()
    bullet = text[text.index("**A sandbox on the host.**"):]
    match = re.search(r"`--agent '(bwrap [^']*)'`", bullet)
    assert match, "docs/running.md lost its bwrap recipe"
    return " ".join(match.group(1).split())


def bwrap_works():
    if shutil.which("bwrap") is None:
        return False
    trial = subprocess.run(["bwrap", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "true"],
                           capture_output=True, timeout=30)
    return trial.returncode == 0


PROBE = textwrap.dedent(f"""
    import os, sys
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if b"{MARKER}" in open(f"/proc/{{pid}}/cmdline", "rb").read():
                found.append("cmdline of " + pid)
        except OSError:
            pass
        for link in ("cwd", "root"):
            try:
                for name in os.listdir(f"/proc/{{pid}}/{{link}}"):
                    if "{MARKER}" in name:
                        found.append(link + " of " + pid)
            except OSError:
                pass
    print("\\n".join(found) or "nothing")
    sys.exit(1 if found else 0)
""")


def test_the_documented_recipe_names_its_own_process_namespace():
    recipe = documented_recipe()
    assert "--unshare-pid" in recipe.split()  # without it /proc shows the host's processes


@pytest.mark.skipif(not bwrap_works(), reason="bubblewrap is absent or cannot create namespaces here")
def test_the_agent_in_the_documented_sandbox_reaches_neither_the_bundle_nor_its_path(tmp_path):
    bundle = tmp_path / f"{MARKER}-bundle"
    bundle.mkdir()
    (bundle / f"{MARKER}-groundtruth.yaml").write_text("root_cause: checkout\n")
    workspace = tmp_path / "agent"
    workspace.mkdir()
    probe = workspace / "probe.py"
    probe.write_text(PROBE)
    agent = f"{sys.executable} {probe}" if sys.executable.startswith("/usr/") else f"python3 {probe}"
    command = documented_recipe().replace('"$ITBENCH_WORKSPACE"', str(workspace)).replace("my-agent", agent)
    # the parent names the bundle on its command line and works in the bundle's folder, as `itbench run` does
    parent = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1], shell=True))",
              command, str(bundle)]
    done = subprocess.run(parent, cwd=bundle, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"the sandboxed agent reached the bundle: {done.stdout}{done.stderr}"
    assert done.stdout.strip() == "nothing"
