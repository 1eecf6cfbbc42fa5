"""A bundle's run spelled for workflow engines: the phases of `lifecycle.PHASES`, each as engine-neutral
actions (apply a bundle file, delete one, wait for workloads, run a shell script) that
`backends/chainsaw.py` and `backends/argo.py` write in their formats.

The phase order and names are lifecycle.py's (the one home of what a run does); this module says how
each phase is done with `kubectl`, `curl` and `python3` from the bundle's folder. What a run needs
from outside comes from the environment: `PROMETHEUS_URL`, `ITBENCH_AGENT` (the agent's command),
`ITBENCH_AGENT_ENV` (names of further variables the agent gets, its model's API key say) and
`ITBENCH_WORKSPACE` (the agent's folder, default `/tmp/itbench-agent`: outside the bundle, and empty when
the hand-over starts). The hand-over reviews, as the agent, what its token holds (REVIEW_PY, as `itbench run`
does), records it in the bundle's `agent-reach.json` and stops when the token holds more than the access grants.
The agent runs there with `env -i`: its kubeconfig (one user, its own token; nothing of the caller's
credentials), the prompt, HOME, PATH and the variables ITBENCH_AGENT_ENV names. After the
evaluation its files are kept in the bundle's `workspace/`, less its kubeconfig, and its folder is removed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

import yaml

from .. import access, ir
from ..alerts import ALERT_WAIT_SECONDS
from ..ciso.tasks import TASK_CLASSES
from ..run import lifecycle
from ..run.lifecycle import FIELD_MANAGER, PHASES, PROMPT_WORKSPACE, SUBMISSION, WORKLOAD_KINDS, answer_files, evaluator_inputs
from ..run.snapshot import OBSERVED_KINDS

WORKSPACE = "${ITBENCH_WORKSPACE:-/tmp/itbench-agent}"
# keeps only the agent's cluster (server, CA) of the caller's flattened kubeconfig (JSON on stdin) and adds the
# agent's token as its one user: the agent gets none of the caller's credentials
AGENT_KUBECONFIG_PY = (
    "import json, os, sys; c = json.load(sys.stdin); cl = c['clusters'][0]['cluster']; "
    "keep = ('server', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'proxy-url'); "
    "json.dump({'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'itbench-agent', "
    "'clusters': [{'name': 'itbench', 'cluster': {k: v for k, v in cl.items() if k in keep}}], "
    "'users': [{'name': 'itbench-agent', 'user': {'token': os.environ['ITBENCH_TOKEN']}}], "
    "'contexts': [{'name': 'itbench-agent', 'context': {'cluster': 'itbench', 'user': 'itbench-agent', "
    "'namespace': os.environ['ITBENCH_NAMESPACE']}}]}, sys.stdout, indent=2)")
# reviews, as the agent (KUBECONFIG its kubeconfig), what its token holds in each namespace of `granted` and of the
# cluster (ITBENCH_NAMESPACES, listed by the caller: a fault tool's, an engine's hold the answer too) (a
# SelfSubjectRulesReview each) against the rules its access gives it there (ITBENCH_GRANTED, `review_spec`;
# `elsewhere`, its cluster-wide grants, in a namespace the bundle does not name), as
# `itbench run`'s handover does (access.held_beyond, whose reading this mirrors): agent-reach.json records what the
# server says and what of it is `beyond` the grant, and the hand-over fails when anything is
REVIEW_PY = """import json, os, subprocess, sys
spec = json.loads(os.environ["ITBENCH_GRANTED"])
config = json.load(open(os.environ["KUBECONFIG"]))
def covered(rules, verb, group, resource, names):
    return any(("*" in r["verbs"] or verb in r["verbs"]) and ("*" in r["apiGroups"] or group in r["apiGroups"])
               and ("*" in r["resources"] or resource in r["resources"])
               and (not r.get("resourceNames") or bool(names) and set(names) <= set(r["resourceNames"]))
               for r in rules)
