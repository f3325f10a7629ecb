""".github/workflows/pages.yml cannot run here, so these tests check it and everything it calls:

- GitHub's workflow schema, as check-jsonschema ships it (`--builtin-schema vendor.github-workflows`);
- `zizmor --offline`: no finding of medium severity or worse;
- structure: every `uses:` pinned to a 40-hex commit with a version comment, least-privilege
  permissions, the make targets the README documents (`make traces`, `make site STRICT=1`,
  `make test`) in that order and present in the Makefile, the Hugging Face cache keyed on the
  pinned GPT-2 revision, and the Pages / artifact wiring.

Every checker is also run on a deliberately broken copy in tmp_path, which it must reject."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOW = REPO / ".github" / "workflows" / "pages.yml"
README = REPO / "docs" / "hosting.md"  # the hosting guide documents the commands the workflow runs
MAKEFILE = REPO / "Makefile"
# generator/model/load.py pins GPT-2's revision; the constant itself now lives in the torch-free
# generator/registry.py, which model/load.py imports it from. Either file may define it.
MODELS = REPO / "generator" / "model" / "load.py"
REVISION_SOURCES = [REPO / "generator" / "registry.py", MODELS]

# The README's commands, in the order the workflow must run them.
MAKE_COMMANDS = ["make traces", "make site STRICT=1", "make test"]
SHA_PIN = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")
VERSION_COMMENT = re.compile(r"#\s*v\d+(\.\d+)*\s*$")
PERMISSION_LEVELS = {"read", "write", "none"}
# The only write scopes any job may hold, and only a job that deploys to Pages.
DEPLOY_WRITES = {"pages", "id-token"}
# The only read scopes a job may hold; pages: read only where actions/configure-pages runs.
READS = {"contents", "pages"}
BAD_SEVERITIES = {"medium", "high"}


def tool(name: str) -> str:
    """A console script of the test extra, from this interpreter's environment (or PATH)."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]' (make test does)"
    return found


def load(path: Path) -> dict:
    wf = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(wf, dict), f"{path}: not a YAML mapping"
    # YAML 1.1 (PyYAML) reads the key `on` as True.
    if True in wf and "on" not in wf:
        wf["on"] = wf.pop(True)
    return wf


def steps(wf: dict):
    """(job id, step) for every step of every job."""
    for job_id, job in (wf.get("jobs") or {}).items():
        for step in job.get("steps") or []:
            yield job_id, step


# ---------------------------------------------------------------------------- checkers
# Each returns a list of problems (empty = fine), so the same code judges the real workflow and
# the broken copies.


def schema_problems(path: Path) -> list[str]:
    r = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)],
                       capture_output=True, text=True, timeout=120)
    return [] if r.returncode == 0 else [f"check-jsonschema ({r.returncode}): {r.stdout}{r.stderr}"]


def zizmor_findings(path: Path) -> list[dict]:
    """zizmor --offline's findings (regular persona), as parsed from its JSON output."""
    r = subprocess.run([tool("zizmor"), "--offline", "--format", "json", "--no-progress", str(path)],
                       capture_output=True, text=True, timeout=120, cwd=path.parent)
    # Exit codes: 0 = no finding, 10-14 = findings (by worst severity); anything else failed.
    assert r.returncode == 0 or 10 <= r.returncode <= 14, f"zizmor failed ({r.returncode}):\n{r.stderr}"
    return json.loads(r.stdout or "[]")


def zizmor_problems(path: Path) -> list[str]:
    return [f"{f['ident']} ({f['determinations']['severity']}): {f['desc']}"
            for f in zizmor_findings(path) if f["determinations"]["severity"].lower() in BAD_SEVERITIES]


def pin_problems(path: Path) -> list[str]:
    """Every `uses:` is owner/repo@<40-hex commit> with a `# vX.Y.Z` comment on its line."""
    problems = []
    wf = load(path)
    uses = [(job_id, step["uses"]) for job_id, step in steps(wf) if "uses" in step]
    uses += [(job_id, job["uses"]) for job_id, job in (wf.get("jobs") or {}).items() if "uses" in job]
    if not uses:
        problems.append("no `uses:` at all")
    for job_id, ref in uses:
        if not SHA_PIN.match(str(ref)):
            problems.append(f"{job_id}: {ref} is not pinned to a full commit SHA")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = re.match(r"^\s*(?:-\s*)?uses:\s*(\S+)(.*)$", line)
        if m and not VERSION_COMMENT.search(m.group(2)):
            problems.append(f"line {n}: `uses: {m.group(1)}` has no `# vX.Y.Z` comment")
    return problems


