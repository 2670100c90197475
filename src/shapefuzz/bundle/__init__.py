"""Compile here, run there: a bundle of generated cases compiled on a machine with `iree-compile`
for a target whose device is on another machine that has only the IREE runtime (a GPU box).

- `layout.py`: the folder's names, its manifest and each case's record, read back checked
  (NumPy and the standard library only: the runner's side imports it);
- `build.py`: `shapefuzz bundle`: draws as a campaign draws, verifies, compiles for the target,
  writes each case's module, inputs, NumPy reference and comparison rule;
- `runner.py`: `shapefuzz bundle-run`: runs each module with `iree-run-module` on the device,
  one sandboxed child per case with a timeout, judges with `export_checks.compare`; it needs
  NumPy and the runtime wheel alone (no compiler, no Hypothesis, no click);
- `judge.py`: `shapefuzz bundle-judge`: the results read back here, each failure re-checked on
  the reference lane (llvm-cpu), the device's wrong outputs judged again by the family itself;
- `place.py`: where a device-only wrong value breaks, found here (the llvm-cpu lane with the same
  variant flags, then the device lane's IR finished on llvm-cpu phase by phase);
- `ladder.py`: `bundle --from-corpus`: a corpus's entries with their ladders (the root alone, the
  chain without one context op), and the verdict per entry that `bundle-judge` prints and saves.

This file imports nothing: the runner's import path stays as light as the runner."""
