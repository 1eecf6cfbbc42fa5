"""The leakage lint: a prompt must not give the answer away (E4003).

A prompt leaks when it names
- the fault mechanism: the fault kind (`nonexistent_image`, "nonexistent image", "scaled to
  zero" for `scaled_to_zero`), ITBench's id for it, the words of a Chaos Mesh fault ("chaos",
  "Chaos Mesh", "PodChaos") and multi-word chaos actions ("pod kill");
- a root-cause object, or an object a fault acts on, in a form that identifies it: with its
  kind (`Deployment/checkout`, "deployment checkout", "the checkout deployment") or, when the
  name is distinctive, the bare name (`valkey-cart`, `flagd`; not `cart` or `details`, which
  are ordinary words a prompt may use, and not a name that equals a namespace or the
  application, which every prompt gives). A bare name is only read in values (scenario text
  a template prints), never in template text: that is the same for every scenario, so a word
  of it that equals an object's name ("cluster") says nothing about the object;
- a CISO gap object, unless the scenario hands it to the agent (`control { given = true }`).

The lint reads the prompt as the chunks the template emitted (see `backends/prompt.py`). A value
the hint level legitimately gives (a namespace, a component at level `topology`, a symptom at
level `localized`) is emitted as a chunk of its own and is not read: listing every component
says nothing about which one failed. Everything else, template text included, is read.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from typing import Callable

from . import ir

# Kind words a prompt might use for an object of each kind, besides the kind itself and its words
KIND_ALIASES = {
    "Deployment": ("deploy",), "StatefulSet": ("sts",), "Service": ("svc",), "ConfigMap": ("cm",),
    "Secret": (), "Pod": ("pods",), "Namespace": ("ns",), "HorizontalPodAutoscaler": ("hpa", "autoscaler"),
    "NetworkPolicy": ("netpol",), "ResourceQuota": ("quota",), "ServiceAccount": ("sa",),
    "PersistentVolumeClaim": ("pvc",), "Schedule": (), "Gateway": ("gw",),
}
# Words too generic to identify a fault in ITBench's fault ids ("nonexistent-kubernetes-workload-container-image")
GENERIC_ID_WORDS = {"kubernetes", "workload", "workloads", "container", "containers", "opentelemetry", "demo"}
# Component names that are also ordinary words: a prompt may say "cart", "details" or "default" without
# pointing at the object of that name. Only their kind-qualified forms are guarded.
ORDINARY_WORDS = frozenset("""
a ad ads account accounting admin agent alert alerts api app apps application auth backend balance bank basket
billing cache calls cart catalog catalogue check checkout client config console control core currency data
database db default demo details email engine events feed frontend gateway home image images inventory job
jobs log logs login mail main manager metrics monitor monitoring notes order orders payment payments policy
product products profile proxy queue quote rating ratings recommendation report reports review reviews router
search server service services shipping shop store storage stream test users user ui web website worker
""".split())
_WORD_CHARS = r"A-Za-z0-9_\-"
_NAME_START = rf"(?<![{_WORD_CHARS}])"
_NAME_END = rf"(?![{_WORD_CHARS}])"


@dataclass(frozen=True)
class Chunk:
    """One piece of a rendered prompt: its text, the template and line it came from, whether it is
    template text (literal) or a value, and whether it is a value the hint level allows on its own."""

    text: str
    template: str
    line: int
    literal: bool
    allowed: bool = False


@dataclass(frozen=True)
class Leak:
    word: str  # the text that leaked, as the prompt has it
    what: str  # what it gives away
    template: str
    line: int
    source: str  # the template line

    def message(self) -> str:
        return f"the prompt names {self.what}: `{self.word}`"

    def location(self) -> str:
        return f"{self.template}:{self.line}: {self.source.strip()}"


@dataclass(frozen=True)
class _Term:
    pattern: re.Pattern
    what: str
    values_only: bool = False  # a bare name: template text is the same for every scenario, so a word of it
    # that happens to equal an object's name ("cluster", "kubeconfig") says nothing about the object


def _kind_words(kind: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", kind).lower()
    words = {kind.lower(), spaced, spaced.replace(" ", "-"), *KIND_ALIASES.get(kind, ())}
    return sorted(words, key=lambda w: (-len(w), w))


def _phrase(words: list[str]) -> str:
    """A regex for a phrase, tolerant of inflection ("scaled"/"scaling"/"scale") and of `_`/`-`/space."""
    parts = []
    for word in words:
        word = word.lower()
        if len(word) >= 5:
            stem = re.sub(r"(ing|ed|es|s|e)$", "", word)
            parts.append(re.escape(stem) + r"[a-z]*")
        else:
            parts.append(re.escape(word) + r"(?:s|es|d|ed)?")
    return r"(?<![A-Za-z])" + r"[\s_\-]+".join(parts) + r"(?![A-Za-z])"


def _mechanism_terms(scenario: ir.Scenario) -> list[_Term]:
    terms: list[_Term] = []
    seen: set[str] = set()

    def add(pattern: str, what: str) -> None:
        if pattern not in seen:
            seen.add(pattern)
            terms.append(_Term(re.compile(pattern, re.IGNORECASE), what))

    for injection in scenario.injections():
        kind = injection.kind
        label = f"the fault mechanism (`{injection.fault}`)"
        add(_phrase(injection.fault.split("_")), label)
        itbench_id = injection.itbench_id or (kind.itbench_id if kind else None)
        if itbench_id:
            add(re.escape(itbench_id), label)
            words = [w for w in itbench_id.split("-") if w not in GENERIC_ID_WORDS]
            if len(words) >= 2:
                add(_phrase(words), label)
        if injection.fault.endswith("_chaos") or (kind and kind.mechanism.startswith("chaos-mesh")):
            add(r"chaos", label)  # "chaos", "Chaos Mesh", "chaos-mesh", "NetworkChaos"
            args = injection.args if isinstance(injection.args, dict) else {}
            spec = args.get("spec") if isinstance(args.get("spec"), dict) else {}
            action = str(args.get("action") or spec.get("action") or "")  # "pod-kill", "ruleData"
            words = [w for w in re.split(r"[-_\s]+|(?<=[a-z])(?=[A-Z])", action) if w]
            if len(words) >= 2:
                add(_phrase(words), label)
    return terms


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str, flags: int = 0) -> re.Pattern:
    """Object patterns recur across scenarios and variants; `re`'s own cache holds only 512."""
    return re.compile(pattern, flags)


