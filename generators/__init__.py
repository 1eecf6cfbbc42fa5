"""The built-in variant generators of itbench (`itbench generate --with NAME`).

Each module holds one generator, registered under the entry-point group `itbench.generators`
(pyproject.toml); the framework is `itbench_dsl.generate` and the API docs/generators.md.
"""
