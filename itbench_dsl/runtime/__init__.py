"""The runtime: the package's standard-library-only modules.

The rule: a module here imports nothing but the standard library and other modules of `runtime/`
(relatively), never the rest of `itbench_dsl`. Some of them run outside the package: every compiled
bundle's standalone evaluator.py is `evaluator.py` with `state.py`'s text in place of its import, with the Kyverno matcher's modules and the
YAML reader embedded as string literals when its task needs them (itbench_dsl/backends/evaluator.py
writes them, `embedded_module` in `evaluator.py` runs them), so it runs with `python -S` and no file of
the package present. The others keep the same rule so that they can run anywhere too.
tests/runtime/test_runtime_package.py checks the rule on every module.

    evaluator.py   the scoring runtime of a bundle's evaluator.py (`evaluate`, `main`): embedded
    state.py       the model of a captured cluster state the evaluator grades and the compiler derives
                   (values, `State`, field paths, defaults, readiness, pod templates): embedded
    kyverno/       an offline matcher of Kyverno validation semantics (embedded, but for the
                   Kyverno CLI test-suite runner, suite.py)
    miniyaml.py    a reader for the YAML Kubernetes manifests and policies are written in: embedded
    kubectl/       replaying a solution's shell commands (kubectl) on a scenario's state (`kubectl.replay`)
    scoring.py     aggregating verdicts over trials: pass@k, mean score and its standard error
"""