def _writes(perms: dict) -> set[str]:
    return {scope for scope, level in perms.items() if level == "write"}


def permission_problems(path: Path) -> list[str]:
    """Top level: exactly `contents: read`. A job may write only pages/id-token, and only if it
    deploys to Pages; it may read only contents, and pages where it runs actions/configure-pages;
    no `write-all` / `read-all` anywhere."""
    wf = load(path)
    problems = []
    top = wf.get("permissions")
    if top != {"contents": "read"}:
        problems.append(f"top-level permissions are {top!r}, not {{contents: read}}")
    for job_id, job in (wf.get("jobs") or {}).items():
        perms = job.get("permissions")
        if perms is None:
            continue
        if not isinstance(perms, dict):
            problems.append(f"{job_id}: permissions {perms!r} (name each scope)")
            continue
        for scope, level in perms.items():
            if level not in PERMISSION_LEVELS:
                problems.append(f"{job_id}: {scope}: {level!r}")
        writes = _writes(perms)
        reads = {scope for scope, level in perms.items() if level == "read"}
        uses = [str(s.get("uses", "")) for s in job.get("steps") or []]
        deploys = any(u.startswith("actions/deploy-pages@") for u in uses)
        configures = any(u.startswith("actions/configure-pages@") for u in uses)
        if reads - READS:
            problems.append(f"{job_id}: reads {sorted(reads - READS)}")
        if "pages" in reads and not configures:
            problems.append(f"{job_id}: reads pages but does not run actions/configure-pages")
        if writes - DEPLOY_WRITES:
            problems.append(f"{job_id}: writes {sorted(writes - DEPLOY_WRITES)}")
        if writes and not deploys:
            problems.append(f"{job_id}: writes {sorted(writes)} but does not deploy to Pages")
    return problems


def make_targets(makefile: Path) -> set[str]:
    return set(re.findall(r"(?m)^([A-Za-z][A-Za-z0-9_-]*)\s*:(?!=)", makefile.read_text(encoding="utf-8")))


def make_problems(path: Path, readme: Path = README, makefile: Path = MAKEFILE) -> list[str]:
    """The workflow runs exactly the README's `make traces`, `make site STRICT=1`, `make test`, in that
    order, each a documented command and an existing Makefile target (STRICT read by the site recipe)."""
    wf = load(path)
    problems = []
    called = []
    for _, step in steps(wf):
        for line in str(step.get("run", "")).splitlines():
            line = line.strip()
            if re.match(r"^make(\s|$)", line):
                called.append(line)
    if called != MAKE_COMMANDS:
        problems.append(f"the workflow runs {called}, not {MAKE_COMMANDS}")
    readme_text = readme.read_text(encoding="utf-8")
    targets = make_targets(makefile)
    for command in called:
        if command not in readme_text:
            problems.append(f"`{command}` is not a command the README documents")
        words = command.split()[1:]
        for target in [w for w in words if "=" not in w]:
            if target not in targets:
                problems.append(f"`{command}`: the Makefile has no target `{target}`")
        for var in [w.split("=")[0] for w in words if "=" in w]:
            if not re.search(rf"\$\({var}\)", makefile.read_text(encoding="utf-8")):
                problems.append(f"`{command}`: the Makefile never reads {var}")
    return problems


def pinned_gpt2_revision(*sources: Path) -> str:
    """GPT2_REVISION = "<40 hex>" from the first source that defines it."""
    for source in sources or REVISION_SOURCES:
        if source.is_file():
            m = re.search(r'(?m)^GPT2_REVISION\s*=\s*"([0-9a-f]{40})"', source.read_text(encoding="utf-8"))
            if m:
                return m.group(1)
    raise AssertionError(f"no GPT2_REVISION = \"<40 hex>\" in {[str(s) for s in sources or REVISION_SOURCES]}")


