"""The agent's prompts: every scenario renders at every hint level and passes the leakage lint (E4003);
a template using a value the context lacks is E4001; prompts that would leak (through a template that
prints scenario text, a goal that names a gap object, ...) are caught and located; the CISO prompts
state each class's output contract; hint levels add exactly what they should; bundle.lock records the
level.

The shipped templates print no scenario text but a CISO control's `goal` (a goal that names a gap
object is E4003: here and in tests/cases/errors/E4003-goal-names-gap-object); other leaking prompts
are made with a monkeypatched template environment that prints scenario text.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jinja2 import DictLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from itbench_dsl import compiler
from itbench_dsl.backends import prompt as prompt_backend
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.analysis.leakage import ORDINARY_WORDS
from itbench_dsl.ciso.k8s import object_names

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((REPO / "scenarios").rglob("*.itb"))
LEVELS = prompt_backend.HINT_LEVELS


def _compile(source: bytes | str, path: str = "input.itb", hints: str = "none"):
    data = source.encode("utf-8") if isinstance(source, str) else source
    diags = Diagnostics()
    result = compiler.compile_source(data, path, diags, validate=False, hints=hints)
    return result, diags


def _scenario(name: str):
    path = next(p for p in SCENARIOS if p.stem == name)
    result, diags = _compile(path.read_bytes(), str(path))
    assert result.scenario is not None, [d.message for d in diags.items]
    return result.scenario, path


@pytest.fixture(scope="module")
def compiled():
    """Every scenario's IR, compiled once."""
    out = {}
    for index, path in enumerate(SCENARIOS):
        result, _ = _compile(path.read_bytes(), str(path))
        if result.scenario is not None:
            out[path.stem] = result.scenario
            # some scenarios also as they read with a `tasks` statement (prompt/tasks.md.j2, one section per task)
            posed = {"sre": "detect, localize, mitigate", "finops": "detect, diagnose, mitigate"}.get(
                result.scenario.domain)
            if posed and index % 8 == 0:
                text = re.sub(rb"\n(\s*)domain (\w+)\n", rb"\n\1domain \2\n\1tasks " + posed.encode() + rb"\n",
                              path.read_bytes(), count=1)
                variant, _ = _compile(text, str(path))
                if variant.scenario is not None:
                    out[path.stem + "+tasks"] = variant.scenario
    return out


# ---- every scenario, every level ------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_every_scenario_renders_and_passes_the_lint(level, compiled):
    assert len([name for name in compiled if not name.endswith("+tasks")]) == len(SCENARIOS)
    for name, scenario in compiled.items():
        text, leaks = prompt_backend.render_checked(scenario, level)
        assert leaks == [], f"{name} at {level}: {[(l.word, l.what, l.location()) for l in leaks]}"
        assert text.startswith(("# Task:", "# Tasks:")) and "{{" not in text and "{%" not in text, name


def test_the_compiler_records_the_level_and_writes_the_prompt():
    path = REPO / "scenarios" / "sre" / "otel-shipping-quote-address.itb"
    prompts = {}
    for level in LEVELS:
        result, diags = _compile(path.read_bytes(), str(path), hints=level)
        assert not diags.errors(), [d.message for d in diags.errors()]
        lock = json.loads(result.files["bundle.lock"])
        assert lock["hints"] == level
        prompts[level] = result.files["prompt.md"].decode()
    assert len(set(prompts.values())) == 3


def test_an_unknown_level_is_refused():
    scenario, _ = _scenario("otel-shipping-quote-address")
    with pytest.raises(ValueError, match="unknown hint level"):
        prompt_backend.hint_context(scenario, "everything")


# ---- what each level adds --------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_levels_only_add_lines(compiled):
    for name, scenario in compiled.items():
        none, topology, localized = (_lines(prompt_backend.render(scenario, level)) for level in LEVELS)
        assert set(none) <= set(topology) <= set(localized), name


