"""The work after a campaign on saved entries: replaying the corpus, bisecting releases, regression ranges, and ONNX's node-test suite."""
