"""`python -m generator.bench.notebook_sizes` (make bench): the size of every chapter's notebook, of
the data it reads, and of its download (downloads/<page>-notebook.zip), built from content/ and
traces/ into a temporary folder (generator/site/notebook_files.py), and the notebooks folder's share of
the offline zip."""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import zipfile
from pathlib import Path

from ..site import downloads, notebook_files as notebooks


def notebook_sizes(content_dir: Path, traces_dir: Path) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="bench-notebooks-") as tmp:
        site = Path(tmp)
        written = notebooks.write_notebooks(content_dir, traces_dir, site)
        lines = []
        for nb in written:
            data = sum((site / notebooks.NOTEBOOKS_DIR / notebooks.DATA_DIR / f).stat().st_size for f in nb.files)
            bundle = (site / downloads.DOWNLOADS_DIR / notebooks.bundle_name(nb.page)).stat().st_size
            lines.append(f"notebook {notebooks.notebook_name(nb.page)}: {len(nb.text.encode('utf-8')) / 1e3:.1f} kB, reads {len(nb.files)} files "
                         f"({data / 1e6:.2f} MB); its download {bundle / 1e6:.2f} MB")
        folder = site / notebooks.NOTEBOOKS_DIR
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:  # as the offline zip compresses it
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    zf.writestr(p.relative_to(site).as_posix(), p.read_bytes(), compress_type=zipfile.ZIP_DEFLATED,
                                compresslevel=downloads.ZIP_LEVEL)
        raw = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        lines.append(f"notebooks/ in the offline zip: {raw / 1e6:.2f} MB, {len(buf.getvalue()) / 1e6:.2f} MB compressed")
        return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--content", default="content")
    p.add_argument("--traces-dir", default="traces")
    args = p.parse_args(argv)
    for line in notebook_sizes(Path(args.content), Path(args.traces_dir)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