def test_level_none_gives_the_application_and_namespaces_only():
    scenario, _ = _scenario("otel-shipping-quote-address")
    text = prompt_backend.render(scenario, "none")
    assert "`otel-demo`" in text and "**opentelemetry-demo**" in text
    assert "## Topology" not in text and "## Where the symptoms are" not in text
    for component in ("product-catalog", "valkey-cart", "frontend-proxy", "shipping", "quote"):
        assert component not in text


def test_level_topology_adds_every_component_and_its_calls():
    scenario, _ = _scenario("otel-shipping-quote-address")
    text = prompt_backend.render(scenario, "topology")
    section = text.split("## Topology", 1)[1].split("## ", 1)[0]
    listed = re.findall(r"^- `([^`]+)` \((Deployment|StatefulSet) in `otel-demo`\)", section, re.M)
    assert sorted(n for n, _ in listed) == sorted(w.name for w in scenario.topology.workloads)
    calls = {tuple(edge) for edge in scenario.topology.edges}
    for line in section.splitlines():
        match = re.match(r"- `([^`]+)` .*? calls (.*)$", line)
        if match:
            for callee in re.findall(r"`([^`]+)`", match.group(2)):
                assert (match.group(1), callee) in calls
    assert ("shipping", "quote") in calls and "- `shipping` (Deployment in `otel-demo`) calls `quote`" in section
    assert "## Where the symptoms are" not in text


def test_level_localized_adds_the_symptoms_and_never_the_root_cause():
    scenario, _ = _scenario("otel-shipping-quote-address")  # root cause: deployment shipping
    text = prompt_backend.render(scenario, "localized")
    section = text.split("## Where the symptoms are", 1)[1].split("## ", 1)[0]
    assert "- namespace `otel-demo`, on `accounting`, `checkout`, `currency`, `email`, `fraud-detection`, `frontend`, " \
        "`frontend-proxy`, `payment`, `quote`" in section  # ITBench's expected alerts of scenario 16
    assert "shipping" not in section


def test_localized_symptoms_never_name_a_root_cause_component(compiled):
    from itbench_dsl.backends.itbench import _component

    for name, scenario in compiled.items():
        causes = prompt_backend._causes(scenario)
        forbidden = {r.name for r in causes} | {_component(r, scenario) for r in causes}
        for symptom in prompt_backend.symptoms(scenario):
            assert not set(symptom["components"]) & forbidden, name
            assert symptom["namespace"] in [n.name for n in scenario.topology.namespaces], name


def test_a_scenario_whose_alerts_are_all_on_the_root_cause_is_localized_to_its_namespace():
    scenario, _ = _scenario("otel-accounting-scaled-to-zero")  # alerts on accounting itself
    assert prompt_backend.symptoms(scenario) == [{"namespace": "otel-demo", "components": []}]
    section = prompt_backend.render(scenario, "localized").split("## Where the symptoms are", 1)[1]
    assert "- namespace `otel-demo`\n" in section and "accounting" not in section.split("## ", 1)[0]


def test_ciso_prompts_do_not_change_with_the_level(compiled):
    for name, scenario in compiled.items():
        if scenario.domain == "ciso":
            assert len({prompt_backend.render(scenario, level) for level in LEVELS}) == 1, name


# ---- the output contracts ----------------------------------------------------------------------------


def test_sre_prompt_states_the_2026_diagnosis_shape():
    scenario, _ = _scenario("otel-checkout-nonexistent-image")
    text = prompt_backend.render(scenario)
    block = text.split("```json", 1)[1].split("```", 1)[0]
    shape = json.loads(block.replace('"..."', '""').replace("true", "true"))
    assert set(shape) == {"entities", "propagations", "alerts_explained"}
    assert set(shape["entities"][0]) == {"name", "contributing_factor", "reasoning", "evidence"}
    assert set(shape["propagations"][0]) == {"source", "target", "condition", "effect"}
    assert shape["entities"][0]["name"] == "<namespace>/<Kind>/<name>"
    assert "/tmp/agent/diagnosis.json" in text and "/<Kind>/<name>" in text
    assert "Then mitigate" in text and "relabelling pods does not count" in text


