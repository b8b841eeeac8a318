"""deploy/, docker/ and scripts/local_cluster.sh agree with each other and with the project.

No cloud, Kubernetes or Docker engine runs here, so these are the checks that can run: every
manifest parses, the cluster launcher config satisfies Ray's own schema, the images the manifests
name follow the tag scheme that docker/ builds (same project version, Python, CPU/GPU where the
GPUs are), both Dockerfiles install torch with the Makefile's TORCH_SPEC before the project and
ship conf/ with OMEGA_CLUSTER_CONF, the RayJob runs the RayCluster's spec, every documented
``python -m omega_cluster train ...`` command's overrides load with
:func:`omega_cluster.config.load_settings`, and the local defaults bind to 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import ray.autoscaler
import yaml

from omega_cluster.config import load_settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKERFILES = {"cpu": ROOT / "docker" / "Dockerfile", "gpu": ROOT / "docker" / "Dockerfile.cuda"}
SCRIPT = ROOT / "scripts" / "local_cluster.sh"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
IMAGE = re.compile(
    r"^(?:[\w.\-]+(?::\d+)?/)*omega-cluster:(?P<version>[\w.]+)-py(?P<py>\d+)-(?P<kind>cpu|gpu)$"
)
TRAIN = "python -m omega_cluster train"


def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d is not None]


def _one(name: str, kind: str) -> dict[str, Any]:
    (doc,) = [d for d in _docs(name) if d.get("kind") == kind]
    return doc


def _arg(dockerfile: str, name: str) -> str:
    match = re.search(rf"^ARG {name}=(\S+)$", dockerfile, re.MULTILINE)
    assert match, f"no ARG {name}=... default"
    return match.group(1)


def _makefile_var(name: str) -> str:
    match = re.search(rf"^{name}\s*\?=\s*(\S+)\s*$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert match, f"Makefile has no {name} ?= ..."
    return match.group(1)


def _images(node: Any, gpu: bool = False) -> Iterator[tuple[str, bool]]:
    """(image, on a GPU node?) for every image named in a KubeRay manifest."""
    if isinstance(node, dict):
        if "image" in node and isinstance(node["image"], str):
            limits = node.get("resources", {}).get("limits", {})
            yield node["image"], gpu or "nvidia.com/gpu" in limits
        for value in node.values():
            yield from _images(value, gpu)
    elif isinstance(node, list):
        for item in node:
            yield from _images(item, gpu)


def _kuberay_spec() -> dict[str, Any]:
    return _one("kuberay/raycluster.yaml", "RayCluster")["spec"]


def test_every_manifest_parses() -> None:
    kinds = []
    for path in sorted(DEPLOY.rglob("*.yaml")):
        docs = _docs(str(path.relative_to(DEPLOY)))
        assert docs, f"{path} is empty"
        kinds += [d.get("kind", "cluster-launcher") for d in docs]
    assert sorted(kinds) == ["PersistentVolumeClaim", "RayCluster", "RayJob", "cluster-launcher"]


def test_cluster_launcher_config_satisfies_rays_schema() -> None:
    config = _docs("aws-cluster.yaml")[0]
    schema_path = Path(ray.autoscaler.__file__).parent / "ray-schema.json"
    jsonschema.validate(config, json.loads(schema_path.read_text()))
    types = config["available_node_types"]
    assert config["head_node_type"] in types
    gpu = [t for t in types.values() if "omega_learner" in t["resources"]]
    assert len(gpu) == 1 and gpu[0]["min_workers"] >= 1  # cluster=multi_node asks for a GPU
    head_start = " ".join(config["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head_start and "0.0.0.0" not in head_start
    # token authentication on every node: the mode in the container's environment, the token
    # file mounted where RAY_AUTH_TOKEN_PATH says
    options = config["docker"]["run_options"]
    assert "--env RAY_AUTH_MODE=token" in options
    token_path = next(o.split("=", 1)[1] for o in options if "RAY_AUTH_TOKEN_PATH=" in o)
    assert token_path in config["file_mounts"]


def test_images_follow_the_tag_scheme_docker_builds() -> None:
    config = _docs("aws-cluster.yaml")[0]
    named = [(config["docker"]["image"], False)]
    for node_type in config["available_node_types"].values():
        if "worker_image" in node_type.get("docker", {}):
            named.append(
                (node_type["docker"]["worker_image"], "omega_learner" in node_type["resources"])
            )
    for name in ("kuberay/raycluster.yaml", "kuberay/rayjob.yaml"):
        named += list(_images(_docs(name)))
    assert len(named) >= 8
    kinds = set()
    for image, on_gpu in named:
        match = IMAGE.match(image)
        assert match, (
            f"{image!r} does not follow <registry>/omega-cluster:<version>-py311-<cpu|gpu>"
        )
        assert match["version"] == VERSION, f"{image}: the project is {VERSION}"
        assert match["py"] == "311"
        assert match["kind"] == ("gpu" if on_gpu else "cpu"), f"{image} on a GPU node: {on_gpu}"
        kinds.add(match["kind"])
    assert kinds == {"cpu", "gpu"}
    for kind, path in DOCKERFILES.items():  # the build commands in the Dockerfiles' headers
        build = f"docker build -f docker/{path.name} -t omega-cluster:{VERSION}-py311-{kind} ."
        assert build in path.read_text(), f"{path.name} header should say: {build}"


def test_dockerfiles_install_like_the_makefile() -> None:
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert requires == ">=3.11"  # the images are py311
    ray_versions = set()
    for kind, path in DOCKERFILES.items():
        text = path.read_text()
        assert _arg(text, "TORCH_SPEC") == _makefile_var("TORCH_SPEC")
        suffix = "-gpu" if kind == "gpu" else ""
        assert f"FROM rayproject/ray:${{RAY_VERSION}}-py311{suffix}\n" in text
        ray_versions.add(_arg(text, "RAY_VERSION"))
        torch_at = text.index('"${TORCH_SPEC}"')
        assert (
            'RUN pip install --no-cache-dir --index-url "${TORCH_INDEX_URL}" "${TORCH_SPEC}"'
            in text
        )
        assert torch_at < text.index("pip install --no-cache-dir .")  # torch first, as make does
        workdir = re.search(r"^WORKDIR (\S+)$", text, re.MULTILINE)
        assert workdir
        assert re.search(r"^COPY .*\bconf \./conf$", text, re.MULTILINE)
        assert f"ENV OMEGA_CLUSTER_CONF={workdir.group(1)}/conf\n" in text
        # the context sent to the build holds what is copied, not the venv
        ignore = (path.parent / f"{path.name}.dockerignore").read_text().split()
        assert "*" in ignore and {
            "!pyproject.toml",
            "!README.md",
            "!omega_cluster/",
            "!conf/",
        } <= set(ignore)
    (ray_version,) = ray_versions
    assert _kuberay_spec()["rayVersion"] == ray_version
    setup = " ".join(_docs("aws-cluster.yaml")[0]["setup_commands"])
    assert f"ray.__version__ == '{ray_version}'" in setup


def test_rayjob_runs_the_rayclusters_spec_with_token_auth() -> None:
    job = _one("kuberay/rayjob.yaml", "RayJob")["spec"]
    spec = _kuberay_spec()
    assert job["rayClusterSpec"] == spec
    assert spec["authOptions"] == {"mode": "token"}
    runtime_env = yaml.safe_load(job["runtimeEnvYAML"])
    assert isinstance(runtime_env, dict) and set(runtime_env) <= {"env_vars", "working_dir"}
    assert all(isinstance(v, str) for v in runtime_env["env_vars"].values())  # Ray wants strings
    (claim,) = [d["metadata"]["name"] for d in _docs("kuberay/storage.yaml")]
    groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
    for group in groups:
        volumes = group["template"]["spec"]["volumes"]
        assert {"name": "omega-runs", "persistentVolumeClaim": {"claimName": claim}} in volumes
    assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
    labels = [
        json.loads(json.loads(g["rayStartParams"]["resources"])) for g in spec["workerGroupSpecs"]
    ]
    assert {"omega_learner": 1} in labels


def _documented_commands() -> list[tuple[str, str]]:
    """(where, command) of every complete ``python -m omega_cluster train ...`` in deploy/ and
    the READMEs: YAML comments, code blocks (continuation lines joined), the RayJob entrypoint."""
    found = [
        ("rayjob.yaml entrypoint", _one("kuberay/rayjob.yaml", "RayJob")["spec"]["entrypoint"])
    ]
    for path in [*sorted(DEPLOY.rglob("*.yaml")), DEPLOY / "README.md", ROOT / "README.md"]:
        text = path.read_text().replace("\\\n", " ")
        for line in text.splitlines():
            if path.suffix == ".yaml" and not line.lstrip().startswith("#"):
                continue  # in a manifest, commands in comments (the entrypoint is parsed above)
            if TRAIN in line and "…" not in line and "<" not in line.split(TRAIN, 1)[1]:
                found.append((path.name, line.split(TRAIN, 1)[1].split("`")[0]))
    return found


def test_documented_entrypoints_are_commands_the_cli_accepts() -> None:
    commands = _documented_commands()
    assert len(commands) >= 4
    for where, command in commands:
        overrides = shlex.split(command.removeprefix(TRAIN))
        settings = load_settings(overrides)  # a wrong key or value raises ConfigError
        if "cluster=multi_node" in overrides:
            assert settings.cluster.address == "auto", where  # joins the cluster it runs on
            assert settings.run.dir and os.path.isabs(settings.run.dir), where
            assert settings.run.shard_store and settings.run.shard_store.startswith("s3://"), where
            assert (settings.tracking.uri or "").startswith(("http://", "https://")), where
            assert settings.run.progress is False, where


def test_local_cluster_binds_to_loopback_and_submits_a_valid_job() -> None:
    script = SCRIPT.read_text()
    for flag in ("--dashboard-host 127.0.0.1", "--node-ip-address 127.0.0.1", "--host 127.0.0.1"):
        assert flag in script
    assert "0.0.0.0" not in script.split("\nset -eu\n", 1)[1]  # only the header may name it
    assert load_settings([]).cluster.dashboard_host == "127.0.0.1"  # embedded Ray's dashboard
    assert re.search(r"^local-cluster:.*\n\t.*sh scripts/local_cluster\.sh start \$\(ARGS\)$",
                     (ROOT / "Makefile").read_text(), re.MULTILINE)  # fmt: skip
    assert re.search(r"^stop-cluster:\n\t.*sh scripts/local_cluster\.sh stop$",
                     (ROOT / "Makefile").read_text(), re.MULTILINE)  # fmt: skip
    # the job the script submits, with the values it substitutes
    assert f"{TRAIN} cluster=local " in script
    settings = load_settings(["cluster=local", "tracking.uri=http://127.0.0.1:5050",
                              "run.dir=/abs/run", "run.progress=false", "run=smoke"])  # fmt: skip
    assert settings.cluster.address == "auto" and settings.cluster.backend == "ray"
    # the working-dir upload's runtime env is valid JSON and leaves out the heavy directories
    runtime_env = re.search(r"runtime_env='(\{.*?\})'", script, re.DOTALL)
    assert runtime_env
    excludes = json.loads(runtime_env.group(1))["excludes"]
    assert {".venv", ".git", "runs", ".local-cluster"} <= set(excludes)
    syntax = subprocess.run(["sh", "-n", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr


@pytest.mark.parametrize("command", [[], ["launch"], ["Start", "run=smoke"]])
def test_local_cluster_script_rejects_unknown_commands(command: list[str], tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = subprocess.run(["sh", str(SCRIPT), *command], capture_output=True, text=True,
                          env={**os.environ, "LOCAL_CLUSTER_DIR": str(state)}, check=False)  # fmt: skip
    assert done.returncode == 2
    assert "usage:" in done.stderr and "start|submit" in done.stderr
    assert not state.exists()  # nothing created, nothing started
