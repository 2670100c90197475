"""A campaign on a Ray cluster (`--cluster`): the head stays the campaign, nodes return values."""