def test_finops_prompt_states_the_resource_shape():
    scenario, _ = _scenario("otel-cart-overprovisioned-requests")
    text = prompt_backend.render(scenario)
    block = text.split("```json", 1)[1].split("```", 1)[0]
    assert json.loads(block) == {"resource": [{"name": "<namespace>/<Kind>/<name>", "type": "<kind of waste>"}]}
    assert "/tmp/agent/finops.json" in text and "identify" in text.lower()
    # the closed vocabulary `type` is graded against, listed whole (the same in every FinOps prompt)
    from itbench_dsl.tasks import FINOPS_TYPES

    assert all(f"`{value}`" in text for value in FINOPS_TYPES)


CISO_CONTRACTS = {
    "cis-5-2-5-host-network-kyverno": [
        "ClusterPolicy", "kyverno.io/v1", "/tmp/agent/policy.yaml", "validationFailureAction: Audit",
        "failureAction: Audit", "spec.background: true", "PolicyReports", "report, not block",
        "/tmp/agent/kubeconfig.yaml", "`ciso-target`", "Minimize the admission of containers wishing to share the host",
    ],
    "cis-k8s-5-2-7-root-user-kyverno-update": [
        "ClusterPolicy `paa-security-controls`", "under its name `paa-security-controls`",
        "/tmp/agent/updated-policy.yaml", "validationFailureAction: Audit", "Do not create a\nnew policy resource",
        "/tmp/agent/kubeconfig.yaml", "`paa`",
    ],
    "cis-k8s-5-2-5-host-network-opa": [
        "`fetcher.sh`", "`policy.rego`", "`collected_data.json`", "declare `package check`", "boolean rule `result`",
        "`false`\n  when any of them breaks it", "Rego v1", "`if`", "`contains`",
        "opa eval --data policy.rego --input collected_data.json data.check.result --format raw",
        "do not pass `--kubeconfig`", "/tmp/agent/kubeconfig.yaml", "bash fetcher.sh", "the script is not run",
    ],
    "rhel9-sshd-x11-forwarding-ansible-opa": [
        "`playbook.yml`", "`policy.rego`", "`collected_data.json`", "declare `package check`", "boolean rule `result`",
        "Rego v1", "`rhel9_servers_40bc:rhel9_servers_c4b6`", "hosts: rhel9_servers_40bc:rhel9_servers_c4b6",
        "/tmp/agent/inventory.ansible.ini",
        "ansible-playbook playbook.yml", "data.check.result", "delegate_to: localhost",
        "Ensure SSH X11 forwarding is disabled", "the playbook is not run",
    ],
}


@pytest.mark.parametrize("name", sorted(CISO_CONTRACTS))
def test_ciso_prompts_state_the_contract_of_their_class(name):
    scenario, _ = _scenario(name)
    text = prompt_backend.render(scenario)
    for phrase in CISO_CONTRACTS[name]:
        assert phrase in text, f"{name}: {phrase!r} missing"
    assert "/tmp/agent" in text


def test_every_ciso_class_has_its_template(compiled):
    classes = {s.compliance.task for s in compiled.values() if s.compliance}
    assert classes == {"kyverno_policy", "kyverno_update", "opa_kubectl", "ansible_opa"}
    for task in classes:
        assert prompt_backend.SUBMISSION[task]


def test_the_rego_example_is_rego_v1():
    scenario, _ = _scenario("cis-k8s-5-2-5-host-network-opa")
    rego = prompt_backend.render(scenario).split("```rego", 1)[1].split("```", 1)[0]
    assert rego.lstrip().startswith("package check")
    assert "default result := false" in rego and "result if " in rego and "contains name if {" in rego
    assert "default result = false" not in rego and not re.search(r"^result \{", rego, re.M)  # v0 forms


