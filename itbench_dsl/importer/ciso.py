"""Import of ITBench CISO scenario folders into `.itb` text.

An ITBench CISO scenario is a folder (`1.gen-cis-b-k8s-kyverno/`): `info.json` names its class
(`scenario_type`), its CIS section (in `name`) and its goal; `manifests/application.yaml`
holds the objects that open the policy gap (Kubernetes classes); `tasks/fault_inject.yml`
the Ansible tasks that open it on a RHEL9 host (class 3); `eval_config.yaml` which policy
must now fail which object (the update class); `input.json` the inventory group (class 3).

The import is general: the class comes from `scenario_type`, the control from the section
number and the goal, the gap from the manifests (the update class: from eval_config.yaml),
a host control from the setting its injection task writes. What the language cannot hold
is left out with a located warning naming it (W5050, W5051); an ITBench file that
contradicts itself is reported (W5052) and the scenario is written as the class says.
Files that cannot be read, parsed or understood give located errors (E5050-E5054), never
a traceback. Every diagnostic's path is the ITBench file it is about.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import ast
from .. import builders as b
from .. import ciso
from ..backends import itbench_ciso
from ..ciso.tasks import BY_SCENARIO_TYPE, TASK_CLASSES
from ..diagnostics import Diagnostics, did_you_mean
from ..printer import Notes, print_document
from ..source import SourceFile, Span
from .located import read_bounded

MAX_BYTES = 4 * 1024 * 1024  # larger files are not ITBench scenario files
MAX_VALUES = 200_000  # nor are YAML documents with more values than this
WORKLOADS = ("Deployment", "StatefulSet")


class _Stop(Exception):
    """An error was reported; the import cannot go on."""


def looks_like_ciso(path: Path) -> bool:
    """True for an ITBench CISO scenario folder (or its info.json): an `info.json` beside
    `input.json`, `manifests/` or `tasks/`."""
    try:
        folder = path if path.is_dir() else path.parent if path.name == "info.json" else None
        if folder is None or not (folder / "info.json").is_file():
            return False
        return any((folder / n).exists() for n in ("input.json", "manifests", "tasks", "eval_config.yaml"))
    except OSError:
        return False


def import_ciso(path: Path, diags: Diagnostics) -> str | None:
    """The `.itb` text of the ITBench CISO scenario at `path` (a folder, or its info.json), or
    None when an error was reported."""
    folder = path if path.is_dir() else path.parent
    try:
        return _Importer(folder, diags).run()
    except _Stop:
        return None


# ---- reading, with locations -----------------------------------------------------------------------------


class _File:
    """One ITBench file: its text and where its keys are."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = str(path)
        self.source = SourceFile(self.path, text)

    def span(self, start: int = 0, end: int | None = None) -> Span:
        end = start + 1 if end is None else end
        end = max(start, min(end, len(self.source.text)))
        return self.source.span(start, end)

    def key_span(self, key: str, after: int = 0) -> Span:
        """Where `key` first appears (a JSON key, a YAML key or word) at or after offset `after`."""
        text = self.source.text
        for pattern in (rf'"{re.escape(key)}"\s*:', rf"(?m)^\s*-?\s*{re.escape(key)}\s*:", re.escape(key)):
            match = re.compile(pattern).search(text, after)
            if match:
                start = text.index(key, match.start())
                return self.span(start, start + len(key))
        return self.span(after, after + 1)


class _Node:
    """A YAML value with the offset where it starts (for located diagnostics)."""

    __slots__ = ("value", "start", "end")

    def __init__(self, value, start: int, end: int) -> None:
        self.value, self.start, self.end = value, start, end


def _located(node) -> _Node:
    import yaml
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key, value in node.value:
            out[_plain(key)] = (_located(value), key.start_mark.index, key.end_mark.index)
        return _Node(out, node.start_mark.index, node.end_mark.index)
    if isinstance(node, yaml.SequenceNode):
        return _Node([_located(v) for v in node.value], node.start_mark.index, node.end_mark.index)
    return _Node(None, node.start_mark.index, node.end_mark.index)


def _expanded_size(node, memo: dict) -> int:
    """How many values the node holds once its aliases are expanded (computed once per shared node)."""
    key = id(node)
    if key not in memo:
        memo[key] = 0  # a recursive alias counts once
        children = node.value if isinstance(node.value, list) else []
        total = 1
        for child in children:
            for part in (child if isinstance(child, tuple) else (child,)):
                total += _expanded_size(part, memo)
                if total > MAX_VALUES:
                    break
        memo[key] = total
    return memo[key]


def _plain(node) -> object:
    return node.value if not isinstance(node.value, list) else repr(node.value)


