"""MkDocs hooks of dpbench's documentation (mkdocs.yml `hooks:`).

- The committed reference figures: every PNG under the repository's `results/reference/` is added to the site at
  the same path, so a page embeds one as `![...](/results/reference/fig1/fig1.png)`, the repository path, which
  GitHub shows too; with `validation.links.absolute_links: relative_to_docs` MkDocs checks each such link (a
  missing figure is a warning, so `mkdocs build --strict` fails) and makes it relative.  Nothing is copied
  into docs/.
- Missing docstrings: each `::: identifier` of a page (mkdocstrings) must have a docstring, and so must the
  public classes and functions it shows (a module's `__all__`, else the classes and functions it defines; the
  block's `members:` option if it lists them) and their classes' own public methods, but for scikit-learn's
  estimator methods (documented by scikit-learn's conventions and the class docstring).  mkdocstrings leaves an
  undocumented object out without a word; this hook warns, so strict mode fails.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import yaml
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.plugins.dpbench_docs")

REFERENCE = Path("results") / "reference"
SKLEARN_API = {"fit", "predict", "predict_proba", "predict_log_proba", "decision_function", "score", "transform",
               "fit_transform", "get_params", "set_params"}
_BLOCK = re.compile(r"^::: *(\S+)\n((?:[ \t]+.*\n?|\n)*)", re.M)
_packages: dict = {}


def on_files(files, config):
    root = Path(config.config_file_path).parent
    for png in sorted((root / REFERENCE).rglob("*.png")):
        files.append(File.generated(config, png.relative_to(root).as_posix(), abs_src_path=str(png)))
    return files


def on_page_markdown(markdown, page, config, files):
    root = Path(config.config_file_path).parent
    for m in _BLOCK.finditer(markdown):
        options = (yaml.safe_load(m.group(2)) or {}).get("options", {}) if m.group(2).strip() else {}
        for name in _undocumented(m.group(1), options.get("members"), root):
            log.warning(f"{page.file.src_uri}: `::: {m.group(1)}` shows {name}, which has no docstring")
    return markdown


def _undocumented(identifier: str, members, root: Path) -> list[str]:
    """The objects the block shows (the object, its members, their methods) that have no docstring."""
    import griffe

    package = identifier.split(".")[0]
    if package not in _packages:
        _packages[package] = griffe.load(package, search_paths=[str(root)])
    obj = _packages[package]
    for part in identifier.split(".")[1:]:
        obj = obj.members[part]
    shown = [obj]
    if obj.is_module and members is not False:
        if isinstance(members, list):
            names = members
        elif obj.exports is not None:
            names = [n for n in obj.exports if isinstance(n, str)]
        else:
            names = [n for n, m in obj.members.items() if not m.is_alias and not n.startswith("_")]
        shown += [obj.members[n] for n in names if n in obj.members]
    elif obj.is_class and isinstance(members, list):
        shown += [obj.members[n] for n in members if n in obj.members]
    missing = []
    for item in (s.final_target if s.is_alias else s for s in shown):
        if item.kind.value not in ("module", "class", "function"):
            continue  # constants: a comment beside them, not a docstring
        if not item.docstring:
            missing.append(item.path)
        if item.is_class and members is not False:
            missing += [m.path for n, m in item.members.items() if not m.is_alias and m.kind.value == "function"
                        and not n.startswith("_") and n not in SKLEARN_API and not m.docstring]
    return missing
