"""Backends: each turns the IR into one kind of output. They read only the IR."""