class _Importer:
    def __init__(self, folder: Path, diags: Diagnostics) -> None:
        self.folder = folder
        self.diags = diags
        self.errors = 0

    # -- diagnostics
    def error(self, code: str, message: str, file: _File | str, span: Span | None = None, label: str = "",
              help: str = "") -> None:
        path = file.path if isinstance(file, _File) else file
        self.diags.error(code, message, path, span or (file.span() if isinstance(file, _File) else _NOWHERE),
                         label, help)
        self.errors += 1

    def warn(self, code: str, message: str, file: _File, span: Span | None = None, label: str = "",
             help: str = "") -> None:
        self.diags.error(code, message, file.path, span or file.span(), label, help)

    # -- files
    def read(self, name: str, required: bool, why: str = "") -> _File | None:
        path = self.folder / name
        try:
            if not path.is_file():
                if required:
                    self.error("E5051", f"the scenario has no `{name}`{why}", str(path),
                               help="an ITBench CISO scenario folder holds info.json and its class's files")
                    raise _Stop
                return None
            data = read_bounded(path, MAX_BYTES)
        except (OSError, ValueError) as exc:
            self.error("E5050", f"cannot read `{name}`: {getattr(exc, 'strerror', None) or exc}", str(path))
            raise _Stop from exc
        if len(data) > MAX_BYTES:
            self.error("E5050", f"`{name}` is larger than {MAX_BYTES // (1024 * 1024)} MiB", str(path))
            raise _Stop
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            file = _File(path, data.decode("utf-8", "replace"))
            self.error("E5050", f"`{name}` is not UTF-8 text", file, file.span(exc.start, exc.end), "undecodable")
            raise _Stop from exc
        file = _File(path, text)
        self.diags.sources[file.path] = file.source
        return file

    def load_json(self, file: _File) -> dict:
        try:
            data = json.loads(file.source.text)
        except json.JSONDecodeError as exc:
            self.error("E5050", f"malformed JSON: {exc.msg}", file, file.span(exc.pos), "here")
            raise _Stop from exc
        except RecursionError as exc:
            self.error("E5050", "malformed JSON: nested too deeply", file)
            raise _Stop from exc
        except ValueError as exc:  # an integer of more digits than Python converts (4300)
            self.error("E5050", f"malformed JSON: {str(exc).split(';')[0]}", file)
            raise _Stop from exc
        if not isinstance(data, dict):
            self.error("E5052", f"`{Path(file.path).name}` must hold a JSON object, not {_type(data)}", file,
                       file.span(0, min(len(file.source.text), 1) or 0))
            raise _Stop
        return data

    def load_yaml(self, file: _File) -> list[tuple[object, _Node]]:
        """Every document with its located node tree (empty documents skipped)."""
        import yaml
        documents = []
        loader = None
        try:
            loader = yaml.SafeLoader(file.source.text)
            while loader.check_node():
                node = loader.get_node()
                if node is None:
                    continue
                if _expanded_size(node, {}) > MAX_VALUES:  # aliases that multiply (a "billion laughs" file)
                    self.error("E5050", f"the YAML document expands to more than {MAX_VALUES} values", file,
                               file.span(node.start_mark.index), "here")
                    raise _Stop
                documents.append((loader.construct_document(node), _located(node)))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            offset = mark.index if mark is not None else 0
            self.error("E5050", f"malformed YAML: {exc.problem or exc.context}", file, file.span(offset), "here")
            raise _Stop from exc
        except yaml.reader.ReaderError as exc:
            self.error("E5050", f"malformed YAML: character #x{exc.character:04x} is not allowed", file,
                       file.span(exc.position), "here")
            raise _Stop from exc
        except RecursionError as exc:
            self.error("E5050", "malformed YAML: nested too deeply, or an alias that contains itself", file)
            raise _Stop from exc
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            self.error("E5050", f"malformed YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                       file)
            raise _Stop from exc
        finally:
            if loader is not None:
                loader.dispose()
        return [(d, n) for d, n in documents if d is not None]

    def string(self, data: dict, key: str, file: _File, required: bool = True) -> str | None:
        value = data.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            what = "is missing" if key not in data else f"must be a non-empty string, not {_type(value)}"
            self.error("E5052", f"`{key}` {what} in `{Path(file.path).name}`", file,
                       file.key_span(key) if key in data else file.span(), "here" if key in data else "")
            raise _Stop
        return value

    # -- the import
    def run(self) -> str | None:
        info_file = self.read("info.json", True)
        info = self.load_json(info_file)
        kind = self.string(info, "scenario_type", info_file)
        cls = BY_SCENARIO_TYPE.get(kind.lower())
        if cls is None:
            hint = did_you_mean(kind, [c.scenario_type for c in TASK_CLASSES.values()])
            self.error("E5053", f"`{kind}` is not an ITBench CISO scenario class", info_file,
                       info_file.key_span(kind), "unknown scenario_type",
                       help=f"did you mean `{hint}`?" if hint else "known: " + ", ".join(
                           c.scenario_type for c in TASK_CLASSES.values()))
            raise _Stop
        name = self.info_name = self.string(info, "name", info_file)
        goal = self.goal = self.string(info, "goal", info_file)
        description = self.string(info, "description", info_file, required=False) or goal
        incident = info.get("incident_type")
        if incident is not None and incident != cls.incident_type:
            self.warn("W5052", f"`incident_type` is `{incident}` but class `{cls.scenario_type}` says "
                      f"`{cls.incident_type}`", info_file, info_file.key_span(str(incident)), "disagrees",
                      help="the compiled scenario writes the class's incident_type")
        section = _section(name)
        self.namespaces: list[str] = []
        self.objects: list[tuple] = []  # (namespace, keyword, name, body entries)
        self.gaps: list[ast.Gap] = []
        self.policy: str | None = None  # the policy eval_config.yaml checks (update class)
        self.policies: list[tuple[str, list[ast.Block]]] = []  # the update class's existing policies, with rules
        self.policy_file: _File | None = None
        self.compliant: list[ast.Compliant] = []
        self.manifests: dict[tuple, dict] = {}  # (kind, namespace, name) -> the imported manifest
        self.gap_items: list[tuple] = []  # (kind, namespace, name, keyword) of the gap objects
        self.copying = False  # reading copies of imported objects (catalogue_compliant)
        if cls.platform == "rhel9":
            control = self.host_control(self.host_inventory())
        else:
            control = self.control(cls.task, section, goal)
            self.kubernetes(cls.task)
            if not self.compliant and not self.errors:
                self.catalogue_compliant(cls.task, section, info_file)
        if self.errors:
            raise _Stop
        return self.render(cls, name, description, section, control)

    # -- the control
    def control(self, task: str, section: str | None, goal: str) -> ast.Control:
        """The `control` statement of a Kubernetes class: the catalogue's, or the section's own."""
        entry = ciso.lookup(f"cis-k8s-{section}") if section else None
        if entry is not None and task in entry.classes and not TASK_CLASSES[task].updates:
            return self.control_statement(entry.id, goal, entry.title, None)
        control_id = section or _slug(self.info_name) or "policy"
        return self.control_statement(control_id, goal, None, ciso.K8S_BENCHMARK)

    @staticmethod
    def control_statement(control_id: str, goal: str, default_goal: str | None, benchmark: str | None) -> ast.Control:
        body = []
        if benchmark is not None:
            body.append(b.attr("benchmark", benchmark))
        if goal != default_goal:
            body.append(b.attr("goal", goal))
        return b.control(control_id, b.body(body))

    def host_control(self, hosts: str) -> ast.Control:
        """The host control the injection tasks open (`self.control_id`), with its hosts group and goal."""
        control = ciso.lookup(self.control_id)
        body = [] if hosts == ciso.DEFAULT_HOSTS else [b.attr("hosts", hosts)]
        if self.goal != control.title:
            body.append(b.attr("goal", self.goal))
        return b.control(self.control_id, b.body(body))

    # -- class 3: a RHEL9 host control, recognised by the setting its injection writes
    def host_inventory(self) -> str:
        tasks_file = self.read("tasks/fault_inject.yml", True, " (the tasks that open the gap on the host)")
        documents = self.load_yaml(tasks_file)
        tasks = [t for d, node in documents for t in _task_list(d, node)]
        found = None
        for task, node in tasks:
            found = _match_host_control(task)
            if found is not None:
                break
        if found is None:
            start = tasks[0][1].start if tasks else 0
            self.error("E5054", "no host control of the catalogue matches these injection tasks", tasks_file,
                       tasks_file.span(start), "opens an unknown gap",
                       help="the language's host controls are those of docs/ciso.md (sshd settings, "
                       "login.defs, auditd); a task must set one of them to its violating value")
            raise _Stop
        control, value = found
        if value != control.violating:
            self.warn("W5052", f"the injection sets {control.key} to `{value}`; the catalogue's gap of "
                      f"`{control.id}` sets `{control.violating}`", tasks_file, tasks_file.key_span(control.key),
                      "another violating value", help=f"the compiled scenario sets `{control.violating}`")
        hosts = ciso.DEFAULT_HOSTS
        input_file = self.read("input.json", False)
        if input_file is not None:
            data = self.load_json(input_file)
            group = data.get("inventory_host")
            if isinstance(group, str) and ciso.is_group_name(group):
                hosts = group
            elif group is not None:
                self.warn("W5052", f"`inventory_host` is not an Ansible inventory group name: {_short(group)}",
                          input_file, input_file.key_span("inventory_host"), "invalid",
                          help=f"the compiled scenario uses `{ciso.DEFAULT_HOSTS}`")
        self.control_id = control.id
        return hosts

    # -- Kubernetes classes
    def kubernetes(self, task: str) -> None:
        app_file = self.read("manifests/application.yaml", True, " (the objects that open the policy gap)")
        documents = self.load_yaml(app_file)
        declared: list[tuple[str, str | None, str, str]] = []  # (kind, namespace, name, statement keyword)
        for data, node in documents:
            item = self.manifest(data, node, app_file)
            if item is not None:
                declared.append(item)
        compliant_file = self.read("manifests/compliant.yaml", False)
        compliant_items = []
        if compliant_file is not None:
            for data, node in self.load_yaml(compliant_file):
                item = self.manifest(data, node, compliant_file)
                if item is not None:
                    compliant_items.append(item)
        updates = TASK_CLASSES[task].updates
        if updates:
            self.existing_policies()
        selected = self.update_checks(declared + compliant_items) if updates else None
        if selected is not None:
            gaps, compliant = selected
        else:
            workloads = [d for d in declared if d[0] in WORKLOADS]
            gaps, compliant = (workloads or declared), compliant_items
        if not gaps and not self.errors:
            self.error("E5054", "no object of `manifests/application.yaml` opens the gap in a form the language "
                       "holds", app_file, app_file.span(0, 1), "nothing to deploy as the gap",
                       help="the gap must be a Deployment, StatefulSet or ServiceAccount")
            return
        self.gap_items = list(gaps)
        for kind, _, obj_name, word in gaps:
            self.gaps.append(b.gap(b.ref(word, obj_name)))
        for kind, _, obj_name, word in compliant:
            if (kind, _, obj_name, word) not in gaps:
                self.compliant.append(b.compliant(b.ref(word, obj_name)))

    def catalogue_compliant(self, task: str, section: str | None, info_file: _File) -> None:
        """Without a compliant object an always-fail policy would pass: add one. Each gap object gets its
        counterpart, a copy of it with the fields the control reads set as the catalogue's compliant example
        sets them (`K8sControl.counterpart`), so that the pair differs in what the control reads alone; a gap
        object the catalogue cannot mend gets the catalogue's compliant example itself."""
        import yaml
        entry = ciso.lookup(f"cis-k8s-{section}") if section else None
        if entry is None or task not in entry.classes or not self.namespaces:
            return
        manifests, names = [], {n for _, _, n, _ in self.gap_items}
        for kind, namespace, obj_name, _ in self.gap_items:
            mended = entry.counterpart(self.manifests.get((kind, namespace, obj_name)), names)
            if mended is not None:
                manifests.append(mended)
        how, copied = "a copy of each gap object as the control wants it", bool(manifests)
        if not manifests:
            manifests, how = entry.objects(self.namespaces[0], False), f"the catalogue's compliant example of {entry.id}"
        file = _File(Path(f"<{how}>"), yaml.safe_dump_all(manifests, sort_keys=True))
        self.copying = copied
        added = [item for data, node in self.load_yaml(file) if (item := self.manifest(data, node, file))]
        self.copying = False
        for kind, _, obj_name, word in added:
            if kind in WORKLOADS or len(added) == 1:
                self.compliant.append(b.compliant(b.ref(word, obj_name)))
        if self.compliant:
            self.warn("W5054", f"the scenario has no compliant object: {how} is added "
                      f"({', '.join(f'{k} `{n}`' for k, _, n, _ in added)})", info_file,
                      info_file.key_span("name"), "no compliant object",
                      help="an always-fail policy must fail the scenario; replace it with an object of your own")

    def manifest(self, data, node: _Node, file: _File) -> tuple[str, str | None, str, str] | None:
        """One manifest document as a topology statement; (kind, namespace, name, keyword) or None."""
        if not isinstance(data, dict):
            self.error("E5052", f"a manifest document must be a mapping, not {_type(data)}", file,
                       file.span(node.start, node.end))
            return None
        kind, meta = data.get("kind"), data.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(kind, str) or not isinstance(name, str) or not isinstance(data.get("apiVersion"), str):
            missing = [k for k, ok in (("apiVersion", isinstance(data.get("apiVersion"), str)),
                                       ("kind", isinstance(kind, str)), ("metadata.name", isinstance(name, str)))
                       if not ok]
            self.error("E5052", f"a manifest document needs {', '.join(f'`{m}`' for m in missing)}", file,
                       file.span(node.start, min(node.end, node.start + 1)), "incomplete object")
            return None
        namespace = meta.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            self.error("E5052", f"`metadata.namespace` of {kind} `{name}` must be a string", file,
                       file.span(node.start, node.start + 1))
            return None
        namespace = namespace or itbench_ciso.TARGET_NAMESPACE
        convert = _CONVERTERS.get(kind)
        if kind == "Pod" and isinstance(data.get("spec"), dict):
            # kyverno/kyverno pkg/autogen (v1.x): a rule matching Pods is generated for the pod controllers,
            # Deployments among them, unless the annotation pod-policies.kyverno.io/autogen-controllers says otherwise
            # Kyverno applies a Pod rule to the pod template of a Deployment too (autogen): a one-replica
            # Deployment opens the same gap
            self.warn("W5053", f"Pod `{name}` is imported as a one-replica Deployment: the language declares no "
                      "Pods", file, file.span(node.start, min(node.end, node.start + 1)), "becomes a Deployment",
                      help="Kyverno's policies for Pods check a Deployment's pod template too")
            labels = {"app.kubernetes.io/name": name}
            data = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": data["metadata"],
                    "spec": {"selector": {"matchLabels": labels},
                             "template": {"metadata": {"labels": labels}, "spec": data["spec"]}}}
            node = _Node({"metadata": node.value.get("metadata"), "spec": (
                _Node({"template": (_Node({"spec": node.value.get("spec")}, node.start, node.end), 0, 0)},
                      node.start, node.end), 0, 0)}, node.start, node.end)
            kind, convert = "Deployment", _workload
        if convert is None:
            self.warn("W5050", f"{kind} `{name}` is not a kind the language declares: left out", file,
                      file.span(node.start, min(node.end, node.start + 1)), "left out",
                      help="the compiled scenario does not deploy it")
            return None
        if namespace not in self.namespaces:
            self.namespaces.append(namespace)
        left_out: list[tuple[str, int]] = []
        entries = convert(data, node, left_out)
        for what, offset in left_out if not self.copying else ():  # a copy's were said of its original
            self.warn("W5051", f"{what} of {kind} `{name}` cannot be expressed in the language: left out", file,
                      file.span(offset, offset + 1), "left out")
        word = {"Deployment": "deployment", "StatefulSet": "statefulset", "ServiceAccount": "serviceaccount"}[kind]
        self.objects.append((namespace, word, name, entries))
        self.manifests[(kind, namespace, name)] = data
        return kind, namespace, name, word

    def existing_policies(self) -> None:
        """The update class's existing policies, as `policy` blocks of the task."""
        self.policy_file = file = self.read("manifests/existing-policy.yaml", False)
        if file is None:
            return
        for data, node in self.load_yaml(file):
            kind = data.get("kind") if isinstance(data, dict) else None
            meta = data.get("metadata") if isinstance(data, dict) else None
            name = meta.get("name") if isinstance(meta, dict) else None
            if kind != "ClusterPolicy" or not isinstance(name, str) or not name:
                self.warn("W5050", f"existing {kind or 'object'} `{name or '?'}` cannot be declared in the language: "
                          "left out", file, file.span(node.start, min(node.end, node.start + 1)), "left out",
                          help="a kyverno_update task declares Kyverno ClusterPolicies (`policy` blocks)")
                continue
            left_out: list[tuple[str, int]] = []
            rules = _policy(data, node, left_out)
            for what, offset in left_out:
                self.warn("W5051", f"{what} of ClusterPolicy `{name}` cannot be expressed in the language: left out",
                          file, file.span(offset, offset + 1), "left out")
            if rules is None:
                self.warn("W5050", f"ClusterPolicy `{name}` has no rule the language holds: left out", file,
                          file.span(node.start, min(node.end, node.start + 1)), "left out")
                continue
            if name in [n for n, _ in self.policies]:
                self.warn("W5052", f"ClusterPolicy `{name}` is declared twice: the second is left out", file,
                          file.span(node.start, min(node.end, node.start + 1)), "second one")
                continue
            self.policies.append((name, rules))

    def update_checks(self, declared) -> tuple[list, list] | None:
        """(gaps, compliant) from eval_config.yaml's check_violations; None without the file."""
        file = self.read("eval_config.yaml", False)
        if file is None:
            return None
        documents = self.load_yaml(file)
        data = documents[0][0] if documents else {}
        if not isinstance(data, dict):
            self.error("E5052", f"eval_config.yaml must hold a mapping, not {_type(data)}", file)
            raise _Stop
        checks = data.get("check_violations") or []
        if not isinstance(checks, list):
            self.error("E5052", "`check_violations` must be a list", file, file.key_span("check_violations"))
            raise _Stop
        by_key = {(k, n): (k, ns, n, w) for k, ns, n, w in declared}
        gaps, compliant = [], []
        for index, check in enumerate(checks):
            resource = check.get("resource") if isinstance(check, dict) else None
            if not isinstance(resource, dict) or not isinstance(resource.get("name"), str) \
                    or not isinstance(resource.get("kind"), str):
                self.error("E5052", f"check_violations[{index}] needs `resource` with `kind` and `name`", file,
                           file.key_span("resource") if "resource" in file.source.text else file.span())
                continue
            expected = check.get("expected_result", "fail")
            found = by_key.get((resource["kind"], resource["name"]))
            if found is None and resource["kind"] == "Pod":  # imported as a Deployment (W5053)
                found = by_key.get(("Deployment", resource["name"]))
            policy = check.get("policy_name")
            if isinstance(policy, str) and policy and self.policy is None:
                self.policy = policy
            if found is None:
                self.warn("W5052", f"check_violations[{index}] names {resource['kind']} `{resource['name']}`, which "
                          "the manifests do not declare in a form the language holds", file,
                          file.key_span(resource["name"]), "unknown resource", help="the check is left out")
                continue
            (gaps if expected != "pass" else compliant).append(found)
        return gaps, compliant

    def task_statement(self, task: str) -> ast.Task:
        """`task KIND`; for the update class, with the existing policies and the one the agent edits."""
        if not self.policies:
            return b.task(task)
        names = [n for n, _ in self.policies]
        update = self.policy if self.policy in names else None
        if self.policy is not None and update is None:
            file = self.policy_file or _File(self.folder / "eval_config.yaml", "")
            self.warn("W5052", f"eval_config.yaml checks policy `{self.policy}`, which the existing policies do not "
                      "declare", file, None, "", help=f"the compiled scenario has the agent edit `{names[-1]}`")
        if update is None and len(names) > 1:
            update = names[-1]
        body = [b.attr("update", update)] if update is not None and len(names) > 1 else []
        body += [b.block("policy", rules, labels=[name]) for name, rules in self.policies]
        return b.task(task, body)

    # -- output
    def render(self, cls, name: str, description: str, section: str | None, control: ast.Control) -> str:
        scenario_name = _slug(name) or _slug(self.folder.name) or "itbench-ciso-scenario"
        metadata = {"itbench_id": self.folder.name}
        derived = cls.name.format(section=section or scenario_name)
        if name != derived:
            metadata["itbench_name"] = name
        if cls.platform == "rhel9":
            self.namespaces = ["ciso-workspace"]  # no Kubernetes objects: the agent's workspace namespace
        notes = Notes()
        statements = [b.domain("ciso"), b.complexity("high" if cls.updates else "medium"),
                      b.description(description), b.metadata(metadata),
                      notes.add(control, blank_line=True),
                      notes.add(self.task_statement(cls.task), blank_line=True),
                      notes.add(self.topology(), blank_line=True)]
        checked = [*self.gaps, *self.compliant]
        if checked:
            notes.add(checked[0], blank_line=True)
            if not self.compliant:
                notes.add(checked[-1], after=[
                    "# ITBench grades only the gap: a compliant object (`compliant deployment \"...\"`) makes an",
                    "# always-fail policy fail too (`itbench check` asks for one, E4004)"])
        text, problem = _printed(b.scenario(scenario_name, statements + checked), notes)
        if text is None:  # a value deeper than the language's nesting limit, say
            self.error("E5052", f"the scenario cannot be written in the language: {problem}",
                       str(self.folder / "info.json"))
            raise _Stop
        return text

    def topology(self) -> ast.Topology:
        """The namespaces and the objects, each saying its namespace when there are several."""
        statements = [b.obj("namespace", n) for n in self.namespaces]
        for namespace, word, obj_name, entries in self.objects:
            if len(self.namespaces) > 1:
                entries = [b.attr("namespace", namespace), *entries]
            statements.append(b.obj(word, obj_name, b.body(entries)))
        return b.topology(statements)