def test_the_goal_stays_inside_its_quote():
    scenario, _ = _scenario("cis-k8s-5-2-7-root-user-kyverno-update")
    text = prompt_backend.render(scenario)
    quoted = text.split("`:\n\n", 1)[1].split("\n\n", 1)[0]
    assert all(line.startswith(">") for line in quoted.splitlines())


# ---- the lint on crafted prompts -------------------------------------------------------------------------


def _patch_template(monkeypatch, body: str, extra: dict | None = None, names=("prompt/sre.md.j2",)):
    """Every prompt renders `body`; the context gains `extra` (as scenario text would, were it printed)."""
    env = SandboxedEnvironment(loader=DictLoader({n: body for n in names}), undefined=StrictUndefined,
                               keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    monkeypatch.setattr(prompt_backend, "_environment", lambda: env)
    if extra is not None:
        real = prompt_backend.context
        monkeypatch.setattr(prompt_backend, "context", lambda scenario: {**real(scenario), **extra(scenario)})


DESCRIBE = "# Task\n\nWhat happened:\n{{ description }}\n"


def _with_description(scenario):
    return {"description": scenario.description}


def _leaks(name: str, hints: str = "none"):
    path = next(p for p in SCENARIOS if p.stem == name)
    result, diags = _compile(path.read_bytes(), str(path), hints=hints)
    return result, [d for d in diags.items if d.code == "E4003"], diags


def test_a_description_in_ordinary_words_passes(monkeypatch):
    # "Checkout is redeployed with an image tag that does not exist.": `checkout` is an ordinary word and the
    # fault's own words are not there, so the lint (lexical: it does not catch paraphrases) lets it through;
    # the same text with the fault's words or the kind-qualified name does not pass (next test)
    _patch_template(monkeypatch, DESCRIBE, _with_description)
    result, leaks, _ = _leaks("otel-checkout-nonexistent-image")
    assert result.files and not leaks
    assert "an image tag that does not exist" in result.files["prompt.md"].decode()


@pytest.mark.parametrize("text, word, what", [
    ("The checkout deployment uses a nonexistent image.", "nonexistent image", "`nonexistent_image`"),
    ("The checkout deployment uses a nonexistent image.", "checkout deployment", "Deployment `checkout`"),
    ("See otel-demo/Deployment/checkout.", "Deployment/checkout", "Deployment `checkout`"),
    ("It fails with nonexistent-kubernetes-workload-container-image.",
     "nonexistent-kubernetes-workload-container-image", "`nonexistent_image`"),
    ('Look at deployment "checkout" first.', 'deployment "checkout', "Deployment `checkout`"),
])
def test_a_description_naming_the_fault_or_the_root_cause_leaks(monkeypatch, text, word, what):
    _patch_template(monkeypatch, DESCRIBE, lambda s: {"description": text})
    result, leaks, _ = _leaks("otel-checkout-nonexistent-image")
    assert result.files == {}
    found = [d for d in leaks if word.lower() in d.message.lower() and what in d.message]
    assert found, [d.message for d in leaks]
    leak = found[0]
    assert leak.span.line == 1 and leak.span.column == 10  # the scenario's name
    assert "prompt/sre.md.j2:4: {{ description }}" in leak.help


@pytest.mark.parametrize("scenario, text, word", [
    ("otel-cart-pod-kill-loop", "Pods keep dying; Chaos Mesh is installed.", "Chaos"),
    ("otel-cart-pod-kill-loop", "Someone left a PodChaos behind.", "Chaos"),
    ("otel-cart-pod-kill-loop", "A pod kill loop.", "pod kill"),
    ("otel-accounting-scaled-to-zero", "Accounting was scaled to zero.", "scaled to zero"),
    ("otel-accounting-scaled-to-zero", "Someone is scaling it to zero.", "scaling it to zero"),
    ("otel-valkey-cart-out-of-memory", "The valkey-cart store is in trouble.", "valkey-cart"),
    ("otel-cart-deleted-service", "The cart service is gone.", "cart service"),
    ("bookinfo-ambient-mode-disabled", "The namespace book-info changed.", "namespace book-info"),
    ("otel-checkout-insufficient-quota", "Mind prometheus-main.", "prometheus-main"),
])
def test_crafted_leaks_are_caught(monkeypatch, scenario, text, word):
    # the prompt of a scenario posing its tasks one by one (the Chaos Mesh ones: `tasks diagnose`) is tasks.md.j2
    _patch_template(monkeypatch, DESCRIBE, lambda s: {"description": text},
                    names=("prompt/sre.md.j2", "prompt/tasks.md.j2"))
    result, leaks, _ = _leaks(scenario)
    if word == "scaling it to zero":  # "scaling ... to zero" with a word between is not the phrase
        assert not leaks and result.files
        return
    assert result.files == {} and leaks, text
    assert any(f"`{word}`".lower() in d.message.lower() for d in leaks), [d.message for d in leaks]


@pytest.mark.parametrize("scenario, text", [
    ("otel-cart-deleted-service", "Shoppers cannot put items in their cart."),  # `cart`: an ordinary word
    ("otel-accounting-scaled-to-zero", "Orders are no longer accounted."),
    ("bookinfo-details-invalid-selector", "Book details are missing from the page."),  # `details`: ordinary
    ("otel-api-server-request-surge", "Everything in otel-demo is slow."),  # the namespace is the root cause
])
def test_ordinary_words_and_namespaces_do_not_leak(monkeypatch, scenario, text):
    _patch_template(monkeypatch, DESCRIBE + "Namespaces: {% for ns in namespaces %}{{ ns }} {% endfor %}\n",
                    lambda s: {"description": text})
    result, leaks, _ = _leaks(scenario)
    assert not leaks and result.files, [d.message for d in leaks]


def test_a_component_listed_by_the_topology_hint_is_not_a_leak_but_the_same_name_in_text_is(monkeypatch):
    body = "# Task\n{% for c in hints.components %}- {{ c.name }} ({{ c.kind }})\n{% endfor %}{{ description }}\n"
    _patch_template(monkeypatch, body, lambda s: {"description": "All is well."})
    result, leaks, _ = _leaks("otel-valkey-cart-out-of-memory", hints="topology")
    assert not leaks and "valkey-cart (Deployment)" in result.files["prompt.md"].decode()
    _patch_template(monkeypatch, body, lambda s: {"description": "Look at valkey-cart."})
    result, leaks, _ = _leaks("otel-valkey-cart-out-of-memory", hints="topology")
    assert leaks and "`valkey-cart`" in leaks[0].message and "{{ description }}" in leaks[0].help


def test_template_text_that_names_the_mechanism_is_located_at_its_line(monkeypatch):
    body = "# Task\n\n{% if namespaces %}\nAn incident happened.\nIt may involve chaos.\n{% endif %}\n"
    _patch_template(monkeypatch, body, names=("prompt/tasks.md.j2",))  # the scenario poses `tasks diagnose`
    _, leaks, _ = _leaks("otel-cart-pod-kill-loop")
    assert leaks and "prompt/tasks.md.j2:5: It may involve chaos." in leaks[0].help


def test_the_shipped_safeguard_sentence_does_not_read_as_a_fault():
    # the mitigation rules speak of what does not count without the words of the faults they resemble
    for name in ("otel-accounting-scaled-to-zero", "otel-cart-deleted-service", "bookinfo-details-invalid-selector"):
        result, leaks, _ = _leaks(name)
        assert not leaks and result.files


def test_e4003_renders_with_the_scenario_and_the_template_line(monkeypatch):
    from itbench_dsl.diagnostics import render_human

    _patch_template(monkeypatch, DESCRIBE, lambda s: {"description": "A nonexistent image."})
    _, _, diags = _leaks("otel-checkout-nonexistent-image")
    text = render_human(diags, color=False)
    assert "error[E4003]: the prompt names the fault mechanism (`nonexistent_image`): `nonexistent image`" in text
    assert 'scenario "otel-checkout-nonexistent-image"' in text
    assert "help: from prompt/sre.md.j2:4: {{ description }}" in text


# ---- CISO gap objects and `given` -----------------------------------------------------------------------


HOST_NETWORK = (REPO / "scenarios" / "ciso" / "cis-5-2-5-host-network-kyverno.itb").read_text()
NAMED_GOAL = HOST_NETWORK.replace("share the host network namespace.", "share the host network namespace, as nginx-deployment does.")
GIVEN = 'benchmark = "CIS Kubernetes Benchmark"\n    given = true'


def test_a_goal_naming_a_gap_object_leaks():
    result, diags = _compile(NAMED_GOAL)
    leaks = [d for d in diags.items if d.code == "E4003"]
    assert result.files == {} and len(leaks) == 1
    assert "a gap object (Deployment `nginx-deployment`)" in leaks[0].message
    assert "prompt/ciso/kyverno_policy.md.j2:5: {{ control.goal | quote }}" in leaks[0].help


def test_a_given_gap_may_be_named_and_the_prompt_lists_the_objects_in_scope():
    result, diags = _compile(NAMED_GOAL.replace('benchmark = "CIS Kubernetes Benchmark"', GIVEN))
    assert not diags.errors(), [d.message for d in diags.errors()]
    assert result.scenario.compliance.given is True
    text = result.files["prompt.md"].decode()
    # listed by namespace, kind and name: the order says nothing of which object breaks the control
    assert "- Objects in scope (some comply, some may not):\n  - `ciso-target/Deployment/nginx-compliant`\n" \
           "  - `ciso-target/Deployment/nginx-deployment`" in text


def test_the_order_of_given_objects_does_not_tell_the_gap():
    """Whichever object is the gap, the listing is the same: written gap first or compliant first."""
    def listing(source: str) -> list[str]:
        result, diags = _compile(source)
        assert not diags.errors(), [d.message for d in diags.errors()]
        lines = result.files["prompt.md"].decode().split("- Objects in scope")[1].splitlines()[1:]
        return [line for line in lines if line.startswith("  - `")]

    source = HOST_NETWORK.replace('benchmark = "CIS Kubernetes Benchmark"', GIVEN)
    renamed = source.replace("nginx-compliant", "aaa-compliant")  # the compliant object now sorts first
    assert listing(source) == sorted(listing(source)) and listing(renamed) == sorted(listing(renamed))
    assert listing(renamed)[0].endswith("aaa-compliant`") and listing(source)[0].endswith("nginx-compliant`")


def test_without_given_the_prompt_names_no_object():
    result, diags = _compile(HOST_NETWORK)
    assert not diags.errors() and result.scenario.compliance.given is False
    text = result.files["prompt.md"].decode()
    assert "nginx" not in text and "Objects in scope" not in text


def test_given_on_a_catalogue_control():
    source = (REPO / "scenarios" / "ciso" / "cis-k8s-5-2-5-host-network-opa.itb").read_text()
    result, diags = _compile(source.replace('control "cis-k8s-5.2.5"', 'control "cis-k8s-5.2.5" {\n    given = true\n  }'))
    assert not diags.errors(), [d.message for d in diags.errors()]
    text = result.files["prompt.md"].decode()
    gap, ok = object_names("host-network")
    assert f"`ciso-target/Deployment/{gap}`" in text and f"`ciso-target/Deployment/{ok}`" in text


def test_the_default_namespace_control_names_the_namespace_it_checks(compiled):
    text = prompt_backend.render(compiled["cis-k8s-5-7-4-default-namespace-kyverno"])
    assert "- Namespaces to check: `ciso-target`, `default`" in text
    assert object_names("default-namespace")[0] not in text


# ---- E4001 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, template", [
    ("otel-checkout-nonexistent-image", "prompt/sre.md.j2"),
    ("cis-k8s-5-2-5-host-network-opa", "prompt/ciso/opa_kubectl.md.j2"),
    ("otel-cart-overprovisioned-requests", "prompt/finops.md.j2"),
])
def test_a_template_using_an_undefined_value_is_e4001(monkeypatch, name, template):
    _patch_template(monkeypatch, "# Task\n{{ hints.level }} {{ control.nothing if control else nothing }}\n",
                    names=(template,))
    result, _, diags = _leaks(name)
    assert [d.code for d in diags.items] == ["E4001"] and result.files == {}
    assert "nothing" in diags.items[0].message


