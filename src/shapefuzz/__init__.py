"""shapefuzz: a fuzzer for shape and layout bugs in the IREE ML compiler."""

__version__ = "0.1.0"
