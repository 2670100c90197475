"""Fake IREE toolchains for fault tests only: an `iree-compile` that crashes, hangs, eats memory
or prints garbage, beside the real iree-opt and iree-run-module. Tests that claim to test the
compiler use the real one."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

from shapefuzz.iree.toolchain import find_toolchain

FAKE_FLAGS = [
    "--iree-hal-target-device",
    "--iree-hal-local-target-device-backends",
    "--iree-llvmcpu-target-cpu",
    "--iree-vulkan-target",
    "--iree-cuda-target",
]

BEHAVIOURS = {
    # Each body runs for a real compile (not --version/--help-hidden); `out` is the -o path.
    "ok": "import shutil; shutil.copy(REAL_VMFB, out)",
    "segfault": "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
    "fatal": "sys.stderr.write('LLVM ERROR: Building op `arith.constant` but it isn\\'t known in this MLIRContext\\n'); sys.exit(1)",
    "hang": textwrap.dedent(
        """
        import subprocess, time
        child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])
        open(os.environ['FAKE_PIDFILE'], 'w').write(f'{os.getpid()} {child.pid}')
        time.sleep(600)
        """
    ),
    # a compile that never ends and, on SIGABRT, prints LLVM's stack dump as iree-compile does: the
    # top frame from FAKE_HANG_TOP (where in the loop it was stopped), the pass from FAKE_HANG_PASS
    # ("A|B": A on the first run, B on the second, ...)
    "hang-with-stack": textwrap.dedent(
        """
        import signal, time
        runs = os.environ['FAKE_PIDFILE'] + '.runs'
        run = len(open(runs).read()) if os.path.exists(runs) else 0
        open(runs, 'a').write('x')
        passes = os.environ['FAKE_HANG_PASS'].split('|')
        def dump(*_):
            frames = ['llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0',
                      'llvm::sys::RunSignalHandlers() Signals.cpp:0:0', 'SignalHandler(int, siginfo_t*, void*) Signals.cpp:0:0',
                      '(/lib/x86_64-linux-gnu/libc.so.6+0x3c050)', os.environ['FAKE_HANG_TOP'],
                      '(anonymous namespace)::InsertStridedSliceConstantFolder::matchAndRewrite(mlir::vector::InsertStridedSliceOp, mlir::PatternRewriter&) const VectorOps.cpp:0:0',
                      'mlir::PatternApplicator::matchAndRewrite(mlir::Operation*, mlir::PatternRewriter&) PatternApplicator.cpp:0:0',
                      '(anonymous namespace)::GreedyPatternRewriteDriver::processWorklist() GreedyPatternRewriteDriver.cpp:0:0',
                      '(anonymous namespace)::Canonicalizer::runOnOperation() Canonicalizer.cpp:0:0',
                      'mlir::detail::OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, mlir::AnalysisManager, bool, unsigned int) Pass.cpp:0:0',
                      passes[run % len(passes)] + '::runOnOperation() Pass.cpp:0:0',
                      'mlir::detail::OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, mlir::AnalysisManager, bool, unsigned int) Pass.cpp:0:0']
            sys.stderr.write('Please report issues to https://github.com/iree-org/iree/issues and include the crash backtrace.\\n'
                             'Stack dump:\\n0.\\tProgram arguments: iree-compile\\n')
            sys.stderr.write(''.join(f' #{i} 0x00007f5448c5{i:04x} {f}\\n' for i, f in enumerate(frames)))
            sys.stderr.flush()
            signal.signal(signal.SIGABRT, signal.SIG_DFL)
            os.abort()
        signal.signal(signal.SIGABRT, dump)
        open(os.environ['FAKE_PIDFILE'], 'w').write(str(os.getpid()))
        time.sleep(600)
        """
    ),
    # a compile that never ends and ignores SIGABRT: only the SIGKILL after it ends it
    "hang-ignoring-abort": textwrap.dedent(
        """
        import signal, time
        signal.signal(signal.SIGABRT, signal.SIG_IGN)
        open(os.environ['FAKE_PIDFILE'], 'w').write(str(os.getpid()))
        time.sleep(600)
        """
    ),
    "memory": "blocks = []\nwhile True: blocks.append(bytearray(64 << 20))",
    "garbage": "sys.stderr.buffer.write(os.urandom(3000)); sys.exit(3)",
    "garbage-output": "open(out, 'wb').write(os.urandom(4096))",
}


def make_fake_toolchain(folder: Path, behaviour: str, version: str = "3.13.0", flags: list[str] | None = None) -> Path:
    """A folder with a fake iree-compile of the given behaviour and the real iree-opt/iree-run-module."""
    real = find_toolchain(None)
    folder.mkdir(parents=True, exist_ok=True)
    help_text = "\n".join(f"  {flag}=<string>   - fake" for flag in (flags if flags is not None else FAKE_FLAGS))
    script = f"""#!{sys.executable}
import os, sys
argv = sys.argv[1:]
if '--version' in argv:
    print('IREE (https://iree.dev):\\n  IREE compiler version {version} @ fake\\n  LLVM version 0.0.0git')
    sys.exit(0)
if '--help-hidden' in argv or '--help' in argv:
    print({help_text!r})
    sys.exit(0)
if '-' in argv:  # the toolchain probe's trivial compile from stdin
    sys.exit(0)
out = argv[argv.index('-o') + 1] if '-o' in argv else os.devnull
REAL_VMFB = os.environ.get('FAKE_REAL_VMFB', '')
{BEHAVIOURS[behaviour]}
"""
    compile_path = folder / "iree-compile"
    compile_path.write_text(script)
    compile_path.chmod(0o755)
    for name, target in (("iree-opt", real.opt_bin), ("iree-run-module", real.run_bin)):
        link = folder / name
        if not link.exists():
            os.symlink(target, link)
    return folder


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"
