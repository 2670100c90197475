"""The IREE toolchain: which compiler and runtime (the pinned wheels or a cached release), the lanes (backends) and their flags, what MLIR text declares, and the ONNX importer."""
