"""Each chapter's Python notebook written into the built site: ``notebooks/<page>.ipynb`` with the
data it reads in ``notebooks/data/<model>/…`` (the offline zip holds that folder as it is), and for
the hosted site and the one-file chapters ``downloads/<page>-notebook.zip``: one chapter's notebook
with its data. What a notebook holds is generator/notebooks/'s; the names and the zip's fixed dates
are the downloads' (downloads.py), which link to these files."""

from __future__ import annotations

import zipfile
from pathlib import Path

from ..lessons.source import shown_path
from ..notebooks.build import Notebook, build_notebook, build_notebooks, data_source
from ..notebooks.run import NotebookFailed, run_notebooks
from ..render.context import Ctx
from ..store import TraceStore
from . import downloads

NOTEBOOKS_DIR = downloads.NOTEBOOKS_DIR  # inside the site, and so inside the offline zip
DATA_DIR = "data"  # beside the notebooks; the notebooks read data/<model>/<file>
BUNDLE_SUFFIX = downloads.NOTEBOOK_BUNDLE_SUFFIX  # downloads/<page>-notebook.zip: one notebook and its data


def notebook_name(page: str) -> str:
    """`attention.html` -> `attention.ipynb`; `part/ch.html` -> `part-ch.ipynb`."""
    return downloads.onefile_name(page).removesuffix(".html") + ".ipynb"


def bundle_name(page: str) -> str:
    return downloads.onefile_name(page).removesuffix(".html") + BUNDLE_SUFFIX


def _zip_write(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=downloads.ZIP_DATE)
    info.create_system = 3
    info.external_attr = downloads.ZIP_FILE_MODE << 16
    zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=downloads.ZIP_LEVEL)


def write_data(nb: Notebook, root: Path, traces_dir: Path) -> None:
    """The data files a notebook reads, into root/data/ (each once, however many notebooks read it)."""
    for name in nb.files:
        target = root / DATA_DIR / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data_source(name, traces_dir).read_bytes())


def write_notebooks(content_dir: Path, traces_dir: Path, site_dir: Path, bundles: bool = True) -> list[Notebook]:
    """notebooks/ (every notebook and the data they read) into site_dir, and with `bundles` each
    chapter's downloads/<page>-notebook.zip. Returns the notebooks written."""
    site_dir, traces_dir = Path(site_dir), Path(traces_dir)
    notebooks = build_notebooks(content_dir, traces_dir)
    root = site_dir / NOTEBOOKS_DIR
    for nb in notebooks:
        root.mkdir(parents=True, exist_ok=True)
        (root / notebook_name(nb.page)).write_text(nb.text, encoding="utf-8")
        write_data(nb, root, traces_dir)
    if bundles:
        dl = site_dir / downloads.DOWNLOADS_DIR
        for nb in notebooks:
            dl.mkdir(parents=True, exist_ok=True)
            folder = notebook_name(nb.page).removesuffix(".ipynb")
            tmp = dl / f".{bundle_name(nb.page)}.tmp"
            with zipfile.ZipFile(tmp, "w") as zf:
                _zip_write(zf, f"{folder}/{notebook_name(nb.page)}", nb.text.encode("utf-8"))
                for name in nb.files:
                    _zip_write(zf, f"{folder}/{DATA_DIR}/{name}", (root / DATA_DIR / name).read_bytes())
            tmp.replace(dl / bundle_name(nb.page))
    return notebooks


def sizes(site_dir: Path) -> list[str]:
    """One line per notebook for `make bench`: its bytes, its data's, its bundle's."""
    site_dir = Path(site_dir)
    out = []
    for p in sorted((site_dir / NOTEBOOKS_DIR).glob("*.ipynb")):
        bundle = site_dir / downloads.DOWNLOADS_DIR / (p.stem + BUNDLE_SUFFIX)
        size = f"{bundle.stat().st_size / 1e6:.2f} MB zipped with its data" if bundle.is_file() else "no bundle (--no-downloads)"
        out.append(f"notebook {p.name}: {p.stat().st_size / 1e3:.1f} kB, {size}")
    return out


def lesson_of(content_dir: Path, page: str) -> str:
    """The shown path of the lesson a page is built from (`attention.html` -> content/attention.md)."""
    return shown_path(Path(content_dir) / Path(page).with_suffix(".md"))


def run_written(notebooks: list[Notebook], content_dir: Path, site_dir: Path) -> None:
    """Run the notebooks write_notebooks wrote into site_dir (notebooks/, beside their data), as
    Run all does; the first that fails is raised (NotebookFailed, one line at the figure's line)."""
    failures = run_notebooks(notebooks, Path(site_dir) / NOTEBOOKS_DIR, {nb.page: lesson_of(content_dir, nb.page) for nb in notebooks})
    if failures:
        raise failures[0]


def check_notebooks(lessons: list[Path], content_dir: Path, traces_dir: Path, scratch: Path) -> list[NotebookFailed]:
    """`make check`'s run of the notebooks of these lessons (the ones it checked again), written
    with their data into `scratch`. One NotebookFailed per notebook that fails."""
    content_dir, traces_dir, root = Path(content_dir), Path(traces_dir), Path(scratch) / NOTEBOOKS_DIR
    written = []
    for md in lessons:
        page = md.relative_to(content_dir).with_suffix(".html").as_posix()
        nb = build_notebook(md, page, Ctx(store=TraceStore(traces_dir), page=str(md)))
        if nb is None:
            continue
        written.append(nb)
        write_data(nb, root, traces_dir)
    return run_notebooks(written, root, {nb.page: lesson_of(content_dir, nb.page) for nb in written}) if written else []
