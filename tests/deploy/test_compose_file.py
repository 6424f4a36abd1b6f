"""compose.yaml, deploy/.env.example, the Dockerfile and .dockerignore, checked without an engine.

`make test-deploy` (deploy/test_deploy.py) runs the stack for real; these catch, in the ordinary suite,
a compose file that lost a health check or a volume, names a variable no .env sets or Dailies does not
read, uses what docker-compose 1.29 lacks, or an example file that carries a secret.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from dailies import config

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
ENV_EXAMPLE = ROOT / "deploy" / ".env.example"
DOCKERFILE = ROOT / "Dockerfile"

LONG_RUNNING = ("db", "s3", "api", "worker", "dashboard")
DAILIES_SERVICES = ("init", "api", "worker", "dashboard")
# boto3's own settings of the bucket (dailies/config.py reads only AWS_REGION itself).
BOTO3_SETTINGS = {"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"}
# The init service's own two, read by its shell command.
INIT_SETTINGS = {"FIRST_PROJECT", "FIRST_MEMBER"}
# Service keys docker-compose 1.29 (Compose Specification as of 2021) and Compose v2 both know; no
# `develop`, `build.secrets`, `depends_on.*.restart`, `include`, ... (1.29 refuses or ignores them).
SERVICE_KEYS_1_29 = {"image", "build", "restart", "command", "entrypoint", "environment", "ports", "volumes",
                     "depends_on", "healthcheck", "stop_grace_period", "user", "working_dir", "labels"}
BUILD_KEYS_1_29 = {"context", "dockerfile", "args", "target"}
CONDITIONS_1_29 = {"service_started", "service_healthy", "service_completed_successfully"}
SECRET_NAMES = re.compile(r"PASSWORD|SECRET|ACCESS_KEY|TOKEN|_KEYS?$")


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


@pytest.fixture(scope="module")
def example() -> dict[str, str]:
    pairs = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, sep, value = line.partition("=")
            assert sep, f"not NAME=value: {line!r}"
            assert name not in pairs, f"{name} given twice"
            pairs[name] = value
    return pairs


def interpolated(text: str) -> set[str]:
    """The variables compose.yaml takes from .env: `${NAME}`, `${NAME:-default}`, `${NAME:?message}`
    (`$${NAME}` is a literal `${NAME}` for the container's shell, not one of them)."""
    return {m.group(1) for m in re.finditer(r"(?<!\$)\$\{([A-Z0-9_]+)", text)}


def test_the_services_and_their_volumes(compose):
    assert "version" not in compose, "Compose Specification: no `version:` (v2 warns, 1.29 reads the spec without)"
    services = compose["services"]
    assert set(LONG_RUNNING) | {"init"} <= set(services)
    assert set(compose["volumes"]) == {"db-data", "s3-data", "dashboard-data"}
    used = {entry.split(":")[0] for service in services.values() for entry in service.get("volumes", [])}
    assert used == set(compose["volumes"]), "every named volume is mounted, every mount is a named volume"
    assert "db-data:/var/lib/postgresql/data" in services["db"]["volumes"]


def test_each_long_running_service_has_a_health_check_and_a_restart_policy(compose):
    services = compose["services"]
    for name in LONG_RUNNING:
        check = services[name].get("healthcheck")
        assert check and check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert services[name].get("restart") == "unless-stopped", name
    # The API node is healthy only when ready: the database and the bucket answer (/readyz).
    assert any("/readyz" in part for part in services["api"]["healthcheck"]["test"])
    assert any("/_stcore/health" in part for part in services["dashboard"]["healthcheck"]["test"])
    assert "--metrics-port" in services["worker"]["command"]
    assert any("/metrics" in part for part in services["worker"]["healthcheck"]["test"])
    assert "init" not in [n for n in services if services[n].get("restart")], "a one-shot service restarts never"


def test_workers_scale(compose):
    """`--scale worker=3`: no fixed container name, no host port, no volume shared by the replicas."""
    worker = compose["services"]["worker"]
    assert "container_name" not in worker
    assert "ports" not in worker
    assert "volumes" not in worker
    for name, service in compose["services"].items():
        assert "container_name" not in service, name


def test_start_order(compose):
    services = compose["services"]
    for name in DAILIES_SERVICES:
        depends = services[name]["depends_on"]
        assert depends["db"]["condition"] == "service_healthy", name
        assert depends["s3"]["condition"] == "service_healthy", name
    assert services["api"]["depends_on"]["init"]["condition"] == "service_completed_successfully"
    assert services["dashboard"]["depends_on"]["api"]["condition"] == "service_healthy"
    assert services["dashboard"]["command"][:2] == ["dashboard", "--team"]
    assert services["api"]["command"][:3] == ["serve", "--slots", "0"]
    assert services["worker"]["command"][0] == "worker"


def test_only_what_docker_compose_1_29_knows(compose):
    for name, service in compose["services"].items():
        assert set(service) <= SERVICE_KEYS_1_29, (name, set(service) - SERVICE_KEYS_1_29)
        build = service.get("build")
        if isinstance(build, dict):
            assert set(build) <= BUILD_KEYS_1_29, (name, set(build) - BUILD_KEYS_1_29)
        for dependency in (service.get("depends_on") or {}).values():
            assert set(dependency) == {"condition"} and dependency["condition"] in CONDITIONS_1_29, name
    assert set(compose) <= {"services", "volumes", "networks"} | {k for k in compose if k.startswith("x-")}


def test_the_dailies_services_read_only_listed_variables(compose):
    """Every variable given to a Dailies container is one dailies/config.py lists (or boto3's own)."""
    known = set(config.names()) | BOTO3_SETTINGS
    for name in DAILIES_SERVICES:
        service = compose["services"][name]
        assert service["image"] == "${DAILIES_IMAGE:-dailies:latest}", name
        given = set(service["environment"])
        extra = INIT_SETTINGS if name == "init" else set()
        assert given - extra <= known, (name, sorted(given - extra - known))
        assert {"DAILIES_DATABASE_URL", "DAILIES_STORAGE", "AWS_ENDPOINT_URL"} <= given, name
    dashboard = compose["services"]["dashboard"]["environment"]
    assert dashboard["DAILIES_DASHBOARD_TEAM"] == "1"
    assert dashboard["ARK_BASE_URL"] == "${DASHBOARD_API_URL:-http://api:8000/api/v3}"
    assert "ARK_API_KEY" not in dashboard, "a team dashboard has no key of its own"


def test_every_variable_of_compose_is_in_the_example_and_back(compose, example):
    assert interpolated(COMPOSE.read_text()) == set(example)


def test_the_example_carries_no_secret(example):
    secret_names = {name for name in example if SECRET_NAMES.search(name)}
    assert secret_names >= {"POSTGRES_PASSWORD", "S3_ACCESS_KEY", "S3_SECRET_KEY"}
    for name in secret_names:
        assert example[name] == "", f"{name} has a value in the committed example"
    # ... and compose refuses to start without them (`${NAME:?message}`), rather than run with none.
    text = COMPOSE.read_text()
    for name in secret_names | {"S3_PUBLIC_URL"}:
        assert re.search(r"\$\{" + name + r":\?", text), name
        assert not re.search(r"\$\{" + name + r":-", text), f"{name} has a default in compose.yaml"


def test_the_image(compose):
    text = DOCKERFILE.read_text()
    assert re.search(r"^ARG BASE=python:3\.11-slim$", text, re.M)
    assert re.search(r"^FROM \$\{BASE\}", text, re.M)
    assert 'ENTRYPOINT ["dailies"]' in text
    for package in ("fonts-dejavu-core", "fonts-noto-cjk", "fonts-noto-color-emoji"):
        assert package in text
    # The last stage (the default target) is the product, and runs as a user of its own.
    last_stage = text[text.rindex("\nFROM "):]
    users = re.findall(r"^USER (\S+)$", last_stage, re.M)
    assert users and users[-1] not in ("root", "0")
    assert "FROM python AS seaweedfs" in text and compose["services"]["s3"]["build"]["target"] == "seaweedfs"
    # No secret enters a layer: pip's CA bundle is a BuildKit secret mount, never COPY'd or an ARG.
    assert "--mount=type=secret,id=pip_cert" in text
    assert not re.search(r"^(COPY|ADD|ARG).*(cert|\.crt|\.pem)", text, re.M | re.I)


def test_the_build_context_leaves_out_the_work_tree():
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0] == "*", "an allow-list: nothing enters the context unless named"
    allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
    assert allowed == {"pyproject.toml", "README.md", "dailies", "dashboard", "components", "deploy/seaweedfs",
                       "deploy/requirements.py"}
    # Everything the Dockerfile copies is in the context.
    copied = re.findall(r"^COPY (?!--from)(.+) \S+$", DOCKERFILE.read_text(), re.M)
    for sources in copied:
        for source in sources.split():
            assert any(source == a or source.startswith(a + "/") for a in allowed), source


