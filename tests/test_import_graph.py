"""Dependencies point one way: data types -> rendering/execution -> oracle -> campaign/shrink ->
CLI (STYLE habit 9). A lower layer importing a higher one fails here."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "shapefuzz"

LAYERS = {
    "errors": 0, "model": 0, "case": 0,
    "sandbox": 1, "toolchain": 1, "backends": 1, "signature": 1, "mlirinfo": 1, "templates": 1,
    "execute": 2, "families": 2,
    "oracle": 3, "generate": 3, "checkfile": 3, "display": 3,
    "cli": 9, "__main__": 9,
}
DEFAULT_LAYER = 5  # campaign, shrink, corpus, replay, export...: above the oracle, below the CLI


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.startswith("shapefuzz.") else module
    if top.endswith("_cli"):  # a command group's click wrappers belong to the CLI layer
        return LAYERS["cli"]
    return LAYERS.get(top, DEFAULT_LAYER)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("shapefuzz"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("shapefuzz"))
    return found


def test_no_module_imports_a_higher_layer():
    violations = []
    for path in PACKAGE.rglob("*.py"):
        module = "shapefuzz." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        own = _layer(module)
        for imported in _imports(path):
            if imported == "shapefuzz":
                continue
            if _layer(imported) > own:
                violations.append(f"{module} (layer {own}) imports {imported} (layer {_layer(imported)})")
    assert not violations, "\n".join(violations)