_NOWHERE = Span(0, 0, 1, 1, 1, 1)


def _printed(document: ast.Scenario, notes: Notes) -> tuple[str | None, str]:
    """The document's text, or None and why it does not read back (a value nested deeper than the parser
    takes)."""
    from ..parser import parse_text
    problem = b.too_deep(document)
    if problem is not None:
        return None, problem
    text = print_document(document, notes=notes)
    diags = Diagnostics()
    if parse_text(text, "<import>", diags) is None:
        return None, diags.items[0].message if diags.items else "it does not parse"
    return text, ""


def _type(value) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _short(value) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."


def _section(name: str) -> str | None:
    match = re.search(r"(?<![\d.])(\d+(?:\.\d+)+)(?![\d])", name) or re.search(r"(?<!\d)(\d+(?:\.\d+)+)(?!\d)", name)
    return match.group(1) if match else None


def _slug(text: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")[:63].strip("-")


# ---- RHEL9 injection tasks --------------------------------------------------------------------------------


def _task_list(data, node: _Node) -> list[tuple[dict, _Node]]:
    """The tasks of a task file (a list of tasks), or of the plays of a playbook."""
    if not isinstance(data, list) or not isinstance(node.value, list):
        return []
    out = []
    for item, item_node in zip(data, node.value):
        if isinstance(item, dict) and isinstance(item.get("tasks"), list) and isinstance(item_node.value, dict):
            inner = item_node.value.get("tasks")
            out += _task_list(item["tasks"], inner[0]) if inner else []
        elif isinstance(item, dict):
            out.append((item, item_node))
    return out


def _module(task: dict, name: str):
    for key in (f"ansible.builtin.{name}", name):
        if isinstance(task.get(key), dict):
            return task[key]
    return None


def _match_host_control(task: dict):
    """(host control, the value the task sets) when the task opens one of the catalogue's host gaps."""
    line = _module(task, "lineinfile")
    if line is not None and isinstance(line.get("path"), str) and isinstance(line.get("line"), str):
        parts = line["line"].split(None, 1)
        if len(parts) == 2:
            for control in ciso.HOST_CONTROLS:
                if control.kind == "line" and control.path == line["path"] and control.key == parts[0]:
                    if parts[1].strip() != control.compliant:
                        return control, parts[1].strip()
    service = _module(task, "service") or _module(task, "systemd")
    if service is not None and service.get("enabled") is False:
        for control in ciso.HOST_CONTROLS:
            if control.kind == "service" and control.key == service.get("name"):
                return control, control.violating
    return None


# ---- Kubernetes objects to topology statements -----------------------------------------------------------

# A converter returns the body entries of the statement and appends (what, offset) for each field
# it leaves out. Only what the language holds is written; everything else is reported.


def _at(node: _Node, *path) -> _Node | None:
    for key in path:
        if node is None:
            return None
        if isinstance(node.value, dict):
            entry = node.value.get(key)
            node = entry[0] if entry else None
        elif isinstance(node.value, list) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            return None
    return node


def _key_offset(node: _Node | None, key) -> int:
    if node is not None and isinstance(node.value, dict) and key in node.value:
        return node.value[key][1]
    return node.start if node is not None else 0


def _string_map(name: str, values) -> list[ast.Block]:
    if not isinstance(values, dict) or not values:
        return []
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        return []
    return [b.block(name, b.entries_of(values))]


def _map_field(fields: "_Fields", key: str, name: str) -> list[ast.Block]:
    """A string map (labels, annotations, node selector); reported as left out unless every value is a string."""
    values = fields.get(key, dict)
    if isinstance(values, dict) and values and not all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in values.items()):
        fields.leave(key)
        return []
    return _string_map(name, values)