def wiring_problems(path: Path, models: Path | None = None) -> list[str]:
    """Triggers, concurrency, checkout credentials, the cache, the artifacts and the Pages jobs."""
    wf = load(path)
    text = path.read_text(encoding="utf-8")
    problems = []
    on = wf.get("on") or {}
    if not isinstance(on, dict) or "workflow_dispatch" not in on or (on.get("push") or {}).get("branches") != ["main"]:
        problems.append(f"triggers are {on!r}: want push to main and workflow_dispatch")
    if not (wf.get("concurrency") or {}).get("group"):
        problems.append("no concurrency group")
    if "secrets." in text:
        problems.append("the workflow uses secrets")
    all_steps = list(steps(wf))

    def using(action: str):
        return [(j, s) for j, s in all_steps if str(s.get("uses", "")).startswith(action + "@")]

    checkouts = using("actions/checkout")
    if not checkouts:
        problems.append("no actions/checkout")
    for job_id, s in checkouts:
        if (s.get("with") or {}).get("persist-credentials") is not False:
            problems.append(f"{job_id}: checkout without persist-credentials: false")
    revision = pinned_gpt2_revision(*([models] if models else []))
    caches = using("actions/cache")
    if not any(revision in str((s.get("with") or {}).get("key", "")) for _, s in caches):
        problems.append(f"no actions/cache keyed on the pinned GPT-2 revision {revision}")
    for job_id, s in caches:
        hf_home = ((wf["jobs"][job_id].get("env") or {}).get("HF_HOME"))
        if not hf_home or str((s.get("with") or {}).get("path", "")).strip() != hf_home:
            problems.append(f"{job_id}: the cache path is not the job's HF_HOME ({hf_home!r})")
    # make site gets the Pages URL (mkdocs.yml: site_url: !ENV COURSE_SITE_URL) from configure-pages
    configure = using("actions/configure-pages")
    site_steps = [(j, s) for j, s in all_steps if "make site" in str(s.get("run", ""))]
    if not configure or not configure[0][1].get("id"):
        problems.append("no actions/configure-pages step with an id (its base_url is the site_url)")
    elif site_steps:
        want = f"${{{{ steps.{configure[0][1]['id']}.outputs.base_url }}}}"
        got = (site_steps[0][1].get("env") or {}).get("COURSE_SITE_URL")
        if got != want or site_steps[0][0] != configure[0][0]:
            problems.append(f"make site runs with COURSE_SITE_URL={got!r}, not {want} from the same job")
    if not re.search(r"(?m)^site_url:\s*!ENV\s*\[\s*COURSE_SITE_URL\b", (REPO / "mkdocs.yml").read_text(encoding="utf-8")):
        problems.append("mkdocs.yml does not read site_url from COURSE_SITE_URL")
    uploaded = {str((s.get("with") or {}).get("path", "")).rstrip("/") for _, s in using("actions/upload-artifact")}
    for want in ("traces/gpt2", "build/downloads/course-offline.zip"):
        if want not in uploaded:
            problems.append(f"{want} is not uploaded as an artifact")
    pages = using("actions/upload-pages-artifact")
    if [str((s.get("with") or {}).get("path", "")).rstrip("/") for _, s in pages] != ["build/site"]:
        problems.append("build/site is not uploaded (once) with actions/upload-pages-artifact")
    deploys = using("actions/deploy-pages")
    if len(deploys) != 1:
        problems.append("not exactly one actions/deploy-pages step")
    else:
        job_id = deploys[0][0]
        job = wf["jobs"][job_id]
        builder = pages[0][0] if pages else None
        if builder == job_id:
            problems.append("deploy-pages runs in the build job: it needs a job of its own")
        needs = job.get("needs")
        if builder and builder not in ([needs] if isinstance(needs, str) else needs or []):
            problems.append(f"{job_id} does not need {builder}")
        env = job.get("environment")
        if (env.get("name") if isinstance(env, dict) else env) != "github-pages":
            problems.append(f"{job_id}: environment is not github-pages")
        if not str(deploys[0][1].get("id", "")):
            problems.append("the deploy-pages step has no id (its page_url is the environment's url)")
    return problems


# ---------------------------------------------------------------------------- the real workflow


def test_workflow_passes_the_github_workflow_schema():
    assert schema_problems(WORKFLOW) == []


def test_zizmor_offline_finds_nothing_of_medium_severity_or_worse():
    assert zizmor_problems(WORKFLOW) == []


def test_every_action_is_pinned_to_a_commit_with_a_version_comment():
    assert pin_problems(WORKFLOW) == []


def test_permissions_are_least_privilege():
    assert permission_problems(WORKFLOW) == []


def test_the_workflow_runs_the_readme_make_targets_and_they_exist():
    assert make_problems(WORKFLOW) == []
    assert {"traces", "site", "test"} <= make_targets(MAKEFILE)


def test_cache_artifacts_and_pages_are_wired():
    assert wiring_problems(WORKFLOW) == []


