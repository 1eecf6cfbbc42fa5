"""Solutions are evidence (itbench_dsl/analysis/solutions.py): a scenario's first solution, replayed on its faulty state,
must mitigate (E4006); a step that cannot be replayed is a warning at the step (W2009), and so is a further
solution that does not mitigate (W2010)."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl.checking import check_source

ROOT = Path(__file__).resolve().parents[2]
PVC = (ROOT / "scenarios" / "sre" / "bookinfo-reviews-nonexistent-pvc.itb").read_text(encoding="utf-8")
UNDO = 'step "Rollback the deployment to previous working configuration" run "kubectl -n book-info rollout undo deployment/reviews-v3"'


def first(step: str) -> str:
    """The scenario with its first solution made of this one step."""
    start = PVC.index('  solution "rollback-deployment"')
    end = PVC.index('  solution "fix-pvc-storageclass"')
    return PVC[:start] + '  solution "rollback-deployment" {\n    ' + step + '\n  }\n\n' + PVC[end:]


def _check(text: str):
    """The findings `itbench check` reports on the text: those the scenario allows (`lint_allow`) left out."""
    checked = check_source(text.encode("utf-8"), "input.itb")
    return [(d.code, d.span.line, d.message) for d in checked.diagnostics
            if d.severity != "warning" or d.code not in checked.allowed], text.splitlines()


def test_the_librarys_first_solution_mitigates_with_the_claim_left_in_place():
    assert UNDO in PVC
    assert _check(first(UNDO))[0] == []


def test_a_step_the_api_server_refuses_is_an_error_at_the_step():
    text = first('step "Point the claim at a valid class" run "kubectl -n book-info patch pvc reviews-v3 '
                 '-p \'{\\"spec\\": {\\"storageClassName\\": \\"standard\\"}}\'"')
    (finding,), lines = _check(text)
    code, line, message = finding
    assert code == "E4006" and "would refuse" in message and "immutable" in message
    assert "patch pvc reviews-v3" in lines[line - 1]


def test_a_solution_that_changes_nothing_does_not_mitigate():
    text = first('step "Look at the claim" run "kubectl -n book-info get pvc reviews-v3"')
    (finding,), lines = _check(text)
    assert finding[0] == "E4006" and "does not mitigate" in finding[2] and "reviews-v3" in finding[2]
    assert "get pvc" in lines[finding[1] - 1]


def test_a_step_that_cannot_be_replayed_is_a_warning_at_the_step():
    text = first('step "Fix it by hand" run "kubectl -n book-info edit deployment reviews-v3"')
    (finding,), lines = _check(text)
    assert finding[0] == "W2009" and "kubectl edit" in finding[2] and "edit deployment" in lines[finding[1] - 1]


def test_a_further_solution_that_does_not_mitigate_is_a_warning():
    wrong = 'step "Identify available StorageClasses using kubectl get storageclass"'
    text = PVC.replace(wrong, wrong + ' run "kubectl get storageclass"', 1)
    assert _check(text)[0] == []  # its other steps are prose for the agent: the commands are not the solution
    solution = text[text.index('  solution "fix-pvc-storageclass"'):text.index('  solution "use-existing-pvc"')]
    text = text.replace(solution, '  solution "fix-pvc-storageclass" {\n    id = "fix-pvc-storageclass"\n'
                        '    step "Scale reviews-v3 down" run "kubectl -n book-info scale deployment/reviews-v3 '
                        '--replicas=0"\n  }\n\n')
    (finding,), _ = _check(text)
    assert finding[0] == "W2010" and "fix-pvc-storageclass" in finding[2]


def test_a_warning_the_scenario_allows_stays_allowed_beside_an_error():
    """`itbench check` drops the warnings a scenario allows (`lint_allow`) whether or not the file also has an
    error: the scenario's metadata is read from its IR, not from the clean check alone."""
    from itbench_dsl.checking import check_files

    text = first('step "Look at the claim" run "kubectl -n book-info get pvc reviews-v3"')
    assert "lint_allow" in text
    import re

    allowed = set(re.findall(r'"(W\d{4})"', re.search(r"lint_allow = \[(.*)\]", text).group(1)))
    assert allowed and allowed & {d.code for d in check_source(text.encode("utf-8"), "input.itb").diagnostics}
    diags, _ = check_files([("input.itb", text.encode("utf-8"))])
    codes = [d.code for d in diags.items]
    assert "E4006" in codes and not set(codes) & allowed, codes