class _Fields:
    """Reads a mapping's fields once each; what is never read is reported as left out."""

    def __init__(self, data, node: _Node | None, left_out: list, where: str) -> None:
        self.data = data if isinstance(data, dict) else {}
        self.node = node
        self.left_out = left_out
        self.where = where
        self.used: set = set()

    def get(self, key, kind=None):
        self.used.add(key)
        value = self.data.get(key)
        if value is not None and kind is not None and not isinstance(value, kind) or isinstance(value, bool) \
                and kind in (int, (int, float)):
            self.leave(key)
            return None
        return value

    def leave(self, key) -> None:
        self.left_out.append((f"`{self.where}{key}`", _key_offset(self.node, key)))

    def sub(self, key) -> _Fields:
        self.used.add(key)
        return _Fields(self.data.get(key), _at(self.node, key), self.left_out, f"{self.where}{key}.")

    def finish(self, ignore=()) -> None:
        for key in self.data:
            if key not in self.used and key not in ignore:
                self.leave(key)


_POD_SECURITY = (("runAsUser", "run_as_user", int), ("runAsGroup", "run_as_group", int), ("fsGroup", "fs_group", int),
                 ("runAsNonRoot", "run_as_non_root", bool))
_CONTAINER_SECURITY = (("runAsUser", "run_as_user", int), ("runAsGroup", "run_as_group", int),
                       ("runAsNonRoot", "run_as_non_root", bool), ("privileged", "privileged", bool),
                       ("readOnlyRootFilesystem", "read_only_root_filesystem", bool),
                       ("allowPrivilegeEscalation", "allow_privilege_escalation", bool))


