"""Real commands run as subprocesses into tmp folders (traces, site builds, a whole course copy), the
injection page, and folder fingerprints, for the catalogue, crash-safety, determinism and injection tests.

`python -m generator traces` needs the trained tiny checkpoint (generator/tiny_model/). Where it
is missing, :func:`traces_command` runs the same command line through tests/random_tiny_cli.py,
which swaps in a randomly initialised model of the tiny shape and otherwise runs generator.cli
unchanged."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from generator.registry import MODELS

REPO = Path(__file__).resolve().parents[1]
TINY_DIR = REPO / "generator" / "tiny_model"
HAVE_TINY = (TINY_DIR / "model.safetensors").is_file() and (TINY_DIR / "tokenizer.json").is_file()
RANDOM_CLI = Path(__file__).resolve().parent / "random_tiny_cli.py"
# The course's own models: every build of the course traces each of them (chapter 7 is tiny-rope's)
TRAINED = tuple(name for name, spec in MODELS.items() if spec.trained_here)


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e.update(
        PYTHONHASHSEED="0",
        NO_MKDOCS_2_WARNING="1",
        TQDM_DISABLE="1",
        HF_HUB_OFFLINE="1",
        SOURCE_DATE_EPOCH="1700000000",
        OMP_NUM_THREADS="1",
    )
    e.update(extra)
    return e


def traces_command(*args: str, real: bool | None = None) -> list[str]:
    """`python -m generator traces ARGS` (with the random tiny stand-in when the trained one is
    missing, or when real=False)."""
    use_real = HAVE_TINY if real is None else real
    head = [sys.executable, "-m", "generator"] if use_real else [sys.executable, str(RANDOM_CLI)]
    return head + ["traces", "--models", ",".join(TRAINED), *args]


def run(cmd: list[str], cwd: Path = REPO, timeout: float = 300, **env_extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env(**env_extra), capture_output=True, text=True, timeout=timeout)


def tree_digest(root: Path, skip=lambda rel: False) -> dict[str, str]:
    """{relative path: sha256} of every file under root (empty when root does not exist)."""
    root = Path(root)
    if not root.exists():
        return {}
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            if not skip(rel):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def tree_stat(root: Path) -> dict[str, tuple[int, int]]:
    """{relative path: (mtime_ns, size)} of every file and folder under root."""
    root = Path(root)
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(root.rglob("*"))}


# ---------------------------------------------------------------- the whole course, built in a tmp folder

# Sentences that try to break out of every context a token or sentence reaches: HTML, <script>,
# attributes, JSON, Plotly's pseudo-HTML, Jinja/our `{{ }}`, YAML, right-to-left overrides,
# emoji and combining characters. Any script they manage to run sets window.__pwned or opens a
# dialog (alert), which the browser tests watch for.
INJECTIONS = [
    'Lily said </script><img src=x onerror=alert(1)><img src=y onerror="window.__pwned=1"> to Ben.',
    "Tom's \\ back\\slash {{ lily.layer }} <b>bold</b> &amp; \"quoted\" <script>window.__pwned=2</script>",
    "Sue \u202eevil\u202c and \U0001F431 cafe\u0301 ran; she said '`x`' {% raw %} ${1+1} <!-- -->",
]
INJECTION_PAGE_NAME = "injection.md"


def yaml_str(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def injection_page() -> str:
    a, b, c = (yaml_str(s) for s in INJECTIONS)
    return f"""# Hostile sentences

Every token below must show as text: nothing here may run.

```attention
model: tiny
sentence: {a}
layer: 1
head: 1
id: inj
```