held = {}
for ns in sorted(set(spec["granted"]) | set(os.environ.get("ITBENCH_NAMESPACES", "").split())):
    rules = spec["granted"].get(ns, spec["elsewhere"])
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {"namespace": ns}}
    done = subprocess.run(["kubectl", "create", "--validate=false", "-f", "-", "-o", "json"], input=json.dumps(review),
                          capture_output=True, text=True)
    if done.returncode:
        held[ns] = {"unreviewed": done.stderr.strip()}
        continue
    status = json.loads(done.stdout).get("status") or {}
    out = set()
    for rule in status.get("resourceRules") or []:
        names = rule.get("resourceNames")
        for verb in rule.get("verbs") or []:
            for group in rule.get("apiGroups") or [""]:
                for resource in rule.get("resources") or []:
                    if verb in spec["everyone"].get(group + "/" + resource, ()):
                        continue
                    if not covered(rules, verb, group, resource, names):
                        out.add(verb + " " + resource + ("." + group if group else "")
                                + (" (" + ", ".join(names) + ")" if names else ""))
    for rule in status.get("nonResourceRules") or []:
        out.update(verb + " " + url for url in rule.get("nonResourceURLs") or [] if url not in spec["urls"]
                   for verb in rule.get("verbs") or [])
    held[ns] = {"rules": status.get("resourceRules") or [], "urls": status.get("nonResourceRules") or [],
                "incomplete": bool(status.get("incomplete")), "beyond": sorted(out)}
reach = {"service_account": spec["service_account"], "held": held,
         "kubeconfig": {"users": [u.get("name") for u in config.get("users") or []],
                        "contexts": [c.get("name") for c in config.get("contexts") or []]}}
with open("agent-reach.json", "w") as handle:
    json.dump(reach, handle, indent=2, sort_keys=True)
wide = [ns + ": " + ", ".join(h["beyond"]) for ns, h in sorted(held.items()) if h.get("beyond")]
if wide or len(reach["kubeconfig"]["users"]) != 1:
    sys.exit("the agent's token may do more than its Roles grant (agent-reach.json `held`): " + "; ".join(wide)
             if wide else "the agent's kubeconfig holds more than one user")
"""
# what a phase records in the bundle's folder for the evaluation (`itbench run` keeps them in memory): the
# phase that writes each; Argo carries them from its pod to the evaluation's as parameters
RECORDS = {"injected-at": "inject", "answered-at": "agent"}
NOW = "date -u +%Y-%m-%dT%H:%M:%SZ"
# the state's `observations` from the captures the snapshot took while the fix ran (observation-N.json, each with
# its time in observation-N.at): their workloads and pods, as `itbench run`'s snapshot.observe keeps them
OBSERVE_PY = f"""import glob, json
kinds = {OBSERVED_KINDS!r}
state = json.load(open("state.json"))
observations = []
for path in sorted(glob.glob("observation-*.json"), key=lambda p: int(p.split("-")[1].split(".")[0])):
    items = json.load(open(path))["resources"]["items"]
    observations.append({{"at": open(path[:-5] + ".at").read().strip(), "resources": {{"apiVersion": "v1", "kind": "List",
        "items": [o for o in items if o.get("kind") in kinds and (o.get("metadata") or {{}}).get("namespace")]}}}})
if observations:
    state["observations"] = observations
    json.dump(state, open("state.json", "w"))
