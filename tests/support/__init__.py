"""What the tests share: fake toolchains and campaigns, family and chain helpers, the hostile-input
promises. Importable as `support.<module>` (pytest's `pythonpath = ["tests"]`); never a test module."""
