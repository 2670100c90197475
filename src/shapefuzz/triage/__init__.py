"""From a failure's raw output to a bug: which pass failed (`failing_pass`), what makes two
failures one bug (`identity`), where it lives (`component`), how bad it is (`severity`), whether it
is our own environment rather than the compiler (`environment`), its meta.json record (`record`) and
its issue's parts (`issue`), and a campaign bucket's verdict: compiler bug, target limit, suspected
driver or ours (`verdict`). Reading text and values only: since when it fails is `regression.py`,
beside `bisect`, which it drives."""
