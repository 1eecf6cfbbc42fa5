"""What the agent can read must not give the answer away (E4007).

The prompt's leakage lint (leakage.py, E4003) reads the prompt; this check reads what the agent reads in
the cluster, from the compiled bundle:

- every object its RBAC (manifests/agent-access.yaml) lets it list or get, among the objects the run puts
  in the cluster: the topology, the objects the injection applies (patched and created), the alert rules,
  an existing policy; and its own access objects, which it can always read (`kubectl auth can-i --list`);
- of each such object, what names it: its name and namespace, its labels and annotations, and those of
  its pod template (the pods it starts carry them); and every string value it holds (`_value_findings`: an
  image tag, a command, a node selector, a storage class, a ConfigMap's file names);
- every rule group's name and every alert's name, labels and annotations in the PrometheusRules (Prometheus
  serves them at `/api/v1/rules` to anyone who can reach it);
- the prompt, and the names of the namespaces.

None of these may name
- the scenario: its whole name, anywhere;
- the fault's vocabulary (`vocabulary`): the words of the fault kind's name and of its mechanism's
  qualifier (`workload.replicas:zero` -> "zero"), and the scenario name's own words, less the words of the
  application (every word of its object names, labels, annotations, containers and images: a service named
  "cart" is the application's, not the fault's; a word of the fault kind's only where a library application
  had it before the scenario, or a kind or an image says it: `library_words`, so that a namespace or object the
  scenario names after the fault, `invalid-command`, is found) and less the nouns that say where a fault acts,
  not what it does ("workload", "container", "image" of `workload.container.image:unpullable`);
- in a name the scenario gives (its topology's objects and namespaces, its application's name): a word that says
  what is wrong or names the harness (`broken-app`, `itbench-run`), unless a library application's name holds it;
- in a value: a word that says what is wrong (JUDGMENT_WORDS: `nonexistent`, `missing`, `itbench`) or, in a value
  a fault writes, what the fault does (ACTION_WORDS: `fill`, `kill`) and a word of the fault in a name-like value;
  a fault tool's object (Chaos Mesh's) named after what its spec does (`cart-pod-kill`);
- a marker: a label or annotation key that an injected object or the agent's own access objects carry (or a
  patch adds) and no object of the application does, or a value of an application key that only they carry
  (`app.kubernetes.io/managed-by: itbench` on what a fault creates, or on the agent's Role); or a created object's name with a part of
  a shape no name of the application's objects has (`name_shape_findings`: a hash, `otel-demo-5d0c9a1e2b`, which
  `grep -E -- '-[0-9a-f]{10}$'` lists). The harness knows what it created from its own record (the bundle's
  inject/ and revert/ files), never from a label or a name.

A catalogue alert's text is the same in every scenario (alerts.py) and says nothing of the fault; it is
read for the scenario's name only. An alert rule the scenario declares (`alert_rule`) is read for all.
The words of the prompt's template text are likewise the same for every scenario: in the prompt, the
vocabulary is looked for in the values a scenario puts in it, less those the hint level gives.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterator

from . import ir
from .access import FAULT_TOOL_GROUPS as TOOL_GROUPS
from .memo import IdentityMemo
from .wording import stem, words  # noqa: F401 - part of this module's face (importer, faults)

CHECK_CODE = "E4007"

# the bundle files whose objects the run puts in the cluster, in the order they are read
CLUSTER_FILES = ("manifests/topology.yaml", "manifests/agent-access.yaml", "manifests/alert-rules.yaml",
                 "manifests/existing-policy.yaml", "inject/apply.yaml")
READ_VERBS = {"get", "list", "watch", "*"}
# words that name no fault: too short, or the glue of a name
STOP_WORDS = frozenset("""
a an and as at by for from in into is it of on or out the to with via per not no
""".split())
# the words of the language's own vocabulary that every scenario may use (the tool's name is in the agent's
# access objects and the application's alert rules of every scenario)
COMMON_WORDS = frozenset({"itbench", "agent", "alerting", "rules", "custom"})
SCENARIO_WORD = "a word of the scenario's name"
# words that name the harness: an injected object that carries one in a label or annotation it adds is marked
HARNESS_WORDS = frozenset({"itbench", "inject", "injected", "injection", "fault", "faults", "scenario", "benchmark",
                           "gap", "gaps", "violating", "violation", "noncompliant"})
@dataclass(frozen=True)
class Finding:
    """One thing the agent can read that gives the answer away."""

    where: str  # the bundle file (or "prompt.md")
    kind: str  # the object's kind ("" for the prompt)
    namespace: str | None
    name: str
    field: str  # metadata.name, metadata.labels["x"], spec.groups[0].name, ...
    text: str  # what the field holds
    why: str  # what it gives away
    verb: str = "read"  # what the agent can do to it: read it, or take it (a wider token, through its own rules)

    def subject(self) -> str:
        if not self.kind:
            return self.where
        place = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} `{place}{self.name}` ({self.where})"

    def message(self) -> str:
        return f"the agent can {self.verb} {self.why} in {self.subject()}, {self.field}: `{self.text}`"

    def hint(self) -> str:
        """What to do about it."""
        if self.why.startswith(FAULT_TOOL_OBJECTS):
            return ("grant no read on a fault tool's API group (expectations.application_access); a prompt that "
                    "means the agent to read them cites the command")
        if self.verb == "take" and self.text.startswith("create "):
            return ("keep the agent's admission policy (backends/manifests.pod_guard) in its access: it refuses the "
                    "agent's pods and token Secrets of a wider service account")
        if self.verb == "take":
            return ("withhold exec, attach, port-forward and token requests where such pods run "
                    "(expectations.wide_token_namespaces), or narrow that service account's roles")
        if self.why.startswith("a marker") and self.where == "manifests/agent-access.yaml":
            return ("the agent's access objects carry no label or annotation of the harness's "
                    "(backends/manifests.agent_access): drop it")
        if self.why.startswith("a marker"):
            return "an injected object carries only what the application's objects carry: drop it"
        if self.why.startswith("a name of a shape"):
            return ("name it as the application names its objects (a component's name and a word, `cart-main`), "
                    "or leave its name to the compiler")
        if self.kind == "PrometheusRule":
            return "name the alert, its group and its text after the symptom it measures, not the fault"
        if self.where == "prompt.md":
            return "reword what the scenario puts in the prompt"
        return "name the object after what it holds, not after the fault or the scenario"


@dataclass(frozen=True)
class Vocabulary:
    """What the fault's answer is spelled with: the scenario's name, and the stems of the fault's words
    (each with the fault kind or scenario it comes from)."""

    scenario: str
    stems: dict[str, str]  # stem -> "a word of the fault `KIND`" / "a word of the scenario's name"
    application: frozenset = frozenset()  # the stems of the application's own words
    library: frozenset = frozenset()  # those a library application had before the scenario (library_words)

    def find_name(self, text: str) -> tuple[str, str] | None:
        """The scenario's name when `text` holds its words in a row (`otel-checkout-x` in `otel-checkout-x.rules`)."""
        name = words(self.scenario)
        if not name or (len(name) == 1 and (len(name[0]) < 4 or name[0] in STOP_WORDS)):  # "a": no name to find
            return None
        found = words(text)
        for start in range(len(found) - len(name) + 1):
            if found[start:start + len(name)] == name:
                return self.scenario, "the scenario's name"
        return None

    def find(self, text: str, skip: frozenset = frozenset(), faults_only: bool = False) -> tuple[str, str] | None:
        """(the word, what it gives away) for the first word of `text` the vocabulary holds, less the stems
        `skip` holds (and, with `faults_only`, the scenario name's words); None if none."""
        hit = self.find_name(text)
        if hit is not None:
            return hit
        for word in words(text):
            s = stem(word)
            found = self.stems.get(s)
            if found is not None and s not in skip and not (faults_only and found == SCENARIO_WORD):
                return word, found
        return None