def _security(fields: _Fields, pod: bool) -> list[ast.Entry]:
    body = []
    for k8s, key, kind in (_POD_SECURITY if pod else _CONTAINER_SECURITY):
        value = fields.get(k8s)
        if value is None:
            continue
        if not isinstance(value, kind) or (kind is int and (isinstance(value, bool) or value < 0)):
            fields.leave(k8s)
            continue
        body.append(b.attr(key, value))
    if not pod and "capabilities" in fields.data:
        caps = fields.sub("capabilities")
        inner = []
        for key in ("add", "drop"):
            value = caps.get(key, list)
            if value is not None and all(isinstance(x, str) for x in value):
                inner.append(b.attr(key, value))
            elif value is not None:
                caps.leave(key)
        caps.finish()
        body.append(b.block("capabilities", inner))
    if "seccompProfile" in fields.data:
        seccomp = fields.sub("seccompProfile")
        kind = seccomp.get("type", str)
        local = seccomp.get("localhostProfile", str)
        seccomp.finish()
        if kind is not None:
            inner = [b.attr("type", kind)] + ([b.attr("localhost_profile", local)] if local else [])
            body.append(b.block("seccomp_profile", inner))
    fields.finish()
    return body


def _port(port: _Fields) -> ast.Entry | None:
    number = port.get("containerPort", int)
    name = port.get("name", str)
    protocol = port.get("protocol", str)
    port.finish()
    if number is None or not 0 < number < 65536:
        if "containerPort" in port.data and number is not None:
            port.leave("containerPort")
        return None
    labels = [name] if name else []
    if protocol and protocol != "TCP":
        return b.block("port", [b.attr("port", number), b.attr("protocol", protocol)], labels)
    return b.attr("port", number, labels)


