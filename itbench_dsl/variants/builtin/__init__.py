"""The built-in variant generators of itbench (`itbench generate --with NAME`): one module each, listed
here. Other packages add generators under the entry-point group `itbench.generators`; the framework and
its API are `itbench_dsl.variants` (docs/generators.md).
"""

BUILTINS = {
    "retarget": "itbench_dsl.variants.builtin.retarget:RetargetGenerator",
    "sweep": "itbench_dsl.variants.builtin.sweep:SweepGenerator",
    "sample": "itbench_dsl.variants.builtin.sample:SampleGenerator",
    "compose": "itbench_dsl.variants.builtin.compose:ComposeGenerator",
    "noise": "itbench_dsl.variants.builtin.noise:NoiseGenerator",
    "anonymize": "itbench_dsl.variants.builtin.anonymize:AnonymizeGenerator",
    "control": "itbench_dsl.variants.builtin.control:ControlGenerator",
}