def _object_terms(ref: ir.ObjectRef, what: str, allowed: set[str]) -> list[_Term]:
    name = ref.name
    glob = "*" in name or "?" in name
    base = re.sub(r"[-*?.]+$", "", re.sub(r"[*?].*$", "", name)) if glob else name
    if not base:
        return []
    name_re = re.escape(base) + (r"[A-Za-z0-9\-]*" if glob else "")
    quoted = r"[\s\"'`(]*"
    kinds = "|".join(re.escape(k).replace(r"\ ", r"[\s\-]?") for k in _kind_words(ref.kind))
    terms = [
        # Kind/name, ns/Kind/name, kind name, kind "name", kind `name`
        _Term(_compiled(rf"(?<![A-Za-z])(?:{kinds})(?:/|:\s*|{quoted})[\"'`]*{name_re}{_NAME_END}",
                         re.IGNORECASE), what),
        # the name kind, `name` kind
        _Term(_compiled(rf"{_NAME_START}{name_re}[\"'`)]*\s+(?:{kinds})(?![A-Za-z])", re.IGNORECASE), what),
    ]
    if _distinctive(base, allowed):
        terms.append(_Term(_compiled(rf"{_NAME_START}{name_re}{_NAME_END}", re.IGNORECASE), what, values_only=True))
    return terms


def _distinctive(name: str, allowed: set[str]) -> bool:
    """A bare name identifies its object unless it is an ordinary word or a value every prompt may give."""
    if name in allowed or len(name) < 3:
        return False
    return not (name.isalpha() and name.lower() in ORDINARY_WORDS)