def _container(fields: _Fields, word: str) -> ast.Block:
    name = fields.get("name", str) or "app"
    body = []
    image = fields.get("image", str)
    body.append(b.attr("image", image or ""))
    policy = fields.get("imagePullPolicy", str)
    if policy:
        body.append(b.attr("image_pull_policy", policy))
    for k8s, key in (("command", "command"), ("args", "args")):
        value = fields.get(k8s, list)
        if value and all(isinstance(x, str) for x in value):
            body.append(b.attr(key, value))
        elif value:
            fields.leave(k8s)
    ports = fields.get("ports", list) or []
    ports_node = _at(fields.node, "ports")
    for index, item in enumerate(ports):
        port = _port(_Fields(item, _at(ports_node, index), fields.left_out, f"{fields.where}ports[{index}]."))
        if port is not None:
            body.append(port)
    body += _env(fields)
    body += _resources(fields.sub("resources"))
    if "securityContext" in fields.data:
        body.append(b.block("security_context", _security(fields.sub("securityContext"), pod=False)))
    fields.finish()
    return b.block(word, body, [name])


def _env(fields: _Fields) -> list[ast.Block]:
    """`env { NAME = "value" }` for the variables with a plain value; the others are left out."""
    env = fields.get("env", list) or []
    env_node = _at(fields.node, "env")
    values = []
    for index, item in enumerate(env):
        if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("value", ""), str) \
                and set(item) <= {"name", "value"}:
            values.append(b.attr(item["name"], item.get("value", "")))
        else:
            fields.left_out.append((f"`{fields.where}env[{index}]`", (_at(env_node, index) or env_node).start))
    return [b.block("env", values)] if values else []


