"""itbench: a language and compiler for ITBench scenarios."""

__version__ = "0.1.0"