def _guarded_objects(scenario: ir.Scenario) -> list[tuple[ir.ObjectRef, str]]:
    objects: list[tuple[ir.ObjectRef, str]] = []
    for ref in scenario.root_causes:
        objects.append((ref, f"a root-cause object ({ref.kind} `{ref.name}`)"))
    for injection in scenario.injections():
        for ref in [injection.target, injection.root]:
            if ref is not None and ref not in [o for o, _ in objects]:
                objects.append((ref, f"an object the fault `{injection.fault}` acts on ({ref.kind} `{ref.name}`)"))
    compliance = scenario.compliance
    if compliance is not None and not compliance.given:
        for ref in compliance.gaps:
            if ref.kind != "HostGroup":  # the inventory group is part of the task (ITBench names it too)
                objects.append((ref, f"a gap object ({ref.kind} `{ref.name}`)"))
    return objects


def terms(scenario: ir.Scenario, allowed: set[str]) -> list[_Term]:
    found = _mechanism_terms(scenario)
    for ref, what in _guarded_objects(scenario):
        found += _object_terms(ref, what, allowed)
    return found


def find_leaks(scenario: ir.Scenario, chunks: list[Chunk], source_of: Callable[[str], str]) -> list[Leak]:
    """Every leak in the rendered prompt, once per (word, what), in prompt order.

    `source_of(template name)` gives a template's text, read only when something leaked."""
    # a bare name equal to a namespace or the application is never read: every prompt gives those. A
    # component the hint level lists is read wherever else it appears (the listing itself is blanked).
    allowed = {n.name for n in scenario.topology.namespaces} | {scenario.topology.application or ""}
    if scenario.compliance is not None:
        allowed |= {r.namespace for r in scenario.compliance.gaps + scenario.compliance.compliant if r.namespace}
    # allowed values are blanked (same length, so offsets still map to chunks) and act as word boundaries
    text = "".join("\x00" * len(c.text) if c.allowed else c.text for c in chunks)
    starts, offset = [], 0
    for chunk in chunks:
        starts.append(offset)
        offset += len(chunk.text)
    leaks: list[tuple[int, Leak]] = []
    seen: set[tuple[str, str]] = set()
    for term in terms(scenario, allowed):
        for match in term.pattern.finditer(text):
            word = match.group(0).strip()
            index = bisect.bisect_right(starts, match.start()) - 1
            chunk = chunks[index]
            if (term.values_only and chunk.literal) or (word.lower(), term.what) in seen:
                continue
            seen.add((word.lower(), term.what))
            template_text = source_of(chunk.template) if chunk.template else ""
            line = _template_line(chunk, match.start() - starts[index], word, template_text)
            source_lines = template_text.splitlines()
            source = source_lines[line - 1] if 0 < line <= len(source_lines) else ""
            leaks.append((match.start(), Leak(word, term.what, chunk.template, line, source)))
    return [leak for _, leak in sorted(leaks, key=lambda item: item[0])]


def _template_line(chunk: Chunk, offset: int, word: str, source: str) -> int:
    """The template line a leaked word comes from.

    A value comes from the line of its `{{ }}`. Template text is found in the template source: Jinja
    reports the line a text node starts on, and trimmed block tags shift that, so the rendered line
    is looked for from there on."""
    if not chunk.literal or not source:
        return chunk.line
    rendered_line = chunk.text[:offset].count("\n")
    text_line = chunk.text.splitlines()[rendered_line] if chunk.text.splitlines() else word
    lines = source.splitlines()
    for needle in (text_line.strip(), word):
        if not needle:
            continue
        for number in range(max(1, chunk.line - 1), len(lines) + 1):
            if needle.lower() in lines[number - 1].lower():
                return number
    return chunk.line + rendered_line


__all__ = ["Chunk", "Leak", "find_leaks", "terms", "ORDINARY_WORDS"]
