"""`.github/dependabot.yml`: the workflow's actions and the pip pins are kept current, the file
passes Dependabot's schema (check-jsonschema's vendored one) and zizmor finds nothing of medium
severity or worse in it, and the workflow's pins name the majors it was last moved to."""

from __future__ import annotations

import re
import subprocess

import yaml

from test_workflow import REPO, WORKFLOW, tool, zizmor_problems

DEPENDABOT = REPO / ".github" / "dependabot.yml"


def test_dependabot_watches_the_actions_and_the_pip_pins():
    config = yaml.safe_load(DEPENDABOT.read_text(encoding="utf-8"))
    ecosystems = {u["package-ecosystem"]: u for u in config["updates"]}
    assert config["version"] == 2 and set(ecosystems) == {"github-actions", "pip"}
    assert all(u["directory"] == "/" and u["schedule"]["interval"] for u in ecosystems.values())


def test_dependabot_yml_passes_its_schema_and_zizmor():
    r = subprocess.run([tool("check-jsonschema"), "--builtin-schema", "vendor.dependabot", str(DEPENDABOT)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert zizmor_problems(DEPENDABOT) == []


def test_the_workflow_uses_the_current_majors():
    uses = dict(re.findall(r"uses: (actions/[\w-]+)@[0-9a-f]{40} # v(\d+)\.", WORKFLOW.read_text(encoding="utf-8")))
    assert {k: uses[k] for k in ("actions/checkout", "actions/upload-artifact", "actions/upload-pages-artifact", "actions/deploy-pages")} == {
        "actions/checkout": "7", "actions/upload-artifact": "7", "actions/upload-pages-artifact": "5", "actions/deploy-pages": "5"}