def cluster_objects(scenario: ir.Scenario) -> dict[str, list[dict]]:
    """The objects of each of CLUSTER_FILES, built from the scenario as compiler.emit builds them (the backends
    memoise the application's objects: parsing the bundle's YAML again would cost a hundred times more)."""
    from .backends import ciso as ciso_backend
    from .backends import alert_rules as alert_rules_backend
    from .backends import manifests as manifest_backend
    from .backends.cover import inject_manifests
    from .backends.decoys import application_manifests

    topology = application_manifests(scenario)
    inject_apply = inject_manifests(scenario)
    render = manifest_backend.render_object
    return {
        "manifests/topology.yaml": [render(o) for o in topology],
        "manifests/agent-access.yaml": [render(o) for o in manifest_backend.scenario_agent_access(scenario)],
        "manifests/alert-rules.yaml": alert_rules_backend.prometheus_rules(scenario),
        "manifests/existing-policy.yaml": list(ciso_backend.existing_policy(scenario)),
        "inject/apply.yaml": [render(o) for o in inject_apply],
    }


def from_files(files: dict[str, bytes]) -> dict[str, list[dict]]:
    """What each of CLUSTER_FILES holds, read from a bundle's bytes (a bundle on disk, a bundle changed by hand)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {name: [d for d in yaml.load_all(files[name], Loader=loader) if isinstance(d, dict)]
            for name in CLUSTER_FILES if files.get(name)}


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _template_meta(obj: dict) -> dict:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    if not template and isinstance(spec.get("jobTemplate"), dict):  # a CronJob's pods
        job = spec["jobTemplate"].get("spec") or {}
        template = job.get("template") if isinstance(job.get("template"), dict) else {}
    meta = template.get("metadata") if isinstance(template, dict) else None
    return meta if isinstance(meta, dict) else {}


def _marks(obj: dict) -> Iterator[tuple[str, str, str]]:
    """(field, key, value) of every label and annotation of an object and of its pod template."""
    for prefix, meta in (("metadata", _meta(obj)), ("spec.template.metadata", _template_meta(obj))):
        for part in ("labels", "annotations"):
            values = meta.get(part)
            if isinstance(values, dict):
                for key, value in values.items():
                    yield f"{prefix}.{part}", str(key), "" if value is None else str(value)


def _key(obj: dict) -> tuple[str, str | None, str]:
    meta = _meta(obj)
    return str(obj.get("kind", "")), meta.get("namespace"), str(meta.get("name", ""))


# ---- what the agent may read ------------------------------------------------------------------------------


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _plural(kind: str) -> str:
    from .kinds import plural

    return plural(kind)


class Access:
    """What the agent's RBAC lets it read: (namespace or None for cluster-wide) -> rules."""

    def __init__(self, access: list[dict]):
        accounts = {(_meta(o).get("namespace"), _meta(o).get("name")) for o in access if o.get("kind") == "ServiceAccount"}
        roles = {(o.get("kind"), _meta(o).get("namespace"), _meta(o).get("name")): o.get("rules") or []
                 for o in access if o.get("kind") in ("Role", "ClusterRole")}
        self.grants: list[tuple[str | None, dict]] = []  # (namespace; None: every namespace and the cluster), rule
        for binding in access:
            if binding.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
                continue
            subjects = binding.get("subjects") or []
            if not any(s.get("kind") == "ServiceAccount" and (s.get("namespace"), s.get("name")) in accounts
                       for s in subjects if isinstance(s, dict)):
                continue
            ref = binding.get("roleRef") or {}
            namespace = _meta(binding).get("namespace") if binding["kind"] == "RoleBinding" else None
            role_ns = namespace if ref.get("kind") == "Role" else None
            for rule in roles.get((ref.get("kind"), role_ns, ref.get("name")), []):
                if isinstance(rule, dict):
                    self.grants.append((namespace, rule))

    def can_read(self, obj: dict) -> bool:
        group, resource = _group(str(obj.get("apiVersion", ""))), _plural(str(obj.get("kind", "")))
        namespace = _meta(obj).get("namespace")
        for where, rule in self.grants:
            if where is not None and where != namespace:
                continue
            if not READ_VERBS & set(rule.get("verbs") or []):
                continue
            if not ({group, "*"} & set(rule.get("apiGroups") or [])):
                continue
            if not ({resource, "*"} & set(rule.get("resources") or [])):
                continue
            names = rule.get("resourceNames")
            if names and _meta(obj).get("name") not in names and "list" not in (rule.get("verbs") or []):
                continue
            return True
        return False


# ---- the vocabulary -----------------------------------------------------------------------------------


def application_words(topology: list[dict], scenario: ir.Scenario) -> set[str]:
    """The stems of every word the application itself uses: its objects' names, namespaces, labels and
    annotations (keys and values), their containers' names and images, and the application's name."""
    found: set[str] = set()

    def add(text) -> None:
        found.update(stem(w) for w in words(text))

    for obj in topology:
        found.update(_object_words(obj))
    topo = scenario.topology
    for text in (topo.application or "", getattr(topo, "display_name", None) or "",
                 *(n.name for n in topo.namespaces)):
        add(text)
    # and the objects the topology declares that the bundle does not deploy (a provided namespace's static pods)
    for value in vars(topo).values():
        for obj in value if isinstance(value, list) else ():
            add(getattr(obj, "name", "") or "")
            for labels in (getattr(obj, "labels", None), getattr(obj, "object_labels", None)):
                for key, item in (labels or {}).items() if isinstance(labels, dict) else ():
                    add(key), add(item)
            for container in getattr(obj, "containers", None) or ():
                add(getattr(container, "name", "")), add(getattr(container, "image", ""))
    return found


def _words_of_object(obj: dict) -> frozenset[str]:
    """The stems of an object's kind, namespace, name, labels, annotations and containers' names and images."""
    found: set[str] = set()

    def add(text) -> None:
        found.update(stem(w) for w in words(text))

    kind, namespace, name = _key(obj)
    add(kind), add(namespace or ""), add(name)
    for _, key, value in _marks(obj):
        add(key), add(value)
    for container in _containers(obj):
        add(container.get("name", "")), add(container.get("image", ""))
    return frozenset(found)


# a manifest is never changed once rendered (render.py shares a standard-library application's manifests between
# the scenarios that use it): its words are computed once per object
_object_words = IdentityMemo(_words_of_object)


def library_words(topology: list[dict], scenario: ir.Scenario) -> set[str]:
    """The stems of the words the application had before the scenario and whatever its fault: the names of a
    standard-library application (its id and name, its namespaces, its objects' names, labels and annotations
    and their containers' names, as the library writes them: `stdlib_words`), the rendered objects' kinds and
    their containers' images (the programs it runs). Only these exempt a word of the fault kind's: a name the
    scenario gives its own objects (an inline topology's, a local application's, a namespace it renames a
    library one to) is the scenario's, and a word of the fault in it (a namespace `invalid-command`) is found."""
    found: set[str] = set()
    if scenario.topology.application:
        found.update(stdlib_words(scenario.topology.application))
    for obj in topology:
        found.update(stem(w) for w in words(_key(obj)[0]))
        for container in _containers(obj):
            found.update(stem(w) for w in words(str(container.get("image", ""))))
    return found