def test_every_shipped_template_renders_with_strict_undefined(compiled):
    # each template is reached by some scenario; StrictUndefined would have raised above otherwise
    reached = {prompt_backend.template_name(s) for s in compiled.values()}
    shipped = {f"prompt/{p.relative_to(REPO / 'itbench_dsl' / 'templates' / 'prompt').as_posix()}"
               for p in (REPO / "itbench_dsl" / "templates" / "prompt").rglob("*.j2")}
    assert reached == shipped


# ---- the ordinary-word list stays small and lower case -------------------------------------------------------


def test_ordinary_words_are_plain_lower_case_words():
    assert all(w.isalpha() and w == w.lower() for w in ORDINARY_WORDS) and len(ORDINARY_WORDS) < 200


# ---- the command line ----------------------------------------------------------------------------------------


def test_cli_hints_option(tmp_path: Path):
    source = REPO / "scenarios" / "sre" / "otel-shipping-quote-address.itb"
    run = subprocess.run([sys.executable, "-m", "itbench_dsl", "compile", str(source), "-o", str(tmp_path),
                          "--hints", "localized", "-q"], capture_output=True, text=True, cwd=REPO)
    assert run.returncode in (0, 1), run.stderr  # 1 only for findings of other stages
    bundle = tmp_path / "otel-shipping-quote-address"
    if run.returncode == 0:
        assert json.loads((bundle / "bundle.lock").read_text())["hints"] == "localized"
        assert "## Where the symptoms are" in (bundle / "prompt.md").read_text()
    run = subprocess.run([sys.executable, "-m", "itbench_dsl", "check", str(source), "--hints", "all"],
                         capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 2 and "--hints" in run.stderr


def test_a_bare_name_in_template_text_is_not_a_leak_but_in_a_value_it_is(monkeypatch):
    # a gap object named like a word of the template ("cluster") is only read in scenario values
    source = HOST_NETWORK.replace('"nginx-deployment"', '"cluster"')
    result, diags = _compile(source)
    assert not diags.errors() and "Kubernetes cluster" in result.files["prompt.md"].decode()
    result, diags = _compile(source.replace("host network namespace.", "host network namespace, as cluster does."))
    assert [d.code for d in diags.errors()] == ["E4003"] and "`cluster`" in diags.errors()[0].message


def test_an_inline_application_is_named_not_custom():
    """An inline topology is called by its name (`topology "NAME"`), else by the namespace it runs in."""
    from support.compiling import SCENARIOS, compile_ok

    text = (SCENARIOS / "sre" / "shop-cart-modified-env.itb").read_text("utf-8")
    prompt = compile_ok(text).files["prompt.md"].decode()
    assert "**custom**" not in prompt and "**shop** application" in prompt
    named = text.replace("  topology {", '  topology "web-shop" {', 1)
    assert "**web-shop** application" in compile_ok(named).files["prompt.md"].decode()
