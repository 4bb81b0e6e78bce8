"""Install the schema-only stand-in providers into a Terraform filesystem mirror, with a CLI config.

    install.py CACHE_DIR TARGET_DIR PYTHON

For each provider version in PROVIDERS it fetches the `@cdktf/provider-*` bindings package with `npm pack`
into CACHE_DIR, rebuilds the schema from it (both cached), and installs an executable
`terraform-provider-<name>_v<version>` in TARGET_DIR/mirror that runs provider_server.py with
PYTHON. TARGET_DIR/terraformrc points Terraform at that mirror only: set TF_CLI_CONFIG_FILE to it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

#: (Terraform provider name, npm bindings package, its version); each package names its provider
#: version: 16.12.1 is google and google-beta 6.50.0, 13.27.0 is google 5.38.0 (the module's floor),
#: 13.25.1 is google-beta 5.43.1 (the newest 5.x beta bindings), 11.0.1 are
#: time 0.13.1 and archive 2.7.1.
PROVIDERS = [
    ("google", "@cdktf/provider-google", "16.12.1"),
    ("google", "@cdktf/provider-google", "13.27.0"),
    ("google-beta", "@cdktf/provider-google-beta", "16.12.1"),
    ("google-beta", "@cdktf/provider-google-beta", "13.25.1"),
    ("time", "@cdktf/provider-time", "11.0.1"),
    ("archive", "@cdktf/provider-archive", "11.0.1"),
]
PLATFORM = "linux_amd64"


def fetch_package(package: str, version: str, cache: Path) -> Path:
    """The unpacked npm package, packed and unpacked into `cache` once."""
    unpacked = cache / f"{package.split('/')[-1]}-{version}"
    if not (unpacked / "package" / "package.json").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        packed = subprocess.run(
            ["npm", "pack", f"{package}@{version}", "--pack-destination", str(cache)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[-1]
        (unpacked / "package").mkdir(parents=True, exist_ok=True)
        with tarfile.open(cache / packed) as archive:
            archive.extractall(unpacked, filter="data")
        (cache / packed).unlink()
    return unpacked / "package"


def write_schema(package: Path) -> tuple[str, Path]:
    """(version, path of the protocol-form schema) for one bindings package, rebuilt only when missing."""
    from cdktf_schema import provider_schema
    from provider_server import schema_response

    cached = package.parent / "schema.pb"
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        version, document = provider_schema(package)
        cached.with_suffix(".json").write_text(json.dumps({"version": version, "schema": document}))
        cached.write_bytes(schema_response(document).SerializeToString())
    version = json.loads(cached.with_suffix(".json").read_text())["version"]
    return version, cached


def install_provider(name: str, version: str, schema: Path, target: Path, python: str) -> Path:
    folder = target / "mirror" / "registry.terraform.io" / "hashicorp" / name / version / PLATFORM
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    executable = folder / f"terraform-provider-{name}_v{version}"
    command = [python, str(HERE / "provider_server.py"), str(schema)]
    executable.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(part) for part in command) + "\n")
    executable.chmod(0o755)
    return executable


def main(argv: list[str]) -> int:
    cache, target, python = Path(argv[1]), Path(argv[2]), argv[3]
    for name, package, package_version in PROVIDERS:
        version, schema = write_schema(fetch_package(package, package_version, cache))
        install_provider(name, version, schema, target, python)
        print(f"stand-in hashicorp/{name} {version}")
    (target / "terraformrc").write_text(
        "provider_installation {\n  filesystem_mirror {\n"
        f'    path    = "{target / "mirror"}"\n    include = ["registry.terraform.io/hashicorp/*"]\n  }}\n}}\n'
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
