"""Verifying many drawn chain cases in a few `iree-opt` calls (tests and bench/verify_context.py):
each case's module with its functions renamed apart, concatenated into one module."""

from __future__ import annotations

import re
import subprocess

from shapefuzz.families import get_family
from shapefuzz.families.generate import draw_params
from shapefuzz.iree.toolchain import Toolchain


def chain_cases(family: str, draws: int, seed: int = 0, regime: str = "small") -> list:
    """The drawn cases of `draws` seeds that got a chain (every draw is offered one)."""
    out = []
    for s in range(seed, seed + draws):
        p = draw_params(family, s, regime=regime, swarm=s % 2 == 1, context_share=1.0)
        if p.context:
            out.append(p)
    return out


def renamed(text: str, k: int) -> str:
    return re.sub(r"@(main|root)\b", lambda m: f"@{m.group(1)}_{k}", text)


def verify(toolchain: Toolchain, texts: list[str], chunk: int = 200) -> list[tuple[int, str]]:
    """(index, first error line) of every text that does not verify, in few iree-opt calls."""
    bad: list[tuple[int, str]] = []

    def run(text: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(toolchain.opt_bin), "-"], input=text, capture_output=True, text=True, timeout=600)

    for start in range(0, len(texts), chunk):
        part = list(range(start, min(len(texts), start + chunk)))
        if run("\n".join(renamed(texts[i], i) for i in part)).returncode == 0:
            continue
        for i in part:  # find which
            r = run(texts[i])
            if r.returncode:
                bad.append((i, next((l for l in r.stderr.splitlines() if "error" in l), r.stderr[:200])))
    return bad


def family_texts(family: str, draws: int, seed: int = 0, regime: str = "small") -> tuple[list, list[str]]:
    fam = get_family(family)
    cases = chain_cases(family, draws, seed, regime)
    return cases, [fam.render(p) for p in cases]


def lower_torch(toolchain: Toolchain, texts: list[str], chunk: int = 100) -> list[tuple[int, str]]:
    """(index, first error line) of every torch-dialect text that does not lower to linalg
    (`iree-compile --iree-input-type=torch --compile-to=input`), in few calls."""
    bad: list[tuple[int, str]] = []

    def run(text: str) -> subprocess.CompletedProcess:
        argv = [str(toolchain.compile_bin), "-", "--iree-input-type=torch", "--compile-to=input", "-o", "/dev/null"]
        return subprocess.run(argv, input=text, capture_output=True, text=True, timeout=600)

    for start in range(0, len(texts), chunk):
        part = list(range(start, min(len(texts), start + chunk)))
        if run("\n".join(renamed(texts[i], i) for i in part)).returncode == 0:
            continue
        for i in part:
            r = run(texts[i])
            if r.returncode:
                bad.append((i, next((l for l in r.stderr.splitlines() if "error" in l), r.stderr[:200])))
    return bad


def torch_chains(family: str, draws: int, seed: int = 0, regime: str = "small") -> list:
    """Every chain drawn over `draws` seeds (share 1, swarm on odd seeds), spelled in torch where
    torch writes the family's case and the chain: many more than the strategy spells in torch."""
    from shapefuzz.families.frontends import linalg_params, spelled, spellings_for

    fam = get_family(family)
    torch = next(s for s in spellings_for(family) if s.frontend == "torch")
    out = []
    for s in range(seed, seed + draws):
        p = draw_params(family, s, regime=regime, swarm=s % 2 == 1, context_share=1.0)
        q = linalg_params(p.replace(context=()))
        if p.context and torch.expressible(q):
            t = spelled(q, torch).replace(context=p.context)
            if fam.is_valid(t):
                out.append(t)
    return out