@functools.lru_cache(maxsize=None)
def stdlib_words(name: str) -> frozenset[str]:
    """The stems of a standard-library application's own words (application_words): empty for a name the
    library does not hold."""
    from .applications import app_names, app_topology

    if name not in app_names():
        return frozenset()
    build = app_topology(name)[0]
    if build is None:
        return frozenset()
    found: set[str] = set()

    def add(text) -> None:
        found.update(stem(w) for w in words(str(text or "")))

    topo = build.to_ir()
    for text in (name, topo.display_name or "", *(n.name for n in topo.namespaces)):
        add(text)
    for value in vars(topo).values():
        for obj in value if isinstance(value, list) else ():
            add(getattr(obj, "name", "") or "")
            for labels in (getattr(obj, "labels", None), getattr(obj, "object_labels", None),
                           getattr(obj, "annotations", None)):
                for key, item in (labels or {}).items() if isinstance(labels, dict) else ():
                    add(key), add(item)
            for container in getattr(obj, "containers", None) or ():
                add(getattr(container, "name", "")), add(getattr(container, "image", ""))
    for key, item in (build.app_metadata or {}).items():
        if isinstance(item, str):
            add(key), add(item)
    return frozenset(found)


def _containers(obj: dict) -> list[dict]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    pod = template.get("spec") if isinstance(template.get("spec"), dict) else spec
    out = []
    for part in ("containers", "initContainers"):
        out.extend(c for c in (pod.get(part) or []) if isinstance(c, dict))
    return out


def vocabulary(scenario: ir.Scenario, application: set[str], prompt: str = "",
               library: set[str] | None = None) -> Vocabulary:
    """The fault's words for `scenario`, less the application's (see the module's docstring). A word of the
    fault kind's is exempt only as a word of `library` (library_words: the names a library application had
    before the scenario, kinds, images), never as one of the names the scenario gives its own objects, which
    it may have named after the fault; a word of the scenario's name (named after its application: `shop-cart-`)
    is exempt as any word of the application's (`application`). A word of the scenario's name that the prompt
    says (the CIS control a CISO task poses, `kyverno` of a Kyverno task) is the task's, not the answer's: the
    prompt's own lint (E4003) guards what it says."""
    stems: dict[str, str] = {}
    told = {stem(w) for w in words(prompt)}
    library = application if library is None else library

    def add(word: str, why: str, nouns: set[str], exempt: set[str]) -> None:
        s = stem(word)
        if len(word) < 3 or word in STOP_WORDS or word in COMMON_WORDS or word.isdigit():
            return
        if s in exempt or s in nouns:
            return
        stems.setdefault(s, why)

    for injection in scenario.injections():
        why = f"a word of the fault `{injection.fault}`"
        where, _, what = injection.mechanism.partition(":")
        what_words = {stem(w) for w in words(what)}
        nouns = {stem(w) for w in words(where)} - what_words  # where it acts: "workload", "container", ...
        nouns |= {stem(w) for w in words(injection.target.kind)}
        for word in words(injection.fault) + words(what):
            add(word, why, nouns, library)
    injected_nouns = set()
    for injection in scenario.injections():
        where = injection.mechanism.partition(":")[0]
        injected_nouns |= {stem(w) for w in words(where)} | {stem(w) for w in words(injection.target.kind)}
    for word in words(scenario.name):
        if stem(word) not in told:
            add(word, SCENARIO_WORD, injected_nouns, application)
    # a name of the application's words only ("shop-cart") says nothing where it appears: not looked for
    telling = any(stem(w) not in application and w not in STOP_WORDS for w in words(scenario.name))
    return Vocabulary(scenario.name if telling else "", stems, frozenset(application), frozenset(library))


def name_words(text: str, library: frozenset) -> list[str]:
    """The words of a name the scenario gives (an object's of its topology, a namespace, its application's) that
    say what is wrong or name the harness (JUDGMENT_WORDS, HARNESS_WORDS: `broken-app`, `itbench-run`), less
    the words of a library application's own names (`library`, library_words)."""
    return sorted({w for w, _ in telling_words(text, JUDGMENT_WORDS | HARNESS_WORDS) if stem(w) not in library})


# ---- the check ----------------------------------------------------------------------------------------------


