"""From a failure's raw output to a bug: which pass failed (`failing_pass`), what makes two
failures one bug (`identity`), where it lives (`component`), how bad it is (`severity`), whether it
is our own environment rather than the compiler (`environment`) and since when it fails
(`regression`, which drives the bisect machinery and sits above the rest)."""
