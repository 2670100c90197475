"""The attention family's parameters: softmax(scale * Q K^T + mask) V over batch dims [B] or [B, H],
Q [.., M, K1], K [.., K2, K1], V [.., K2, N], an optional additive mask [.., M, K2] (0 or -inf,
every row keeping at least one key), f16 or f32, batch and sequence lengths dynamic or static."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Dtype = Literal["f32", "f16"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
Form = Literal["attention", "decomposed"]  # iree_linalg_ext.attention | matmul, softmax, matmul in linalg
FORMS: tuple[Form, ...] = get_args(Form)
Mask = Literal["none", "random", "causal"]
MASKS: tuple[Mask, ...] = get_args(Mask)
SCALES = (1.0, 0.5, 0.25, 0.125)


@dataclass(frozen=True)
class Params(FamilyParams):
    dtype: Dtype
    batch: tuple[int, ...]  # [B] or [B, H]
    batch_dyn: tuple[bool, ...]
    m: int  # query length
    k2: int  # key / value length
    k1: int  # head dim of Q and K
    n: int  # head dim of V
    m_dyn: bool
    k2_dyn: bool
    scale: float
    mask: Mask = "none"
    form: Form = "attention"
    big: bool = False


def q_shape(p: Params) -> list[int]:
    return [*p.batch, p.m, p.k1]


def k_shape(p: Params) -> list[int]:
    return [*p.batch, p.k2, p.k1]


def v_shape(p: Params) -> list[int]:
    return [*p.batch, p.k2, p.n]


def mask_shape(p: Params) -> list[int]:
    return [*p.batch, p.m, p.k2]


def out_shape(p: Params) -> list[int]:
    return [*p.batch, p.m, p.n]