def test_requirements_of_all_follow_the_extras():
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location("deploy_requirements", ROOT / "deploy" / "requirements.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    requirements = module.requirements
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = requirements(pyproject, "all")
    extras = pyproject["project"]["optional-dependencies"]
    expected = set(pyproject["project"]["dependencies"]) | set(extras["service"]) | set(extras["dashboard"]) \
        | set(extras["team"])
    assert set(found) == expected
    assert len(found) == len(set(found))
    assert not any(r.startswith("dailies") for r in found)
    nested = {"project": {"dependencies": ["a"], "optional-dependencies": {
        "x": ["b", "dailies[y]"], "y": ["c", "dailies[x,z]"], "z": ["a", "d"]}}}
    assert requirements(nested, "x") == ["a", "b", "c", "d"]


@pytest.mark.parametrize("script", ["deploy/seaweedfs/start.sh", "deploy/postgres-debian/entrypoint.sh"])
def test_the_shell_scripts_parse(script):
    result = subprocess.run(["sh", "-n", str(ROOT / script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_make_test_deploy_runs_the_script():
    text = (ROOT / "Makefile").read_text()
    target = re.search(r"^test-deploy:.*\n((?:\t.*\n)+)", text, re.M)
    assert target and "deploy/test_deploy.py" in target.group(1)
