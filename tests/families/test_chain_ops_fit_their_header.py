"""Every op of a drawn chain reads back from the case header: stacked collapses grow an operand past
the 8 dims a header's lists hold, and a pad drawn on it made a candidate no header could hold (the
draw failed as a family bug, "context: pad.lo: [...] is not ints", five of them set the family
aside). Such an op is skipped like one that does not fit."""

from __future__ import annotations

import json

from shapefuzz.case import Case
from shapefuzz.families import get_family
from shapefuzz.families.generate import draw_params

# a campaign's swarm epoch (seed 1, epoch 0) left these out; one_hot's draw stacked three collapses
LEFT_OUT = ('to_static', 'transpose', 'slice', 'concat', 'broadcast', 'dequantize', 'cast', 'relu', 'cast_out',
            'transpose_out', 'softmax')


def test_a_chain_past_eight_dims_draws_no_op_its_header_cannot_hold():
    params = draw_params("one_hot", 260548559805066, swarm=True, context_share=1.0, left_out=LEFT_OUT)
    assert params.context  # still a chain, of the ops that fit
    case = Case.make("one_hot", params)
    assert get_family("one_hot").load(json.loads(case.params_json)) == params  # the header's params read back
