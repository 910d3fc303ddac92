"""Write the student copy and the teacher copy of each teaching lab, and an HTML preview of each.

Each lab has one source, ``notebooks/N_name.ipynb``; the tags of its cells decide the copies:

* ``solution`` — the teacher's answer to a prediction, a comparison or an exercise: teacher copy only;
* ``student`` — the empty cell where the student writes that answer: student copy only;
* ``check`` — the lab's own check of its results (asserts): teacher copy only, which the tests run.

Usage (from the repository)::

    python notebooks/make_copies.py                 # every lab, into ./lab-copies
    python notebooks/make_copies.py --out DIR 3 4   # labs 3 and 4 only
    python notebooks/make_copies.py --execute       # run each copy first, so the previews show the results
    python notebooks/make_copies.py --force         # replace copies that differ from the ones made now

A copy already in the folder that differs from the one made now (a copy someone edited) is kept and the run
stopped before it writes anything, unless ``--force``; with ``--execute`` every copy there counts as differing.

The previews use ``jupyter nbconvert``'s HTML exporter where it is installed, else a plain page of the
cells and their text and image outputs.
"""

from __future__ import annotations

import argparse
import html
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).parent
COPIES = {"student": "solution", "teacher": "student"}  # each copy leaves out the cells of this tag
TEACHER_ONLY = "check"


def labs(numbers: list[str] | None = None) -> list[Path]:
    """The sources of the labs, in order; only those whose number is in ``numbers`` when given."""
    found = sorted(HERE.glob("*.ipynb"), key=lambda p: int(p.name.split("_", 1)[0]))
    return [p for p in found if not numbers or p.name.split("_", 1)[0] in numbers]


def copy(notebook: nbformat.NotebookNode, which: str) -> nbformat.NotebookNode:
    """The ``which`` ("student" or "teacher") copy of a lab's source: the cells of the other copy's tags left out."""
    left_out = {COPIES[which]} | ({TEACHER_ONLY} if which == "student" else set())
    kept = nbformat.from_dict(notebook)
    kept.cells = [c for c in kept.cells if not left_out & set(c.get("metadata", {}).get("tags", ()))]
    return kept


def preview(notebook: nbformat.NotebookNode) -> str:
    """The notebook as one HTML page: nbconvert's where installed, else the cells as text with their outputs."""
    try:
        from nbconvert import HTMLExporter
    except ImportError:
        return _plain_html(notebook)
    return HTMLExporter().from_notebook_node(notebook)[0]


def _plain_html(notebook: nbformat.NotebookNode) -> str:
    """A page without nbconvert: markdown and code as preformatted text, outputs' text and PNG images."""
    title = next((c.source.splitlines()[0].lstrip("# ") for c in notebook.cells if c.cell_type == "markdown"), "lab")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title><style>"
             "body{max-width:60em;margin:auto;font-family:sans-serif} pre{white-space:pre-wrap}"
             ".code{background:#f4f4f4;padding:.5em} .out{border-left:3px solid #ccc;padding-left:.5em}"
             ".student{background:#fff8dc} .solution{background:#e8f5e9}</style></head><body>"]
    for cell in notebook.cells:
        tags = " ".join(cell.get("metadata", {}).get("tags", ()))
        kind = "code" if cell.cell_type == "code" else "markdown"
        parts.append(f"<pre class='{kind} {tags}'>{html.escape(cell.source)}</pre>")
        for output in cell.get("outputs", ()):
            data = output.get("data", {})
            if "image/png" in data:
                parts.append(f"<img alt='plot' src='data:image/png;base64,{data['image/png']}'>")
            text = output.get("text") or data.get("text/plain") or "".join(output.get("traceback", ()))
            if text and "image/png" not in data:
                parts.append(f"<pre class='out'>{html.escape(text)}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def execute(notebook: nbformat.NotebookNode, where: Path, timeout: int = 900) -> nbformat.NotebookNode:
    """Run ``notebook`` from top to bottom in the directory ``where`` (as a student would, in a folder of their own)."""
    from nbclient import NotebookClient

    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(where)}}).execute()
    return notebook


def write(source: Path, out: Path, *, run: bool = False) -> list[Path]:
    """Write ``source``'s student and teacher copies and their previews under ``out``; return the paths written."""
    notebook = nbformat.read(source, as_version=4)
    written = []
    for which in COPIES:
        folder = out / which
        folder.mkdir(parents=True, exist_ok=True)
        made = copy(notebook, which)
        if run:
            work = folder / f"{source.stem}-work"
            work.mkdir(exist_ok=True)
            execute(made, work)
        path = folder / source.name
        path.write_text(_text(made), encoding="utf-8")
        page = path.with_suffix(".html")
        page.write_text(preview(made), encoding="utf-8")
        written += [path, page]
    return written


def _text(notebook: nbformat.NotebookNode) -> str:
    """A notebook's file, as nbformat.write makes it (ending in a newline)."""
    text = nbformat.writes(notebook)
    return text if text.endswith("\n") else text + "\n"


def _differing(sources: list[Path], out: Path, run: bool) -> list[Path]:
    """The copies already under ``out`` that differ from the ones made now (every one there when they are ``run``)."""
    found = []
    for source in sources:
        notebook = nbformat.read(source, as_version=4)
        for which in COPIES:
            path = out / which / source.name
            if path.exists() and (run or path.read_text(encoding="utf-8") != _text(copy(notebook, which))):
                found.append(path)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("labs", nargs="*", metavar="N", help="lab numbers (default: every lab)")
    parser.add_argument("--out", type=Path, default=Path("lab-copies"), help="folder to write into (default lab-copies)")
    parser.add_argument("--execute", action="store_true", help="run each copy before writing it")
    parser.add_argument("--force", action="store_true", help="replace copies in --out that differ from the ones made now")
    args = parser.parse_args(argv)
    known = [p.name.split("_", 1)[0] for p in labs()]
    if unknown := [n for n in args.labs if n not in known]:
        parser.error(f"no lab {', '.join(unknown)}: the labs are {', '.join(known)}")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: is a file, not a folder")
    if not args.force and (edited := _differing(labs(args.labs), args.out, args.execute)):
        more = f", as do {len(edited) - 1} more" if len(edited) > 1 else ""
        parser.error(f"{edited[0]} differs from the copy made now (edited?){more}: nothing written; --force replaces it")
    for source in labs(args.labs):
        for path in write(source, args.out, run=args.execute):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