def findings(scenario: ir.Scenario, files: dict[str, bytes], prompt_chunks=None,
             objects: dict[str, list[dict]] | None = None) -> list[Finding]:
    """Everything the agent can read in a compiled bundle that gives the answer away, in file order: `files`
    gives the prompt, `objects` what each of CLUSTER_FILES holds (cluster_objects(scenario) when None;
    `from_files(files)` reads them from the bundle's YAML)."""
    objects = objects if objects is not None else cluster_objects(scenario)
    loaded = {name: [o for o in objects.get(name) or [] if isinstance(o, dict)] for name in CLUSTER_FILES}
    topology = loaded["manifests/topology.yaml"]
    application = application_words(topology, scenario)
    prompt = files.get("prompt.md", b"").decode("utf-8", "replace")
    vocab = vocabulary(scenario, application, prompt, library_words(topology, scenario))
    access = Access(loaded["manifests/agent-access.yaml"])
    markers = _marker_rules(topology)
    shared = shared_label_keys(topology)
    app_shapes = name_shapes(_key(o)[2] for o in topology)
    originals = {_key(o): o for o in topology}
    # the namespaces that hold what the faults create (Chaos Mesh's): the agent must look there to find the root
    # cause, and their names are the tools' own, said by the created objects' kinds anyway
    homes = {_key(o)[1] for o in loaded["inject/apply.yaml"] if _key(o) not in originals and _key(o)[1]}
    home_words = frozenset(stem(w) for ns in homes for w in words(ns))
    out: list[Finding] = []
    seen: set[tuple] = set()

    def report(finding: Finding) -> None:
        key = (finding.where, finding.kind, finding.namespace, finding.name, finding.field, finding.text)
        if key not in seen:
            seen.add(key)
            out.append(finding)

    own_rules = {r.name for r in scenario.alert_rules}
    app_names = {_key(o)[2] for o in topology}
    for where in CLUSTER_FILES:
        for obj in loaded[where]:
            # its own access objects, and the alert rules (Prometheus serves them at /api/v1/rules), whatever its RBAC
            readable = (where in ("manifests/agent-access.yaml", "manifests/alert-rules.yaml") or access.can_read(obj)
                        or obj.get("kind") == "Namespace")
            if not readable:
                continue
            kind, namespace, name = _key(obj)

            def look(field: str, text: str, vocab_too: bool = True) -> None:
                hit = vocab.find(text) if vocab_too else vocab.find_name(text)
                if hit is not None:
                    report(Finding(where, kind, namespace, name, field, text, f"{hit[1]} (`{hit[0]}`)"))

            injected = where == "inject/apply.yaml"
            original = originals.get(_key(obj)) if injected else None
            created = injected and original is None
            # a created object's name may say its kind and its fields (a ResourceQuota `...-quota`, a claim `...-pvc`)
            skip = _field_words(obj) if created else frozenset()
            added = set(_added_marks(obj, original)) if injected else set()

            def look_name(field: str, text: str, effect: bool = False) -> None:
                # what a patch changes is the fault's evidence, which the agent is to find: read for the scenario's
                # name only
                hit = vocab.find(text, skip=skip) if not effect else vocab.find_name(text)
                if hit is not None:
                    report(Finding(where, kind, namespace, name, field, text, f"{hit[1]} (`{hit[0]}`)"))

            look_name("metadata.name", name)
            if where == "manifests/topology.yaml":  # a name the scenario gives: no word of judgment or the harness
                for field, text in (("metadata.name", name), ("metadata.namespace", namespace or "")):
                    said = name_words(text, vocab.library)
                    if said:
                        report(Finding(where, kind, namespace, name, field, text,
                                       f"a word that says what is wrong (`{said[0]}`)"))
            if created and _group(str(obj.get("apiVersion", ""))) in TOOL_GROUPS:
                # a fault tool's object named after what its spec does (`cart-pod-kill`, `...-network-delay`):
                # whoever lists the objects reads the fault in the name; only its type and the application may show
                told = name_tells(obj, vocab.application)
                if told:
                    report(Finding(where, kind, namespace, name, "metadata.name", name,
                                   f"what the object's spec does (`{told[0]}`)"))
            if created:  # a created object's name: no harness word (`-gap`, `-injected`)
                harness = sorted(w for w in set(words(name)) & HARNESS_WORDS if stem(w) not in skip)
                if harness:
                    report(Finding(where, kind, namespace, name, "metadata.name", name,
                                   f"a marker naming the harness (`{harness[0]}`)"))
                # nor a word of what it does to the application (`deny-all-cart`, `test-untrusted-registry`)
                telling = sorted(w for w, _ in telling_words(name, EFFECT_WORDS | JUDGMENT_WORDS | ACTION_WORDS)
                                 if stem(w) not in skip and stem(w) not in vocab.application)
                if telling:
                    report(Finding(where, kind, namespace, name, "metadata.name", name,
                                   f"a word that says what the object does to the application (`{telling[0]}`)"))
            if created:  # a name of a shape no object of the application has (`otel-demo-5d0c9a1e2b`)
                odd = name_shape_findings(name, app_shapes)
                if odd:
                    report(Finding(where, kind, namespace, name, "metadata.name", name, odd))
            if created and _group(str(obj.get("apiVersion", ""))) not in TOOL_GROUPS:
                # an object a fault creates without the labels the application's objects beside it carry:
                # `kubectl get -l '!app.kubernetes.io/component'` lists it alone (backends/faults.py gives them)
                for key in sorted(shared.get(namespace, set()) - set((_meta(obj).get("labels") or {}))):
                    report(Finding(where, kind, namespace, name, "metadata.labels", key,
                                   f"a fingerprint: no label `{key}`, which the application's objects there carry"))
            if namespace and namespace not in homes:
                look_name("metadata.namespace", namespace)
            for field, key, value in _marks(obj):
                look_name(f'{field}["{key}"]', f"{key}: {value}", effect=original is not None
                          and (field, key, value) in added)
            # the agent's own access objects are the harness's, and it reads them: any label or annotation they carry
            # that the application's objects do not is one the harness's other objects could be listed by
            own = set(_marks(obj)) if where == "manifests/agent-access.yaml" else set()
            for field, key, value in sorted(added | own):
                why = markers(key, value, name, created=original is None)
                if why:
                    report(Finding(where, kind, namespace, name, f'{field}["{key}"]', f"{key}: {value}", why))
            if kind != "PrometheusRule":
                for field, text, why in _value_findings(obj, original, where, vocab):
                    report(Finding(where, kind, namespace, name, field, text, why))
            if kind == "PrometheusRule":
                for gi, group in enumerate((obj.get("spec") or {}).get("groups") or []):
                    look(f"spec.groups[{gi}].name", str(group.get("name", "")))
                    for ri, rule in enumerate(group.get("rules") or []):
                        declared = rule.get("alert") in own_rules  # the scenario's own: read for all
                        base = f"spec.groups[{gi}].rules[{ri}]"
                        look(f"{base}.alert", str(rule.get("alert", "")), declared)
                        for part in ("labels", "annotations"):
                            for key, value in (rule.get(part) or {}).items():
                                look(f'{base}.{part}["{key}"]', f"{key}: {value}", declared)
                        if declared:  # its text names no object the injection creates (`see prometheus-main`)
                            texts = [(f'{base}.{part}["{key}"]', str(value)) for part in ("labels", "annotations")
                                     for key, value in (rule.get(part) or {}).items()]
                            texts.append((f"{base}.expr", str(rule.get("expr", ""))))
                            for field, text in texts:
                                named = _names_created(text, scenario, app_names)
                                if named:
                                    report(Finding(where, kind, namespace, name, field, text,
                                                   f"the name of an object the injection creates (`{named}`)"))
                        if declared and rule.get("expr") is not None:
                            for why in expr_problems(str(rule["expr"]), scenario, topology, vocab):
                                report(Finding(where, kind, namespace, name, f"{base}.expr", str(rule["expr"]), why))
    for namespace in scenario.topology.namespaces:
        hit = vocab.find(namespace.name, skip=home_words)
        said = name_words(namespace.name, vocab.library)
        if hit is not None or said:
            report(Finding("manifests/topology.yaml", "Namespace", None, namespace.name, "metadata.name",
                           namespace.name, f"{hit[1]} (`{hit[0]}`)" if hit is not None else
                           f"a word that says what is wrong (`{said[0]}`)"))
    # the application's name, which the prompt prints
    shown = scenario.topology.display_name
    if shown:
        hit = vocab.find(shown)
        said = name_words(shown, vocab.library)
        if hit is not None or said:
            report(Finding("prompt.md", "", None, "", "the application's name", shown,
                           f"{hit[1]} (`{hit[0]}`)" if hit is not None else
                           f"a word that says what is wrong (`{said[0]}`)"))
    out.extend(_prompt_findings(vocab, files, prompt_chunks))
    out.extend(_host_group_findings(scenario))
    out.extend(access_findings(loaded, prompt))
    return out


# ---- the agent's own rules: what they let it reach past what it is to see -----------------------------------

FAULT_TOOL_OBJECTS = "a fault tool's objects"


def access_findings(objects: dict[str, list[dict]], prompt: str = "") -> list[Finding]:
    """The rules of the agent's Roles and ClusterRoles (manifests/agent-access.yaml) that reach past what it is to
    see: a rule that reads a fault tool's objects (access.FAULT_TOOL_GROUPS: a PodChaos names the fault's kind and
    its target) unless a command the prompt cites reads them; a rule that lets it exec into, attach to or
    port-forward to a pod, or mint a token, of a service account that may do more than the agent (the agent would
    act with that account's token)."""
    from . import access as rbac

    mine = [o for o in objects.get("manifests/agent-access.yaml") or [] if isinstance(o, dict)]
    accounts = [(_meta(o).get("name"), _meta(o).get("namespace")) for o in mine if o.get("kind") == "ServiceAccount"]
    if not accounts:
        return []
    agent, home = accounts[0]
    granted: set[str] = set()  # the fault tools' groups a command of the prompt reads
    for command in rbac.prompt_commands(prompt):
        try:
            granted.update(r.group for r in rbac.command_rights(command, home) if r.verb in READ_VERBS)
        except rbac.UnknownCommand:
            continue
    cluster = [o for name in ("manifests/topology.yaml", "inject/apply.yaml") for o in objects.get(name) or []
               if isinstance(o, dict)]
    pods = rbac.pod_accounts(cluster)
    wider: dict[tuple, object] = {}

    def too_wide(account: str, namespace: str):
        if (account, namespace) not in wider:
            wider[(account, namespace)] = rbac.wider_than(cluster, account, namespace, mine, agent, home)
        return wider[(account, namespace)]

    out = []
    for role in mine:
        if role.get("kind") not in ("Role", "ClusterRole"):
            continue
        kind, namespace, name = _key(role)
        for index, rule in enumerate(role.get("rules") or []):
            if not isinstance(rule, dict):
                continue
            verbs, groups, resources = (set(rule.get(k) or []) for k in ("verbs", "apiGroups", "resources"))
            tools = sorted(g for g in rbac.FAULT_TOOL_GROUPS if g in groups or "*" in groups)
            if verbs & READ_VERBS and [g for g in tools if g not in granted]:
                out.append(Finding("manifests/agent-access.yaml", kind, namespace, name, f"rules[{index}]",
                                   f"{', '.join(sorted(groups))}: {', '.join(sorted(resources))}",
                                   f"{FAULT_TOOL_OBJECTS} (`{tools[0]}`: listing them names the fault's kind and its "
                                   "target, and no command of the prompt reads them)"))
            for sub in rbac.REACH_SUBRESOURCES:
                verbs_of = ("create",) if sub == rbac.TOKEN_SUBRESOURCE else ("create", "get")  # get: a WebSocket exec
                if not any(rbac._rule_matches(rule, rbac.Request(v, "", sub, namespace)) for v in verbs_of):
                    continue
                if sub == rbac.TOKEN_SUBRESOURCE:
                    holders = sorted({(ns, a) for _, ns, a in pods} | {
                        (_meta(o).get("namespace"), _meta(o).get("name")) for o in cluster
                        if o.get("kind") == "ServiceAccount"}, key=str)
                    holders = [(None, ns, a) for ns, a in holders]
                else:
                    holders = pods
                for obj, pod_namespace, account in holders:
                    if pod_namespace is None or (namespace is not None and pod_namespace != namespace):
                        continue
                    beyond = too_wide(account, pod_namespace)
                    if beyond is None:
                        continue
                    runs = f", which {_key(obj)[0]} `{_key(obj)[2]}` runs" if obj is not None else ""
                    scope = f"in `{beyond.namespace}`" if beyond.namespace else "cluster-wide"
                    out.append(Finding("manifests/agent-access.yaml", kind, namespace, name, f"rules[{index}]", sub,
                                       f"the token of service account `{pod_namespace}/{account}`{runs} (it may "
                                       f"`{beyond.verb}` {beyond.resource or '*'}"
                                       f"{'.' + beyond.group if beyond.group else ''} {scope}, which the agent may "
                                       f"not) through `{sub}`", verb="take"))
                    break  # one pod says it
            out += _unguarded_runs(role, index, rule, mine, cluster, agent, home, too_wide)
    return out