def _resources(resources: _Fields) -> list[ast.Block]:
    """`resources { requests { cpu = 100m } limits { ... } }` for the quantities written with a unit."""
    sections = []
    for section in ("requests", "limits"):
        part = resources.sub(section)
        inner = []
        for k8s, key in (("cpu", "cpu"), ("memory", "memory"), ("ephemeral-storage", "ephemeral_storage")):
            value = part.get(k8s)
            if isinstance(value, str) and re.fullmatch(r"\d+(\.\d+)?[A-Za-z]+", value):
                inner.append(b.attr(key, b.number(value)))
            elif value is not None:
                part.leave(k8s)
        part.finish()
        if inner:
            sections.append(b.block(section, inner))
    resources.finish()
    return [b.block("resources", sections)] if sections else []


def _workload(data: dict, node: _Node, left_out: list) -> list[ast.Entry]:
    top = _Fields(data, node, left_out, "")
    top.get("apiVersion")
    top.get("kind")
    meta = top.sub("metadata")
    meta.get("name")
    meta.get("namespace")
    body = []
    body += _map_field(meta, "labels", "object_labels")
    body += _map_field(meta, "annotations", "object_annotations")
    meta.finish()
    spec = top.sub("spec")
    replicas = spec.get("replicas", int)
    if replicas is not None and replicas != 1:
        body.append(b.attr("replicas", replicas))
    selector = spec.sub("selector")
    match = _map_field(selector, "matchLabels", "selector")
    selector.finish()
    template = spec.sub("template")
    template_meta = template.sub("metadata")
    labels = _map_field(template_meta, "labels", "labels")
    body += labels
    body += _map_field(template_meta, "annotations", "annotations")
    template_meta.finish()
    if match and (not labels or match[0].entries != labels[0].entries):
        body += match
    strategy = spec.sub("strategy")
    kind = strategy.get("type", str)
    strategy.finish()
    if kind:
        body.append(b.attr("strategy", kind))
    service_name = spec.get("serviceName", str)
    if service_name and data.get("kind") == "StatefulSet" and service_name != data["metadata"]["name"]:
        body.append(b.attr("service_name", service_name))
    spec.get("podManagementPolicy")
    pod = template.sub("spec")
    for k8s, key, kind in (("hostNetwork", "host_network", bool), ("hostPID", "host_pid", bool),
                           ("hostIPC", "host_ipc", bool), ("automountServiceAccountToken",
                                                           "automount_service_account_token", bool),
                           ("serviceAccountName", "service_account", str), ("dnsPolicy", "dns_policy", str),
                           ("priorityClassName", "priority_class_name", str)):
        value = pod.get(k8s, kind)
        if value is not None:
            body.append(b.attr(key, value))
    grace = pod.get("terminationGracePeriodSeconds", int)
    if grace is not None and grace >= 0:
        body.append(b.attr("termination_grace_period", ast.Quantity(f"{grace}s")))
    body += _map_field(pod, "nodeSelector", "node_selector")
    if "securityContext" in pod.data:
        body.append(b.block("security_context", _security(pod.sub("securityContext"), pod=True)))
    for k8s, word in (("initContainers", "init_container"), ("containers", "container")):
        items = pod.get(k8s, list) or []
        items_node = _at(pod.node, k8s)
        for index, item in enumerate(items):
            body.append(_container(_Fields(item, _at(items_node, index), left_out, f"{pod.where}{k8s}[{index}]."),
                                   word))
    pod.finish()
    template.finish()
    spec.finish()
    top.finish()
    return body