def test_what_the_workflow_calls_exists_here():
    """The paths the workflow uploads are the ones the build writes, and `make test` (which .ci/run
    calls) installs the same axe-core the workflow does."""
    text = WORKFLOW.read_text(encoding="utf-8")
    downloads = (REPO / "generator" / "site" / "downloads.py").read_text(encoding="utf-8")
    assert "course-offline.zip" in downloads
    make = (REPO / "Makefile").read_text(encoding="utf-8")
    make_axe = re.search(r"(?m)^AXE_VERSION\s*:=\s*([0-9.]+)", make)
    a11y = re.search(r'(?m)^AXE_VERSION = "([0-9.]+)"', (REPO / "tests" / "browser" / "test_a11y.py").read_text(encoding="utf-8"))
    assert make_axe and a11y, "the Makefile or tests/browser/test_a11y.py no longer pins axe-core"
    versions = {m.group(1) for m in (make_axe, a11y)}
    assert len(versions) == 1, f"the Makefile and tests/browser/test_a11y.py disagree on axe-core: {versions}"
    assert f"axe-core@{versions.pop()}" in text, "the workflow does not install the axe-core that `make test` installs"
    assert "build/node" in text and "build/node" in make
    assert re.search(r"(?m)^test:.*\$\(AXE_STAMP\)", make), "`make test` does not install axe-core"
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    # the browser tests launch Debian's Chromium, which the workflow installs with apt
    from generator.bench import chromium

    assert chromium.CHROMIUM == "/usr/bin/chromium"
    assert re.search(r"from generator\.bench\.chromium import CHROMIUM\b.*\blaunch_args\b", (REPO / "tests" / "browser" / "conftest.py").read_text(encoding="utf-8"))
    assert "chromium" in text


# ---------------------------------------------------------------------------- broken copies

SHA = re.compile(r"@[0-9a-f]{40}")


def _break(text: str, old: str, new: str, count: int = 1) -> str:
    assert old in text, f"the mutation's anchor {old!r} is not in the workflow any more"
    return text.replace(old, new, count)