def _guarded(mine: list[dict], group: str, resource: str) -> bool:
    """Whether the agent's access objects hold a ValidatingAdmissionPolicy, bound, over `resource` (the one
    backends/manifests.pod_guard writes: it refuses the pods and token Secrets of wider service accounts)."""
    bound = {(o.get("spec") or {}).get("policyName") for o in mine if o.get("kind") == "ValidatingAdmissionPolicyBinding"}
    for policy in mine:
        if policy.get("kind") != "ValidatingAdmissionPolicy" or _meta(policy).get("name") not in bound:
            continue
        for rule in ((policy.get("spec") or {}).get("matchConstraints") or {}).get("resourceRules") or []:
            if group in (rule.get("apiGroups") or []) and resource in (rule.get("resources") or []):
                return True
    return False


def _unguarded_runs(role: dict, index: int, rule: dict, mine: list[dict], cluster: list[dict], agent: str,
                    home: str, too_wide) -> list[Finding]:
    """A rule that lets the agent create a pod, a workload or a Secret in a namespace where a service account may do
    more than the agent, with no admission policy to refuse it (`_guarded`): a pod names the account it runs as, a
    Secret of type service-account-token gets the account's token, and neither needs more than `create`."""
    from . import access as rbac
    from .backends.manifests import POD_RUNNERS

    kind, namespace, name = _key(role)
    for group, resources in POD_RUNNERS.items():
        for resource in resources + (("secrets",) if group == "" else ()):
            if not rbac._rule_matches(rule, rbac.Request("create", group, resource, namespace)) or \
                    _guarded(mine, group, resource):
                continue
            accounts = sorted({(_meta(o).get("namespace"), _meta(o).get("name")) for o in cluster
                               if o.get("kind") == "ServiceAccount"}, key=str)
            for account_namespace, account in accounts:
                if account_namespace is None or (namespace is not None and account_namespace != namespace):
                    continue
                beyond = too_wide(account, account_namespace)
                if beyond is None:
                    continue
                scope = f"in `{beyond.namespace}`" if beyond.namespace else "cluster-wide"
                return [Finding("manifests/agent-access.yaml", kind, namespace, name, f"rules[{index}]",
                                f"create {resource}", f"the token of service account `{account_namespace}/{account}` "
                                f"(it may `{beyond.verb}` {beyond.resource or '*'}"
                                f"{'.' + beyond.group if beyond.group else ''} {scope}, which the agent may not) "
                                f"through `create {resource}`, which no admission policy of the agent's refuses",
                                verb="take")]
    return []


def _host_group_findings(scenario: ir.Scenario) -> list[Finding]:
    """The inventory groups a host control runs on: the agent reads their names (the prompt's host pattern, the
    inventory). A name saying which hosts comply or break the control (`..._baseline`) gives the answer away."""
    from . import ciso

    compliance = scenario.compliance
    if compliance is None:
        return []
    out = []
    for ref in compliance.gaps + compliance.compliant:
        told = sorted(w for w in words(ref.name) if w in ciso.HOST_GROUP_TELLING) if ref.kind == ciso.HOST_KIND else []
        if told:
            out.append(Finding("prompt.md", ref.kind, None, ref.name, "hosts", ref.name,
                               f"a host group named after what its hosts are (`{told[0]}`)"))
    return out


# ---- fingerprints: what sets a created object apart from the application's ------------------------------

# the parts of a name no person writes: a hash (`5d0c9a1e2b`, `x7k2p`) or a long number (`1701234567`); a name
# that carries one where no object of the application does is one the application did not make
_HEX = re.compile(r"[0-9a-f]{7,}")
_LONG_NUMBER = re.compile(r"[0-9]{6,}")
_GENERATED = re.compile(r"[a-z0-9]{5,}")
SHAPE_WORDS = {"hash": "a hash", "number": "a long number"}


def token_shape(token: str) -> str:
    """What a part of a name (between `-` and `.`) is: "number" (6 digits or more), "hash" (letters and
    digits mixed as a generator mixes them: 7 hex digits or more with a digit and a letter, or 5 characters or
    more with 2 digits or more that are not only the version at its end, `x7k2p` but not `mysql80`), else "word"."""
    if _LONG_NUMBER.fullmatch(token):
        return "number"
    digits = sum(c.isdigit() for c in token)
    if not digits or digits == len(token):
        return "word"
    if _HEX.fullmatch(token):
        return "hash"
    if _GENERATED.fullmatch(token) and digits >= 2 and not token.rstrip("0123456789").isalpha():
        return "hash"
    return "word"


def name_shapes(names) -> frozenset[str]:
    """The shapes of the parts of `names` (token_shape)."""
    return frozenset(token_shape(t) for name in names for t in re.split(r"[-.]", str(name)) if t)


def name_shape_findings(name: str, application: frozenset[str]) -> str:
    """Why `name`, of an object a fault creates, stands out among the application's names (`application`, their
    shapes): a part of a shape none of them has (`-5d0c9a1e2b` where no object of the application ends in a
    hash: `kubectl get ... | grep -E -- '-[0-9a-f]{10}$'` lists the injected objects); '' when none."""
    for token in re.split(r"[-.]", name):
        shape = token_shape(token) if token else "word"
        if shape != "word" and shape not in application:
            return (f"a name of a shape no object of the application has ({SHAPE_WORDS[shape]}, `{token}`)")
    return ""



def shared_label_keys(topology: list[dict]) -> dict[str | None, set[str]]:
    """Namespace -> the label keys more than half of the application's objects there carry (whatever their
    values): what an object that belongs there carries. Cluster-scoped objects and Namespaces are left out."""
    counts: dict[str | None, dict[str, int]] = {}
    totals: dict[str | None, int] = {}
    for obj in topology:
        namespace = _meta(obj).get("namespace")
        if not namespace or obj.get("kind") == "Namespace":
            continue
        totals[namespace] = totals.get(namespace, 0) + 1
        for key in _meta(obj).get("labels") or {}:
            counts.setdefault(namespace, {})[str(key)] = counts.setdefault(namespace, {}).get(str(key), 0) + 1
    return {ns: {k for k, n in keys.items() if n * 2 > totals[ns]} for ns, keys in counts.items()}