def _service_account(data: dict, node: _Node, left_out: list) -> list[ast.Entry]:
    top = _Fields(data, node, left_out, "")
    top.get("apiVersion")
    top.get("kind")
    meta = top.sub("metadata")
    meta.get("name")
    meta.get("namespace")
    meta.finish()
    body = []
    automount = top.get("automountServiceAccountToken", bool)
    if automount is not None:
        body.append(b.attr("automount_service_account_token", automount))
    top.finish()
    return body


_CONVERTERS = {"Deployment": _workload, "StatefulSet": _workload, "ServiceAccount": _service_account}


# ---- Kyverno ClusterPolicies to `policy` blocks -----------------------------------------------------------


def _expressible(value) -> bool:
    if isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_expressible(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _expressible(v) for k, v in value.items())
    return False


def _policy(data: dict, node: _Node, left_out: list) -> list[ast.Block] | None:
    """The `rule` blocks of a ClusterPolicy whose rules validate a pattern; None when no rule is left."""
    top = _Fields(data, node, left_out, "")
    top.get("apiVersion")
    top.get("kind")
    meta = top.sub("metadata")
    meta.get("name")
    meta.finish()
    spec = top.sub("spec")
    rules = spec.get("rules", list) or []
    rules_node = _at(spec.node, "rules")
    out: list[ast.Block] = []
    for index, rule in enumerate(rules):
        fields = _Fields(rule, _at(rules_node, index), left_out, f"spec.rules[{index}].")
        name = fields.get("name", str)
        match = fields.sub("match")
        resources = match.sub("resources")
        kinds = resources.get("kinds", list)
        resources.finish()
        match.finish()
        validate = fields.sub("validate")
        message = validate.get("message", str)
        pattern = validate.get("pattern", dict)
        validate.finish()
        fields.finish()
        if not name or pattern is None or not _expressible(pattern) or \
                (kinds is not None and not all(isinstance(k, str) for k in kinds)):
            left_out.append((f"`spec.rules[{index}]`", (_at(rules_node, index) or node).start))
            continue
        body = [] if kinds in (None, ["Pod"]) else [b.attr("kinds", kinds)]
        if message is not None:
            body.append(b.attr("message", message))
        body.append(b.attr("pattern", pattern))
        out.append(b.block("rule", body, [name]))
    spec.finish()
    top.finish()
    return out or None