The sentence was: {{{{ inj.sentence }}}}. Its third token is {{{{ inj.token(#3) }}}}; it looks most at
{{{{ inj.argmax(#4) }}}}, and its top three are {{{{ inj.top(#5, 3) }}}}.

```compare
model: tiny
sentences: [{b}, {c}]
layer: 2
head: 1
id: pair
```

```predictions
model: tiny
sentences: [{c}]
```
"""


def course_mkdocs_yml(repo_yml: str, extra_nav: str) -> str:
    """The repository's mkdocs.yml for a copy of the course in another folder: overrides by
    absolute path, plus one page in the nav."""
    import re

    text = re.sub(r"(?m)^(\s*custom_dir:\s*)overrides\s*$", lambda m: f"{m.group(1)}{REPO / 'overrides'}", repo_yml)
    text = re.sub(r"(?m)^(  - Glossary: glossary\.md)$", lambda m: f"{m.group(1)}\n  - {extra_nav}", text)
    return text


def standin_env() -> dict[str, str]:
    return {} if HAVE_TINY else {"COURSE_ALLOW_STANDIN": "1"}


def build_course(root: Path) -> Path:
    """The course (the repository's content/ plus the injection page) traced with the tiny model
    and built, in `root`, by the real commands in subprocesses:

        python -m generator traces --models tiny --traces-dir root/traces --content root/content
        python -m generator site -f root/mkdocs.yml -d root/build/site   (cwd root)

    Returns root. root/build/site, root/build/downloads, root/traces are the results."""
    import shutil

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "content", root / "content", ignore=shutil.ignore_patterns("generated"))
    (root / "content" / INJECTION_PAGE_NAME).write_text(injection_page(), encoding="utf-8")
    yml = course_mkdocs_yml((REPO / "mkdocs.yml").read_text(encoding="utf-8"), f"Injection test: {INJECTION_PAGE_NAME}")
    (root / "mkdocs.yml").write_text(yml, encoding="utf-8")
    for model in TRAINED:
        committed = REPO / "traces" / model / "circuits.json"
        if HAVE_TINY and committed.is_file():  # its robust test is a minute of CPU; test_robust.py checks how it is made
            (root / "traces" / model).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(committed, root / "traces" / model / "circuits.json")
    t = run(traces_command("--traces-dir", str(root / "traces"), "--content", str(root / "content")), cwd=root, timeout=600)
    if t.returncode != 0:
        raise AssertionError(f"traces failed ({t.returncode}):\n{t.stdout}\n{t.stderr}")
    s = run([sys.executable, "-m", "generator", "site", "-f", "mkdocs.yml", "-d", str(root / "build" / "site")],
            cwd=root, timeout=600, **standin_env())
    if s.returncode != 0:
        raise AssertionError(f"site failed ({s.returncode}):\n{s.stdout}\n{s.stderr}")
    (root / "build" / "site.log").write_text(s.stderr, encoding="utf-8")
    return root


_COURSE: dict[str, Path] = {}


REUSE_ENV = "COURSE_TEST_BUILD"
# The folder every pytest-xdist worker of this run shares (tests/conftest.py sets it); None outside
# a run of several workers.
RUN_DIR: Path | None = None


@contextmanager
def locked(path: Path):
    """Holds an exclusive lock on `path` (fcntl: released by the kernel if the holder dies)."""
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def built_once(run_dir: Path, name: str, build) -> Path:
    """run_dir/name, made by `build(folder)` once for the whole run by whichever worker asks first,
    under a file lock; the others wait for it. A build that failed is recorded, so later callers
    fail at once with its message instead of building again."""
    base = Path(run_dir) / name
    done, failed = base / ".done", base / ".failed"
    with locked(Path(run_dir) / (name + ".lock")):
        if failed.is_file():
            raise AssertionError(f"{name} failed to build (for another test of this run):\n{failed.read_text(encoding='utf-8')}")
        if not done.is_file():
            shutil.rmtree(base, ignore_errors=True)  # a build cut off before it finished
            base.mkdir(parents=True)
            try:
                build(base)
            except BaseException as e:
                failed.write_text(f"{type(e).__name__}: {e}", encoding="utf-8")
                raise
            done.touch()
    return base


def shared_course() -> Path:
    """One build of the course per test run: every test module of a worker shares it, and under
    pytest-xdist every worker (built_once in RUN_DIR). Without xdist, in a tmp folder removed at
    exit. For working on the tests: COURSE_TEST_BUILD=/some/dir builds there once and reuses it in
    later runs (delete the folder to rebuild)."""
    reuse = os.environ.get(REUSE_ENV)
    if reuse and "root" not in _COURSE:
        root = Path(reuse)
        _COURSE["root"] = root if (root / "build" / "site" / "index.html").is_file() else build_course(root)
    if "root" not in _COURSE and RUN_DIR is not None:
        _COURSE["root"] = built_once(RUN_DIR, "course-build", lambda base: build_course(base / "a")) / "a"
    if "root" not in _COURSE:
        import atexit
        import shutil
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="course-build-"))
        atexit.register(shutil.rmtree, tmp, True)
        _COURSE["root"] = build_course(tmp / "a")
    return _COURSE["root"]


def settle(page, timeout: float = 60000) -> None:
    """Wait until a page has loaded and drawn its plots. course.js draws a plot when it scrolls
    into view, so each visible attention/compare plot is scrolled to; plots inside closed
    <details> wait to be opened and are skipped. Ends scrolled back to the top, once the header's
    title has faded back from the page's name to the site's (a CSS transition: caught halfway, as
    under load, its text is half transparent and fails axe's contrast check)."""
    page.wait_for_load_state("load")
    plots = page.locator(".course-fig[data-kind=attention] .course-plot:visible, .course-fig[data-kind=compare] .course-plot:visible")
    for i in range(plots.count()):
        plots.nth(i).scroll_into_view_if_needed()
        plots.nth(i).locator(".main-svg").first.wait_for(state="attached", timeout=timeout)
    back_to_top(page, timeout)


def back_to_top(page, timeout: float = 60000) -> None:
    """Scroll to the top and wait until the header's title has faded back (settle's last step)."""
    page.evaluate("window.scrollTo(0, 0)")
    page.evaluate(TWO_FRAMES)  # the scroll's own handlers start theirs
    page.wait_for_function(FINITE_ANIMATIONS_DONE, timeout=timeout)


# every running CSS transition or animation that ends has ended (a looping one never would). A
# predicate for wait_for_function, which polls it every frame: it must answer at once (a Promise it
# returned would count as true), so the frames to wait first are a page.evaluate of TWO_FRAMES.
FINITE_ANIMATIONS_DONE = """() => document.getAnimations()
    .every(a => a.playState !== 'running' || a.effect.getComputedTiming().iterations === Infinity)"""
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


# Every timer and idle callback a page has asked for and not yet had run or cancelled, and every
# script it added and has not yet loaded, counted from before its first script (Watched adds this to every context): what "the page's work is
# done" means to quiet() below, whatever the machine's speed.
PENDING_WORK_INIT = """(() => {
  const pending = new Set();
  const wrap = (set, clear, key) => {
    const setIt = window[set], clearIt = window[clear];
    window[set] = function (fn, ...rest) {
      const id = setIt.call(window, function (...a) { pending.delete(key + id); return typeof fn === 'function' ? fn.apply(this, a) : undefined; }, ...rest);
      pending.add(key + id);
      return id;
    };
    window[clear] = function (id) { pending.delete(key + id); return clearIt.call(window, id); };
  };
  wrap('setTimeout', 'clearTimeout', 't');
  if (window.requestIdleCallback) wrap('requestIdleCallback', 'cancelIdleCallback', 'i');
  // a script element added with a src (a trace's part) until it has loaded or failed
  let scripts = 0;
  new MutationObserver(records => records.forEach(r => r.addedNodes.forEach(el => {
    if (el.nodeName !== 'SCRIPT' || !el.src || el.__coursePending) return;
    const key = 's' + (++scripts);
    el.__coursePending = true;
    pending.add(key);
    const done = () => pending.delete(key);
    el.addEventListener('load', done, { once: true });
    el.addEventListener('error', done, { once: true });
  }))).observe(document, { childList: true, subtree: true });
  Object.defineProperty(window, '__coursePendingWork', { get: () => pending.size });
})();"""

# no timer, idle callback or added script pending and no finite animation running (a predicate
# that answers at once, as FINITE_ANIMATIONS_DONE)
QUIET_JS = """() => (window.__coursePendingWork === undefined || window.__coursePendingWork === 0) && document.getAnimations()
    .every(a => a.playState !== 'running' || a.effect.getComputedTiming().iterations === Infinity)"""


def quiet(page, timeout: float = 60000) -> None:
    """Wait until the page has done what the last action set off: its timers, idle callbacks,
    added scripts and CSS transitions have all run (PENDING_WORK_INIT), two frames after it. The wait for a redraw
    after a new width, a scroll or a key, instead of a fixed time."""
    page.evaluate(TWO_FRAMES)  # what the last action set off (a resize, a scroll, a key) has begun
    page.wait_for_function(QUIET_JS, timeout=timeout)