def registry(image: str) -> str:
    """The registry an image reference pulls from (`docker.io` when it names none: `busybox`, `curlimages/curl`)."""
    first, slash, _ = image.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def _pod_images(obj: dict) -> list[tuple[str, str]]:
    """(field, image) of every container of an object's pod spec: containers, init and ephemeral containers, of a
    pod, a workload's template or a CronJob's job template."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    job = spec.get("jobTemplate") if isinstance(spec.get("jobTemplate"), dict) else None
    if job is not None:
        spec = job.get("spec") if isinstance(job.get("spec"), dict) else {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    pod = template.get("spec") if isinstance(template.get("spec"), dict) else spec
    return [(f"{part}[{index}].image", str(c.get("image", ""))) for part in ("containers", "initContainers",
                                                                          "ephemeralContainers")
            for index, c in enumerate(pod.get(part) or []) if isinstance(c, dict) and c.get("image")]


def foreign_images(objects: dict[str, list[dict]]) -> list[Finding]:
    """Every image the injection writes, into an object it creates or into one of the application's (a replaced
    container image, an added init container) that the application's object did not run: one from a registry no
    object of the application pulls from (`registry.access.redhat.com/ubi...` beside an application pulled from
    `ghcr.io`), or whose reference spells a word of the harness (`quay.io/it-bench/...`): whoever lists the pods'
    images finds the fault's pods (W2016). A fault tool's objects are not read (their pods are the tool's)."""
    topology = [o for o in objects.get("manifests/topology.yaml") or [] if isinstance(o, dict)]
    own = {registry(image) for o in topology for _, image in _pod_images(o)}
    if not own:
        return []
    originals = {_key(o): {image for _, image in _pod_images(o)} for o in topology}
    out = []
    for obj in objects.get("inject/apply.yaml") or []:
        if not isinstance(obj, dict) or _group(str(obj.get("apiVersion", ""))) in TOOL_GROUPS:
            continue
        kind, namespace, name = _key(obj)
        ran = originals.get(_key(obj), set())
        for field, image in _pod_images(obj):
            if image in ran:
                continue
            if registry(image) not in own:
                out.append(Finding("inject/apply.yaml", kind, namespace, name, field, image,
                                   f"an image from a registry no object of the application uses (`{registry(image)}`; "
                                   f"the application's: {', '.join(f'`{r}`' for r in sorted(own))})"))
                continue
            parts = words(image)
            joined = {a + b for a, b in zip(parts, parts[1:])}
            harness = sorted((set(parts) | joined) & (HARNESS_WORDS | {"bench"}))
            if harness:
                out.append(Finding("inject/apply.yaml", kind, namespace, name, field, image,
                                   f"an image whose reference names the harness (`{harness[0]}`)"))
    return out


# kinds a namespace or the cluster holds objects of whatever the application deploys (every namespace's
# `kube-root-ca.crt` ConfigMap and `default` ServiceAccount, the nodes, a cluster's default StorageClass and
# PriorityClasses), and the objects the application's own objects make (its workloads' pods and ReplicaSets)
PROVIDED_KINDS = frozenset({"ConfigMap", "ServiceAccount", "Namespace", "Node", "Event", "StorageClass",
                            "PriorityClass"})
MADE_BY = {("", "Pod"): {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"},
           ("apps", "ReplicaSet"): {"Deployment"}, ("batch", "Job"): {"CronJob"},
           ("apps", "ControllerRevision"): {"StatefulSet", "DaemonSet"}, ("", "Endpoints"): {"Service"},
           ("discovery.k8s.io", "EndpointSlice"): {"Service"}}


def lone_kinds(objects: dict[str, list[dict]]) -> list[Finding]:
    """The objects a fault creates that are the only ones of their kind the agent can list where they are (its
    namespace; the cluster, for a cluster-wide kind): no object of the application, nor the agent's own access
    objects, nor what the cluster or the application's workloads make (PROVIDED_KINDS, MADE_BY), is of that kind
    there, so `kubectl get networkpolicies -n shop` lists the fault's object alone, whatever it is named (W2018).
    A fault tool's objects are left to E4010 (the agent may not list them)."""
    loaded = {name: [o for o in objects.get(name) or [] if isinstance(o, dict)] for name in CLUSTER_FILES}
    access = Access(loaded["manifests/agent-access.yaml"])
    keys = {_key(o) for o in loaded["manifests/topology.yaml"]}
    present: set[tuple[str, str, str | None]] = set()  # (group, kind, namespace) the agent lists beside the fault's
    for name in CLUSTER_FILES:
        if name == "inject/apply.yaml":
            continue
        for obj in loaded[name]:
            kind, namespace, _ = _key(obj)
            group = _group(str(obj.get("apiVersion", "")))
            present.add((group, kind, namespace))
            present.update((made_group, made, namespace) for (made_group, made), makers in MADE_BY.items()
                           if kind in makers)
    from .backends.decoys import harmless

    # the decoys the injection creates beside the fault's objects (backends/cover.py) are the application's
    cover = [o for o in loaded["inject/apply.yaml"] if _key(o) not in keys and harmless(o)]
    present.update((_group(str(o.get("apiVersion", ""))), o.get("kind"), _key(o)[1]) for o in cover)
    out = []
    for obj in loaded["inject/apply.yaml"]:
        kind, namespace, name = _key(obj)
        group = _group(str(obj.get("apiVersion", "")))
        if (_key(obj) in keys or group in TOOL_GROUPS or kind in PROVIDED_KINDS or (group, kind, namespace) in present
                or not access.can_read(obj)):
            continue
        present.add((group, kind, namespace))  # a second one of the fault's there: the same finding
        where = f"namespace {namespace}" if namespace else "the cluster"
        out.append(Finding("inject/apply.yaml", kind, namespace, name, "kind", kind,
                           f"the only {kind} in {where} the agent can list: no object of the application is one, so "
                           f"`kubectl get {_plural(kind)}{f' -n {namespace}' if namespace else ''}` lists the fault's "
                           "alone"))
    return out


# ---- the values -------------------------------------------------------------------------------------------

# maps whose keys are chosen names (a ConfigMap's file names, a node selector's labels), not a schema's fields
FREE_KEYS = frozenset({"data", "binaryData", "stringData", "nodeSelector", "matchLabels", "selector"})
# words that say something is wrong, or that something was put there: in a value a fault writes (an image tag,
# a node name, a selector value, a script's name, a storage class) they point at the object and say the fault
JUDGMENT_WORDS = frozenset("""
nonexistent nonexisting inexistent missing absent broken invalid wrong bad bogus fake faulty fault faults corrupt
corrupted misconfigured misconfiguration buggy nonexistant truncated itbench chaos inject injected
injection sabotage sabotaged poison poisoned bug bugs culprit rootcause outage underprovisioned notfound
notexist doesnotexist nosuch unresolvable
""".split())
# the same said in several words (`does-not-exist`, `root-cause`, `no-such-tag`): read as one word
JUDGMENT_PHRASES = (("does", "not", "exist"), ("not", "exist"), ("not", "found"), ("no", "such"), ("root", "cause"))
# words that say what a fault does (fill a container's memory, kill a pod, flood a service): in a name a fault
# writes (a script `fill-memory.sh`, a container `cpu-hog`) they say the fault as well
ACTION_WORDS = frozenset("""
fill filler exhaust exhausting hog hogger flood flooder leak leaker burn burner kill killer crash crasher break
breaker starve starver throttle throttler blackhole sinkhole stall staller hang hanger oom
""".split())
# words that say what an object does to the application it sits beside (deny its traffic, isolate its pods, mark
# a registry untrusted): in the name of an object a fault creates, they point at it (`deny-all-cart`)
EFFECT_WORDS = frozenset("""
deny denied denying denies block blocked blocking blocker blocks isolate isolated isolating isolation untrusted
distrust distrusted restrict restricted restricting strangle strangled cripple crippled sabotage throttled choke
choked cutoff
""".split())


@functools.lru_cache(maxsize=65536)
def _listed(word: str, lists: frozenset) -> str:
    """The word of `lists` that `word` says, "" if none: the word itself or an inflection of it (`starved` of
    `starve`, `exhausted` of `exhaust`: the same stem), a cut form of a longer one (`misconfig` of
    `misconfigured`), or a compound that begins or ends with a word of JUDGMENT_WORDS (`badtag`, `missingtag`,
    `tagmissing`)."""
    if word in lists:
        return word
    s = stem(word)
    for listed in sorted(lists):
        if stem(listed) == s:
            return listed
        if len(word) >= 6 and listed.startswith(word):
            return listed
    for listed in sorted(lists & JUDGMENT_WORDS, key=len, reverse=True):
        if len(listed) >= 3 and len(word) - len(listed) >= 3 and (word.startswith(listed) or word.endswith(listed)):
            return listed
    return ""


def telling_words(text: str, lists: frozenset) -> list[tuple[str, str]]:
    """(the text's word, the listed word it says) for each word of `text` that says a word of `lists`
    (`_listed`), and each phrase of JUDGMENT_PHRASES in a row (`does-not-exist`) when `lists` holds
    JUDGMENT_WORDS."""
    found = words(text)
    out = []
    for word in found:
        hit = _listed(word, lists)
        if hit:
            out.append((word, hit))
    if JUDGMENT_WORDS <= lists:
        for phrase in JUDGMENT_PHRASES:
            for start in range(len(found) - len(phrase) + 1):
                if tuple(found[start:start + len(phrase)]) == phrase:
                    out.append(("-".join(phrase), "".join(phrase)))
    return out


# TOOL_GROUPS, the API groups of fault tools (access.FAULT_TOOL_GROUPS): what their objects hold (a PodChaos's action,
# selector, duration) is the fault itself; their names and labels are read as any object's
# fields that hold a kind or an API version: the object's type, which `kubectl get` shows anyway
TYPE_FIELDS = frozenset({"apiVersion", "kind", "type"})
# a value that names or references something (an image, a node, a storage class, a file), not a file's content:
# what an application deploys is read for JUDGMENT_WORDS in those only (its configuration files are its own)
_NAME_LIKE = re.compile(r"[^\s]{1,253}")
# an enumerated value of a schema (`Ingress`, `OnFailure`, Istio's `DENY`, an HTTP method): Kubernetes and the
# tools write theirs capitalised, where a chosen name is lower-case; it is the object's content, not a name
_ENUM = re.compile(r"[A-Z][A-Za-z]*")


def _values(obj, original=None, path: str = "", free: bool = False) -> Iterator[tuple[str, str]]:
    """(field path, text) of every string `obj` holds (and every key of a map whose keys are chosen names,
    FREE_KEYS) outside the metadata the check reads apart (name, namespace, labels, annotations); with
    `original` (the object a patch changes), only those that differ from the original's at the same place."""
    if isinstance(obj, dict):
        before = original if isinstance(original, dict) else {}
        for key, item in obj.items():
            key = str(key)
            if not path and key == "metadata":
                yield from _values({k: v for k, v in item.items() if k not in (
                    "name", "namespace", "labels", "annotations")} if isinstance(item, dict) else {},
                    (before.get(key) if original is not None else None), "metadata")
                continue
            here = f'{path}["{key}"]' if free else (f"{path}.{key}" if path else key)
            if free and (original is None or key not in before):
                yield here, key
            yield from _values(item, before.get(key) if original is not None else None, here,
                               key in FREE_KEYS and not free)
    elif isinstance(obj, list):
        before = original if isinstance(original, list) else []
        for index, item in enumerate(obj):
            yield from _values(item, before[index] if index < len(before) else None, f"{path}[{index}]")
    elif isinstance(obj, str) and obj and (original is None or obj != original):
        yield path, obj


def _value_findings(obj: dict, original: dict | None, where: str, vocab: Vocabulary) -> Iterator[tuple[str, str, str]]:
    """(field, text, why) of each value of `obj` that gives the fault away.

    Every readable object's values are read for the scenario's name, and its name-like values (no spaces: an
    image, a node, a reference; an application's configuration files are its own) for JUDGMENT_WORDS. What the
    injection writes (a created object's values, the words a patch adds to a value) is read for JUDGMENT_WORDS
    and ACTION_WORDS in any value, and in a name-like value that is not an enumerated one (`DENY`) for the words
    of the fault (`vocabulary`; not the scenario name's other words: they are the author's, and a value states
    the fault's content, such as a Java method it slows), less the words of the object's own fields and kind (a
    NetworkPolicy's `ingress` says no more than its kind). A fault tool's object (TOOL_GROUPS) is not read:
    its spec is the fault itself."""
    if where == "manifests/agent-access.yaml":
        return  # the same in every scenario of an application (E4025): read for its names only
    injected = where == "inject/apply.yaml"
    group = _group(str(obj.get("apiVersion", "")))
    if injected and group in TOOL_GROUPS:
        return
    schema = _field_words(obj) if injected else frozenset()
    base = original if injected else None
    for field, text in _values(obj, base):
        if field.rpartition(".")[2] in TYPE_FIELDS:
            continue
        hit = vocab.find_name(text)
        # what the patch adds to a value (a flag's new variant in a configuration file), not what it kept
        kept = frozenset(stem(w) for w in words(_at(base, field))) if base is not None else frozenset()
        if hit is None and (injected or _NAME_LIKE.fullmatch(text)):
            telling = JUDGMENT_WORDS | ACTION_WORDS if injected else JUDGMENT_WORDS
            judged = [(w, listed) for w, listed in telling_words(text, telling)
                      if not {stem(part) for part in words(w)} <= kept | schema]
            if judged:
                hit = (judged[0][0], "a word that says what the fault does" if judged[0][1] in ACTION_WORDS
                       else "a word that says what is wrong")
        if hit is None and injected and _NAME_LIKE.fullmatch(text) and not _ENUM.fullmatch(text):
            hit = vocab.find(text, skip=schema | kept, faults_only=True)
        if hit is not None:
            yield field, text, f"{hit[1]} (`{hit[0]}`)"


_PATH_STEP = re.compile(r'\.?([^.\[\]]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]')


def _at(obj, field: str) -> str:
    """The text at `field` (a path of _values) in `obj`, "" when there is none."""
    for key, quoted, index in _PATH_STEP.findall(field):
        if index:
            obj = obj[int(index)] if isinstance(obj, list) and int(index) < len(obj) else None
        else:
            obj = obj.get(key or quoted) if isinstance(obj, dict) else None
    return obj if isinstance(obj, str) else ""


def name_tells(obj: dict, application: frozenset = frozenset()) -> list[str]:
    """The words of a fault tool's object's name (`cart-pod-kill`, `...-network-delay`) that say what its spec
    does: whoever lists the objects reads the fault in them. Its type and the application's own words
    (`application`, stems) may show."""
    name = str((obj.get("metadata") or {}).get("name", ""))
    return sorted(w for w in set(words(name)) if stem(w) in _own_words(obj) - _type_words(obj) - application
                  and w not in STOP_WORDS and len(w) >= 3 and not w.isdigit())


def _type_words(obj: dict) -> frozenset[str]:
    """The stems of an object's type: its API version, its kind, and a Schedule's `spec.type` (the kind it makes)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    texts = [str(obj.get("apiVersion", "")), str(obj.get("kind", "")), str(spec.get("type", ""))]
    return frozenset(stem(w) for t in texts for w in words(t))


def _stems_of(value, values: bool) -> Iterator[str]:
    """The stems of every key under `value` and, with `values`, of every scalar value too."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from (stem(w) for w in words(key))
            yield from _stems_of(item, values)
    elif isinstance(value, list):
        for item in value:
            yield from _stems_of(item, values)
    elif values and value is not None:
        yield from (stem(w) for w in words(str(value)))


def _field_words(obj: dict) -> frozenset[str]:
    """The stems of an object's kind, its API group and every field name it uses: its schema's words."""
    from .analysis.leakage import KIND_ALIASES

    found = set(_stems_of(obj, values=False))
    found.update(stem(w) for w in words(str(obj.get("kind", ""))) + words(str(obj.get("apiVersion", ""))))
    found.update(stem(w) for aliases in KIND_ALIASES.values() for a in aliases for w in words(a))
    return frozenset(found)


# a PromQL label matcher: label, operator, quoted value
_MATCHER = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
# a kube-state-metrics series names the kind it describes: kube_<kind>_...
# (a kind's main series has no suffix: `kube_resourcequota`, `kube_limitrange`)
_KSM_METRIC = re.compile(r"\bkube_([a-z]+)(?![a-z])")
# labels that place a series, not single an object out
_PLACE_LABELS = frozenset({"namespace", "job", "cluster", "ready", "condition", "status", "reason", "phase",
                           "container", "resource", "unit"})


def expr_problems(expr: str, scenario: ir.Scenario, topology: list[dict], vocab: Vocabulary) -> list[str]:
    """What an alert rule's expression the scenario declares gives away: a fault word in a label matcher, a
    matcher that selects a root-cause object and no sibling of its kind (a rule that watches only the
    answer), a kube-state-metrics series of a kind only the faults create (a rule that tests the fault's
    own object). A symptom rule watches every object of its kind in the application."""
    out = []
    names: dict[str, set[str]] = {}  # kind (lowered) -> the names of the application's objects of it
    for obj in topology:
        names.setdefault(str(obj.get("kind", "")).lower(), set()).add(str(_meta(obj).get("name", "")))
    causes = [(ref.kind.lower(), ref.name) for ref in scenario.root_causes]
    created_refs = [ref for i in scenario.injections() for ref in i.created]
    made = {(ref.kind.lower(), ref.name) for ref in created_refs}
    for ref in created_refs:  # an object a fault creates beside others of its kind is one of them
        if (ref.kind.lower(), ref.name) not in causes:
            names.setdefault(ref.kind.lower(), set()).add(ref.name)
    for label, op, value in _MATCHER.findall(expr):
        if label in _PLACE_LABELS or op in ("!=", "!~"):
            continue
        hit = vocab.find(value)
        if hit is not None:
            out.append(f"{hit[1]} (`{hit[0]}`) in a label matcher")
            continue
        for kind, cause in causes:
            others = names.get(kind, set()) - {cause}
            if op == "=":
                selects = value == cause
                all_of_kind = False
            else:
                try:
                    pattern = re.compile(value)
                except re.error:
                    continue
                selects = pattern.fullmatch(cause) is not None
                all_of_kind = all(pattern.fullmatch(o) for o in others)
            # a created root cause with no other object of its kind: the rule watches nothing but the answer
            if selects and ((others and not all_of_kind) or (not others and (kind, cause) in made)):
                out.append(f"a rule watching the root cause `{cause}` alone (`{label}{op}\"{value}\"`; no other "
                           f"{kind} of the application is watched)")
    created = {kind for kind, _ in made}
    for metric_kind in sorted(set(_KSM_METRIC.findall(expr))):
        if metric_kind in created and not (names.get(metric_kind, set()) - {n for k, n in made if k == metric_kind}):
            out.append(f"a rule on `kube_{metric_kind}_*`, a kind only the fault creates (it tests the fault's "
                       "own object, not a symptom)")
    return list(dict.fromkeys(out))


def _names_created(text: str, scenario: ir.Scenario, taken: set) -> str:
    """The name of an object a fault of `scenario` creates that `text` holds (its words in a row), "" if none:
    the rules are in the cluster before the fault, and no symptom is spelled with its object's name. A name an
    object of the application (`taken`) has too is the application's."""
    found = words(text)
    for i in scenario.injections():
        for ref in i.created:
            name = words(ref.name)
            if ref.name in taken:
                continue
            if name and any(found[k:k + len(name)] == name for k in range(len(found) - len(name) + 1)):
                return ref.name
    return ""


def _prompt_findings(vocab: Vocabulary, files: dict[str, bytes], chunks) -> list[Finding]:
    prompt = files.get("prompt.md", b"").decode("utf-8", "replace")
    out = []
    if vocab.find_name(prompt) is not None:
        out.append(Finding("prompt.md", "", None, "", "text", vocab.scenario, "the scenario's name"))
    for chunk in chunks or []:
        if chunk.literal or chunk.allowed:
            continue
        hit = vocab.find(chunk.text, faults_only=True)
        if hit is not None and hit[1] != "the scenario's name":
            line = chunk.text.strip().splitlines()[0] if chunk.text.strip() else chunk.text
            out.append(Finding("prompt.md", "", None, "", f"{chunk.template}:{chunk.line}", line[:80],
                               f"{hit[1]} (`{hit[0]}`)"))
    return out


def _own_words(obj: dict) -> frozenset:
    """The stems of what an object says outside its metadata (its kind, API group, spec, data) and of its
    kind's usual abbreviations (`pvc`): what its name cannot leak, since reading the object shows it."""
    from .analysis.leakage import KIND_ALIASES

    found = set(_stems_of({k: v for k, v in obj.items() if k != "metadata"}, values=True))
    found.update(stem(w) for a in KIND_ALIASES.get(str(obj.get("kind", "")), ()) for w in words(a))
    return frozenset(found)


def _added_marks(obj: dict, original: dict | None) -> Iterator[tuple[str, str, str]]:
    """The labels and annotations the injection gives `obj` that its original (None: it creates it) lacks."""
    before = set(_marks(original)) if original is not None else set()
    for mark in _marks(obj):
        if mark not in before:
            yield mark


def _marker_rules(topology: list[dict]):
    """A test of one (key, value) an injected object carries: why it marks the object, or ''."""
    values: dict[str, set[str]] = {}
    names = set()
    for obj in topology:
        names.add(_key(obj)[2])
        for _, key, value in _marks(obj):
            values.setdefault(key, set()).add(value)

    def why(key: str, value: str, own_name: str, created: bool) -> str:
        named = set(words(key)) | set(words(value))
        if named & HARNESS_WORDS:
            return f"a marker naming the harness (`{sorted(named & HARNESS_WORDS)[0]}`)"
        if not created:  # what a patch changes is the fault itself, which the agent is to find
            return ""
        if value and set(words(value)) <= set(words(own_name)):  # `app: nginx` on `nginx-deployment`
            return ""
        if key not in values:
            return f"a marker only injected objects carry (no object of the application has `{key}`)"
        if value not in values[key] and value not in names:
            return f"a marker only injected objects carry (no object of the application has `{key}: {value}`)"
        return ""

    return why


__all__ = ["Finding", "Vocabulary", "findings", "foreign_images", "shared_label_keys", "registry", "vocabulary", "application_words", "words", "stem", "Access"]