BROKEN = {
    # name: (checker, mutation)
    "schema: unknown permission level": (
        schema_problems, lambda t: _break(t, "contents: read", "contents: maybe")),
    "schema: a step with both run and uses": (
        schema_problems, lambda t: _break(t, "        run: make test", "        run: make test\n        uses: actions/checkout@v4")),
    "zizmor: template injection": (
        zizmor_problems, lambda t: _break(t, "run: make test", 'run: echo "${{ github.event.head_commit.message }}" && make test')),
    "zizmor: write-all": (
        zizmor_problems, lambda t: re.sub(r"(?m)^    permissions:\n(      .*\n)+", "    permissions: write-all\n", t, count=1)),
    "pins: a tag": (pin_problems, lambda t: SHA.sub("@v6", t, count=1)),
    "pins: a short SHA": (pin_problems, lambda t: re.sub(r"@([0-9a-f]{12})[0-9a-f]{28}", r"@\1", t, count=1)),
    "pins: no version comment": (pin_problems, lambda t: re.sub(r"(@[0-9a-f]{40}) # v[0-9.]+", r"\1", t, count=1)),
    "permissions: write at the top": (
        permission_problems, lambda t: _break(t, "permissions:\n  contents: read", "permissions:\n  contents: write")),
    "permissions: none at the top": (
        permission_problems, lambda t: _break(t, "permissions:\n  contents: read\n", "")),
    "permissions: the build job writes": (
        permission_problems, lambda t: _break(t, "    container:\n", "    permissions:\n      pages: write\n    container:\n")),
    "permissions: the build job reads issues": (
        permission_problems, lambda t: _break(t, "      pages: read ", "      issues: read\n      pages: read ")),
    "permissions: pages read without configure-pages": (
        permission_problems, lambda t: _break(t, "      - name: Deploy\n", "      - name: Deploy\n") .replace("      pages: write ", "      pages: read ", 1)),
    "permissions: deploy writes contents": (
        permission_problems, lambda t: _break(t, "      pages: write", "      contents: write\n      pages: write")),
    "make: not strict": (make_problems, lambda t: _break(t, "run: make site STRICT=1", "run: make site")),
    "make: no traces": (make_problems, lambda t: _break(t, "run: make traces", "run: echo no traces")),
    "make: wrong order": (
        make_problems, lambda t: _break(_break(t, "run: make traces", "run: make TMP"), "run: make test", "run: make traces").replace("run: make TMP", "run: make test")),
    "wiring: checkout keeps credentials": (
        wiring_problems, lambda t: _break(t, "persist-credentials: false", "persist-credentials: true")),
    "wiring: cache keyed on another revision": (
        wiring_problems, lambda t: re.sub(r"(key: \S*?)[0-9a-f]{40}", r"\g<1>" + "0" * 40, t, count=1)),
    "wiring: traces not uploaded": (wiring_problems, lambda t: _break(t, "path: traces/gpt2/", "path: traces/tiny/")),
    "wiring: zip not uploaded": (
        wiring_problems, lambda t: _break(t, "path: build/downloads/course-offline.zip", "path: build/downloads/")),
    "wiring: no environment": (wiring_problems, lambda t: _break(t, "name: github-pages", "name: production")),
    "wiring: a secret": (wiring_problems, lambda t: _break(t, "run: make test", "run: make test\n        env:\n          X: ${{ secrets.X }}")),
    "wiring: site built without the Pages URL": (
        wiring_problems, lambda t: _break(t, "          COURSE_SITE_URL: ${{ steps.pages.outputs.base_url }}\n", "")),
    "wiring: no dispatch": (wiring_problems, lambda t: _break(t, "  workflow_dispatch:\n", "")),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_each_checker_rejects_a_broken_copy(name, tmp_path):
    checker, mutate = BROKEN[name]
    good = WORKFLOW.read_text(encoding="utf-8")
    bad = mutate(good)
    assert bad != good, f"{name}: the mutation changed nothing"
    copy = tmp_path / ".github" / "workflows" / "pages.yml"
    copy.parent.mkdir(parents=True)
    copy.write_text(bad, encoding="utf-8")
    assert checker(copy) != [], f"{name}: {checker.__name__} accepted a broken workflow"


def test_make_checker_rejects_a_target_the_makefile_lacks(tmp_path):
    makefile = tmp_path / "Makefile"
    makefile.write_text(re.sub(r"(?m)^traces:", "tracez:", MAKEFILE.read_text(encoding="utf-8")), encoding="utf-8")
    problems = make_problems(WORKFLOW, makefile=makefile)
    assert any("no target `traces`" in p for p in problems), problems


def test_make_checker_rejects_a_command_the_readme_does_not_document(tmp_path):
    readme = tmp_path / "hosting.md"
    readme.write_text(README.read_text(encoding="utf-8").replace("STRICT=1", "STRICT=yes"), encoding="utf-8")
    problems = make_problems(WORKFLOW, readme=readme)
    assert any("README" in p for p in problems), problems


def test_the_pinned_revision_is_the_one_generator_models_uses():
    from generator import registry

    assert pinned_gpt2_revision() == registry.GPT2_REVISION
    assert "GPT2_REVISION" in MODELS.read_text(encoding="utf-8")


def test_cache_checker_follows_the_revision_in_models_py(tmp_path):
    models = tmp_path / "registry.py"
    models.write_text(f'GPT2_REVISION = "{"1" * 40}"\n', encoding="utf-8")
    assert any("pinned GPT-2 revision" in p for p in wiring_problems(WORKFLOW, models=models))


DEPENDABOT = REPO / ".github" / "dependabot.yml"


def dependabot_problems(path: Path) -> list[str]:
    r = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.dependabot", str(path)],
                       capture_output=True, text=True, timeout=120)
    return [] if r.returncode == 0 else [f"check-jsonschema ({r.returncode}): {r.stdout}{r.stderr}"]


def test_dependabot_keeps_the_action_and_pip_pins_current(tmp_path):
    """.github/dependabot.yml is valid against Dependabot's schema and proposes updates for the
    workflow's actions and for pyproject.toml's pins; a broken copy is rejected."""
    assert dependabot_problems(DEPENDABOT) == []
    doc = yaml.safe_load(DEPENDABOT.read_text(encoding="utf-8"))
    ecosystems = {u["package-ecosystem"]: u for u in doc["updates"]}
    assert set(ecosystems) == {"github-actions", "pip"}
    assert all(u["directory"] == "/" and u["schedule"]["interval"] for u in doc["updates"])
    broken = tmp_path / "dependabot.yml"
    broken.write_text(DEPENDABOT.read_text(encoding="utf-8").replace("interval: weekly", "interval: hourly", 1), encoding="utf-8")
    assert dependabot_problems(broken)