"""
# exits 0 when the mitigation's checks hold on state.json (the evaluator's verdict on stdin)
HOLDS_PY = "import json, sys; sys.exit(0 if json.load(sys.stdin).get('passed') is True else 1)"
# ITBench's runs wait 30 min; an expected alert whose rule needs longer is refused by `itbench check` (W2022)
ALERT_TIMEOUT_SECONDS = ALERT_WAIT_SECONDS
READY_TIMEOUT = "10m"
# builtin API groups (no `kind.group` needed on kubectl's command line)
_CORE_GROUPS = {"", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io"}


@dataclass(frozen=True)
class Action:
    """One thing a phase does: `apply`/`delete` a bundle file, `ready` (wait for `refs`), or a `script`."""

    kind: str
    name: str
    file: str | None = None
    refs: tuple[tuple[str, str, str | None, str, int], ...] = ()  # (apiVersion, kind, namespace, name, replicas)
    script: str = ""
    timeout: str | None = None


@dataclass
class EnginePlan:
    scenario: str
    domain: str
    phases: dict[str, list[Action]] = field(default_factory=dict)  # lifecycle phase name -> actions, in order
    cleanup: tuple[str, ...] = ()  # the phases that run whatever happened (lifecycle `always`)
    answers: tuple[str, ...] = ()  # the files of the agent's folder the evaluation reads
    records: tuple[str, ...] = ()  # the RECORDS the run writes and the evaluation reads


def _docs(files: dict[str, bytes], name: str) -> list[dict]:
    data = files.get(name)
    if not data:
        return []
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(data.decode("utf-8"), Loader=loader) if isinstance(d, dict)]


def _ref(obj: dict) -> tuple[str, str, str | None, str]:
    meta = obj.get("metadata") or {}
    return obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"]


def kubectl_name(api_version: str, kind: str, name: str) -> str:
    """`deployment/web`, `networkchaos.chaos-mesh.org/loss`: a name kubectl resolves without ambiguity."""
    group = api_version.rpartition("/")[0]
    resource = kind.lower() if group in _CORE_GROUPS else f"{kind.lower()}.{group}"
    return f"{resource}/{name}"


def _ns(namespace: str | None) -> str:
    return f" -n {shlex.quote(namespace)}" if namespace else ""


def _script(*lines: str) -> str:
    return "set -eu\n" + "\n".join(lines) + "\n"


def _waiter(waiter: ir.Waiter, selectors: dict) -> str:
    t = waiter.target
    target = kubectl_name(t.api_version, t.kind, t.name)
    if waiter.kind == "restart":
        return f"kubectl rollout restart {target}{_ns(t.namespace)}\nkubectl rollout status {target}{_ns(t.namespace)}"
    if waiter.kind == "scale":
        return f"kubectl scale {target}{_ns(t.namespace)} --replicas={int(waiter.args.get('replicas', 0))}"
    if waiter.kind == "delete_pods":
        selector = ",".join(f"{k}={v}" for k, v in sorted(selectors.get((t.kind, t.namespace, t.name), {}).items()))
        return f"kubectl delete pods{_ns(t.namespace)} -l {shlex.quote(selector)} --wait=true"
    if waiter.kind == "pause":
        return f"sleep {int(waiter.args.get('seconds', 0))}"
    if waiter.kind == "redeploy":
        timeout = int(waiter.args.get("timeout_seconds", 300))
        return (f"kubectl rollout restart deployment,statefulset{_ns(t.namespace or t.name)}\n"
                f"kubectl rollout status deployment,statefulset{_ns(t.namespace or t.name)} --timeout={timeout}s")
    return f"echo 'waiter `{waiter.kind}` has no engine command' >&2\nexit 1"


def _gate_py() -> str:
    """ALERT_GATE_PY: exits 0 when every expected alert (argv[1]: {name: the namespaces it must fire in}) fires in
    alerts.json with a label set that did not fire in baseline-alerts.json, in its namespaces: the alerts phase
    of `itbench run`, whose code (prometheus.instances, newly_firing) it runs."""
    import inspect

    from ..run import prometheus

    return "\n".join([
        "from __future__ import annotations", "import json, sys",
        inspect.getsource(prometheus.instances), inspect.getsource(prometheus.newly_firing),
        "scopes = {name: tuple(where) for name, where in json.loads(sys.argv[1]).items()}",
        "response = json.load(open('alerts.json'))",
        "try:\n    baseline = json.load(open('baseline-alerts.json'))\nexcept (OSError, ValueError):\n    baseline = None",
        "sys.exit(0 if set(scopes) <= set(newly_firing(response, baseline, scopes)) else 1)", ""])


def _alert_wait(scopes: dict[str, tuple[str, ...]]) -> str:
    """Poll Prometheus until every expected alert fires, not as in the baseline, in its namespaces (bounded)."""
    import json

    attempts = ALERT_TIMEOUT_SECONDS // 15
    check = f"python3 -S -c {shlex.quote(_gate_py())} {shlex.quote(json.dumps(scopes, sort_keys=True))}"
    names = sorted(scopes)
    return _script(
        ': "${PROMETHEUS_URL:?set PROMETHEUS_URL to the Prometheus the alert rules are loaded in}"',
        f"for attempt in $(seq 1 {attempts}); do",
        '  curl -fsS "$PROMETHEUS_URL/api/v1/alerts" > alerts.json || true',
        f"  if {check}; then exit 0; fi",
        "  sleep 15",
        "done",
        f"echo 'expected alerts did not fire (not as in the baseline, in their namespaces) within {ALERT_TIMEOUT_SECONDS} s: "
        f"{', '.join(names)}' >&2",
        "exit 1")


def engine_plan(scenario: ir.Scenario, files: dict[str, bytes]) -> EnginePlan:
    """The scenario's run as engine actions, phase by phase (lifecycle.PHASES order), from its compiled files."""
    topology = _docs(files, "manifests/topology.yaml")
    workloads = tuple((*_ref(o), int((o.get("spec") or {}).get("replicas", 1)))
                      for o in topology if o.get("kind") in WORKLOAD_KINDS)
    ready = tuple(w for w in workloads if w[4] > 0)
    selectors = {_ref(o)[1:]: ((o.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
                 for o in topology if o.get("kind") in WORKLOAD_KINDS}
    other_manifests = sorted(n for n in files if n.startswith("manifests/") and n.endswith(".yaml")
                             and n != "manifests/topology.yaml")
    plan = EnginePlan(scenario.name, scenario.domain, cleanup=tuple(p.name for p in PHASES if p.always))
    p = plan.phases

    groups = sorted({o["apiVersion"] for name in files if name.endswith(".yaml")
                     and name.startswith(("manifests/", "inject/", "revert/")) for o in _docs(files, name)
                     if o.get("apiVersion", "").rpartition("/")[0] not in _CORE_GROUPS | {""}})
    p["preflight"] = [Action("script", "preflight", script=_script(
        "kubectl version",
        *(f"kubectl get --raw /apis/{g} > /dev/null" for g in groups)))]
    p["deploy"] = ([Action("apply", "deploy topology", file="manifests/topology.yaml")] if topology else []) + [
        Action("apply", f"deploy {n.removeprefix('manifests/')}", file=n) for n in other_manifests]
    if ready:
        p["deploy"].append(Action("ready", "wait until ready", refs=ready, timeout=READY_TIMEOUT))

    expected = sorted({a.name for a in scenario.alerts})
    p["baseline"] = [Action("script", "baseline alerts", script=_script(
        ': "${PROMETHEUS_URL:?set PROMETHEUS_URL}"',
        'curl -fsS "$PROMETHEUS_URL/api/v1/alerts" > baseline-alerts.json'))] if expected else []

    spec = _spec(files)
    tasks = list(spec.get("tasks") or [])
    inputs = [] if _compliance(scenario) else evaluator_inputs(tasks, folder="answers" in spec)
    plan.records = tuple(r for r in RECORDS if r.replace("-", "_") in {what for _, what in inputs})
    plan.answers = ((submission_file(scenario),) if _compliance(scenario) else
                    tuple(dict.fromkeys(answer_files(spec, scenario.domain).values())))
    waiters = [w for g in scenario.faults for w in g.waiters]
    inject: list[Action] = [Action("script", f"before: {w.kind}", script=_script(_waiter(w, selectors)))
                            for w in waiters if w.when == "before"]
    if "injected-at" in plan.records:  # the fault's first change: a detection counts from here (as `itbench run`)
        inject.append(Action("script", "record the injection", script=_script(f"{NOW} > injected-at")))
    cordoned = list(dict.fromkeys(node for i in scenario.injections() for node in i.cordoned))
    if cordoned:  # nodes are no objects of the bundle: a fault's cordon is a step (as `itbench run`)
        inject.append(Action("script", "cordon", script=_script(
            *(f"kubectl cordon {shlex.quote(node)}" for node in cordoned))))
    if "inject/recreate.yaml" in files:  # gone (kubectl waits) before the apply creates them changed
        inject.append(Action("script", "inject: delete what is recreated", script=_script(
            "kubectl delete --ignore-not-found --wait=true -f inject/recreate.yaml")))
    if "inject/apply.yaml" in files:
        inject.append(Action("script", "inject", script=_script(
            f"kubectl apply --server-side --force-conflicts --field-manager={FIELD_MANAGER} -f inject/apply.yaml")))
    if "inject/delete.yaml" in files:
        inject.append(Action("script", "inject deletions", script=_script(
            "kubectl delete --ignore-not-found -f inject/delete.yaml")))
    if "inject/playbook.yml" in files:
        inject.append(Action("script", "inject on hosts", script=_script(
            ': "${ITBENCH_INVENTORY:?set ITBENCH_INVENTORY to the hosts inventory}"',
            'ansible-playbook -i "$ITBENCH_INVENTORY" inject/playbook.yml')))
    inject += [Action("script", f"after: {w.kind}", script=_script(_waiter(w, selectors)))
               for w in waiters if w.when == "after"]
    p["inject"] = inject
    p["alerts"] = ([Action("script", "wait for the expected alerts", script=_alert_wait(
        dict(lifecycle.alert_scopes_of(_scenario_json(files)))))] if expected else [])

    account = scenario.agent.service_account
    home = scenario.agent.namespaces[0] if scenario.agent.namespaces else None
    handover = [f'W="{WORKSPACE}"',
                'if [ -e "$W" ] && [ -n "$(ls -A "$W")" ]; then echo "the agent\'s folder $W is not empty" >&2; exit 1; fi',
                'mkdir -p "$W"', f'sed "s#{PROMPT_WORKSPACE}#$W#g" prompt.md > "$W/prompt.md"']
    if home is not None:
        handover += [
            f"ITBENCH_TOKEN=$(kubectl create token {shlex.quote(account)} -n {shlex.quote(home)} --duration=2h)",
            "(umask 077; kubectl config view --raw --minify --flatten -o json | ITBENCH_TOKEN=\"$ITBENCH_TOKEN\" "
            f"ITBENCH_NAMESPACE={shlex.quote(home)} python3 -S -c {shlex.quote(AGENT_KUBECONFIG_PY)} "
            '> "$W/kubeconfig.yaml")',
            # what the token holds, reviewed as the agent before it gets it in every namespace of the cluster (listed
            # as the caller); recorded beside the bundle
            "ITBENCH_NAMESPACES=$(kubectl get namespaces -o jsonpath='{.items[*].metadata.name}')",
            "KUBECONFIG=\"$W/kubeconfig.yaml\" ITBENCH_NAMESPACES=\"$ITBENCH_NAMESPACES\" "
            f"ITBENCH_GRANTED={shlex.quote(review_spec(scenario, files))} "
            f"python3 -S -c {shlex.quote(REVIEW_PY)}"]
    p["handover"] = [Action("script", "hand over", script=_script(*handover))]
    detection = answer_files(spec, scenario.domain).get("detect") if "answered-at" in plan.records else None
    p["agent"] = [Action("script", "agent", script=_script(*agent_lines(detection)))]
    prometheus = ' --prometheus "$PROMETHEUS_URL"' if expected or scenario.mitigation else ""
    window = lifecycle.mitigation_window_of(_scenario_json(files))
    p["snapshot"] = [Action("script", "snapshot", script=_script(*snapshot_lines(prometheus, "mitigate" in tasks, window)))]
    p["evaluate"] = [Action("script", "evaluate", script=_script(
        f'W="{WORKSPACE}"', _evaluate(scenario, inputs) + " > verdict.json", "cat verdict.json",
        # the agent's work is kept beside the bundle, less its token; its folder (empty when handed over) goes
        'rm -f "$W/kubeconfig.yaml"', 'mkdir -p workspace', 'cp -R "$W/." workspace/', 'rm -rf "$W"'))]

    restored = {_ref(o) for o in (*topology, *_docs(files, "revert/apply.yaml"))}
    created = []
    for obj in _docs(files, "inject/apply.yaml"):
        ref = _ref(obj)
        if ref not in restored and ref not in created:
            created.append(ref)
    revert = []
    if "revert/recreate.yaml" in files:
        revert.append("kubectl delete --ignore-not-found --wait=true -f revert/recreate.yaml")
    if "revert/apply.yaml" in files:
        revert.append(f"kubectl apply --server-side --force-conflicts --field-manager={FIELD_MANAGER} -f revert/apply.yaml")
    revert += [f"kubectl uncordon {shlex.quote(node)}" for node in cordoned]
    if "revert/delete.yaml" in files:
        revert.append("kubectl delete --ignore-not-found -f revert/delete.yaml")
    revert += [f"kubectl delete --ignore-not-found {kubectl_name(a, k, n)}{_ns(ns)}" for a, k, ns, n in created]
    if "revert/playbook.yml" in files:
        revert.append('ansible-playbook -i "$ITBENCH_INVENTORY" revert/playbook.yml')
    p["revert"] = [Action("script", "revert", script=_script(*revert))] if revert else []
    p["verify"] = [Action("ready", "verify healthy", refs=ready, timeout=READY_TIMEOUT)] if ready else []
    p["undeploy"] = [Action("script", "undeploy", script=_script(
        *(f"kubectl delete --ignore-not-found --wait=false -f {n}" for n in reversed(other_manifests)),
        *(["kubectl delete --ignore-not-found -f manifests/topology.yaml"] if topology else [])))]
    return plan


def review_spec(scenario: ir.Scenario, files: dict[str, bytes]) -> str:
    """REVIEW_PY's input (JSON): the rules the agent's access gives it in each namespace the bundle names
    (access.reach_namespaces: its topology's, access objects', injection's), the cluster-wide ones it holds in any
    other (`elsewhere`), and what every authenticated user holds (access.DEFAULT_RIGHTS, DEFAULT_URLS)."""
    import json

    objects = _docs(files, "manifests/agent-access.yaml")
    account, home = scenario.agent.service_account, scenario.agent.namespaces[0]
    namespaces = access.reach_namespaces([*_docs(files, "manifests/topology.yaml"), *objects,
                                          *_docs(files, "inject/apply.yaml"), *_docs(files, "revert/apply.yaml")], home)
    return json.dumps({
        "service_account": f"{home}/{account}",
        "granted": {ns: access.rules_in(objects, account, home, ns) for ns in namespaces},
        "elsewhere": access.rules_in(objects, account, home, None),
        "everyone": {f"{g}/{r}": sorted(v) for (g, r), v in sorted(access.DEFAULT_RIGHTS.items())},
        "urls": sorted(access.DEFAULT_URLS)}, separators=(",", ":"), sort_keys=True)


# runs the agent's command (argv[2:]) in a process group of its own, stopping the whole group when it overruns
# its budget (argv[1] seconds): SIGTERM, then SIGKILL 10 s later, as `itbench run --agent-timeout` stops it
BUDGET_PY = (
    "import os, signal, subprocess, sys, time\n"
    "agent = subprocess.Popen(sys.argv[2:], start_new_session=True)\n"
    "try:\n"
    "    sys.exit(agent.wait(timeout=float(sys.argv[1])))\n"
    "except subprocess.TimeoutExpired:\n"
    "    print(f'the agent overran its budget of {sys.argv[1]} s: stopped', file=sys.stderr, flush=True)\n"
    "for sig in (signal.SIGTERM, signal.SIGKILL):\n"
    "    try:\n"
    "        os.killpg(agent.pid, sig)\n"
    "    except OSError:\n"
    "        break\n"
    "    end = time.monotonic() + 10\n"
    "    while time.monotonic() < end:\n"
    "        agent.poll()\n"
    "        try:\n"
    "            os.killpg(agent.pid, 0)\n"
    "        except OSError:\n"
    "            break\n"
    "        time.sleep(0.2)\n"
    "agent.poll()\n"
    "sys.exit(124)\n")
# the agent's exit status is the agent's record, not the run's failure: its answers and the state are graded
# whatever it was, as `itbench run` grades them. With ITBENCH_AGENT_TIMEOUT (seconds; the Argo template's
# `agent-timeout`), the agent is stopped when it overruns that budget (BUDGET_PY) and its answers are graded as it
# left them
AGENT_RUN = ('if [ -n "${ITBENCH_AGENT_TIMEOUT:-}" ]; then\n'
             f'  python3 -c {shlex.quote(BUDGET_PY)} "$ITBENCH_AGENT_TIMEOUT" env -i "$@" sh -c "$ITBENCH_AGENT" '
             '|| echo "the agent exited with status $?" >&2\n'
             'else\n'
             '  env -i "$@" sh -c "$ITBENCH_AGENT" || echo "the agent exited with status $?" >&2\n'
             'fi')


def agent_lines(detection: str | None = None) -> list[str]:
    """The agent's run: in its folder, with an environment of its own (`env -i`). `detection`: the detect task's
    answer file, watched while the agent runs; `answered-at` (in the bundle's folder) is when its content as
    the agent left it was first seen (the harness's clock, as `itbench run` records it, never the file's times)."""
    lines = [
        ': "${ITBENCH_AGENT:?set ITBENCH_AGENT to the command that runs the agent}"',
        f'W="{WORKSPACE}"',
        'B="$(pwd)"',
        'cd "$W"',
        'set -- PATH="$PATH" HOME="$W" KUBECONFIG="$W/kubeconfig.yaml" ITBENCH_WORKSPACE="$W" '
        'ITBENCH_PROMPT="$W/prompt.md"',
        'for name in ${ITBENCH_AGENT_ENV:-}; do eval "value=\\${$name-}"; set -- "$@" "$name=$value"; done',
    ]
    if detection is None:
        return [*lines, AGENT_RUN]
    answer = shlex.quote(detection)
    return [
        *lines,
        'rm -f "$B/answers-seen" "$B/answered-at"',
        # each content of the answer, with when it was first seen
        f'( last=""; while :; do if [ -f {answer} ]; then sum=$(cksum < {answer}); if [ "$sum" != "$last" ]; then '
        f'last=$sum; echo "$sum $({NOW})" >> "$B/answers-seen"; fi; fi; sleep 1; done ) &',
        'watcher=$!',
        'trap \'kill "$watcher" 2>/dev/null || true\' EXIT',
        AGENT_RUN,
        'kill "$watcher" 2>/dev/null || true',
        f'if [ -f {answer} ]; then sum=$(cksum < {answer}); '
        f'seen=$(grep -F "$sum " "$B/answers-seen" 2>/dev/null | head -n 1 | awk \'{{print $NF}}\'); '
        f'echo "${{seen:-$({NOW})}}" > "$B/answered-at"; fi',
    ]


def submission_file(scenario: ir.Scenario) -> str:
    """The file of the agent's folder the evaluator grades."""
    if scenario.compliance is not None and scenario.compliance.task in TASK_CLASSES:
        return TASK_CLASSES[scenario.compliance.task].submission.get("policy", "policy.yaml")
    return SUBMISSION[scenario.domain]


def snapshot_lines(prometheus: str, mitigate: bool, window: float | None) -> list[str]:
    """The capture as `itbench run`'s snapshot does it: the state's `fixed_at` is the end of the agent's work
    (this step starts when the agent's ends); with a mitigate task, the state is captured and graded every
    MITIGATION_POLL seconds until the mitigation's checks hold or its declared window (`within`, from the
    agent's end; ITBENCH_MITIGATION_WINDOW, as --mitigation-window) is over, then the fix runs STABLE_FOR seconds
    (ITBENCH_STABLE_FOR, as --stable-for), its workloads observed every ALERT_POLL seconds (at most
    OBSERVATIONS times), before the state is captured with those `observations`."""
    capture = f'python3 -S evaluator.py --capture state.json{prometheus} --fixed-at "$FIXED_AT"'
    lines = [f"FIXED_AT=$({NOW})", "ENDED=$(date +%s)", "rm -f observation-*"]
    if not mitigate:
        return [*lines, capture]
    lines += [f'WINDOW="${{ITBENCH_MITIGATION_WINDOW:-{int(window or 0)}}}"',
              f'STABLE_FOR="${{ITBENCH_STABLE_FOR:-{int(lifecycle.STABLE_FOR)}}}"',
              'if [ "$WINDOW" -gt 0 ]; then while :; do', f"  {capture}",
              f"  if python3 -S evaluator.py --task mitigate --state state.json | python3 -S -c {shlex.quote(HOLDS_PY)}; "
              "then break; fi",
              '  if [ $(( $(date +%s) - ENDED )) -ge "$WINDOW" ]; then break; fi',
              f"  sleep {lifecycle.MITIGATION_POLL:g}", "done; fi",
              'if [ "$STABLE_FOR" -gt 0 ]; then',
              f'  EVERY=$(( STABLE_FOR / {lifecycle.OBSERVATIONS} )); if [ "$EVERY" -lt {int(lifecycle.ALERT_POLL)} ]; '
              f'then EVERY={int(lifecycle.ALERT_POLL)}; fi',
              "  STARTED=$(date +%s); n=0", "  while :; do", f"    {NOW} > observation-$n.at",
              f"    python3 -S evaluator.py --capture observation-$n.json{prometheus} 2>/dev/null || rm -f observation-$n.at",
              "    n=$((n + 1))", '    if [ $(( $(date +%s) - STARTED )) -ge "$STABLE_FOR" ]; then break; fi',
              '    sleep "$EVERY"', "  done", "fi",
              capture, f"python3 -S -c {shlex.quote(OBSERVE_PY)}", "rm -f observation-*"]
    return lines


def _scenario_json(files: dict[str, bytes]) -> dict:
    import json

    data = files.get("scenario.json")
    return json.loads(data) if data else {}


def _compliance(scenario: ir.Scenario) -> bool:
    return scenario.compliance is not None and scenario.compliance.task in TASK_CLASSES


def _spec(files: dict[str, bytes]) -> dict:
    from .evaluator_file import spec_of

    data = files.get("evaluator.py")
    return (spec_of(data.decode("utf-8")) if data else None) or {}


def _evaluate(scenario: ir.Scenario, inputs: list[tuple[str, str]]) -> str:
    """The evaluation of every task the scenario poses, with the inputs `itbench run` gives it
    (lifecycle.evaluator_inputs): the agent's folder or answer file, the state, the recorded times."""
    if _compliance(scenario):
        return f'python3 -S evaluator.py --artifact "$W/{submission_file(scenario)}" --state state.json'
    given = {"submission": f'"$W/{submission_file(scenario)}"', "folder": '"$W"', "state": "state.json",
             "injected_at": '"$(cat injected-at)"',
             # none when the agent left no detection answer (the evaluator grades it as missing)
             "answered_at": '${ANSWERED:+"$ANSWERED"}'}
    command = "python3 -S evaluator.py"
    for option, what in inputs:
        command += f" {given[what]}" if what == "answered_at" else f" {option} {given[what]}"
    if any(what == "answered_at" for _, what in inputs):
        return 'ANSWERED=""; if [ -f answered-at ]; then ANSWERED="--answered-at=$(cat answered-at)"; fi\n' + command
    return command


def ready_script(refs) -> str:
    """Wait for workloads with kubectl (the engines without a native readiness assertion)."""
    return _script(*(f"kubectl rollout status {kubectl_name(a, k, n)}{_ns(ns)} --timeout={READY_TIMEOUT}"
                     for a, k, ns, n, _ in refs))


def bundle_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """The files an engine run reads (ITBench's own exports are not needed)."""
    return {n: d for n, d in files.items() if not n.startswith("itbench/")}

