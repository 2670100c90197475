"""Compiler coverage: what a compile did (its passes and rewrite patterns), read from the
compiler's action log."""
