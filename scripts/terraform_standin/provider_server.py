"""A schema-only stand-in for a Terraform provider: it serves a real provider's schema over the plugin
protocol (version 6, through the `tf` package's go-plugin handshake), so that `terraform init`,
`validate` and `plan -refresh=false` run without the provider's binary.

It validates what a provider checks from its schema alone (nested-block counts; Terraform itself
checks arguments, types and required attributes), and plans like a provider that accepts every
other configuration: the planned state is Terraform's
proposed state with every computed attribute the configuration leaves null marked unknown
("known after apply"), except a service account's `email`, `member`, `name` and `id`, which Google
derives from `account_id` and `project` alone and which the stand-in fills in so that a plan names who holds
each grant. Data sources read back their configuration with computed attributes
filled in (for `archive_file`, digests of the configuration instead of the archive's). It applies
nothing: `apply` fails with a clear error.

    provider_server.py SCHEMA.pb     (written by install.py)
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tf.gen import tfplugin_pb2 as pb
from tf.gen import tfplugin_pb2_grpc as rpc
from tf.types import Unknown
from tf.utils import read_dynamic_value, to_dynamic_value


def block_from_json(block: dict) -> pb.Schema.Block:
    """The protocol's schema block from the `terraform providers schema -json` form."""
    nesting = {
        "single": pb.Schema.NestedBlock.SINGLE,
        "list": pb.Schema.NestedBlock.LIST,
        "set": pb.Schema.NestedBlock.SET,
        "map": pb.Schema.NestedBlock.MAP,
    }
    return pb.Schema.Block(
        attributes=[
            pb.Schema.Attribute(
                name=name,
                type=json.dumps(spec["type"]).encode(),
                required=spec.get("required", False),
                optional=spec.get("optional", False),
                computed=spec.get("computed", False),
            )
            for name, spec in sorted(block.get("attributes", {}).items())
        ],
        block_types=[
            pb.Schema.NestedBlock(
                type_name=name,
                block=block_from_json(nested["block"]),
                nesting=nesting[nested["nesting_mode"]],
                min_items=nested.get("min_items", 0),
                max_items=nested.get("max_items", 0),
            )
            for name, nested in sorted(block.get("block_types", {}).items())
        ],
    )


#: Terraform may keep a schema it read once for every later instance of the provider in the same command.
CAPABILITIES = pb.ServerCapabilities(plan_destroy=True, get_provider_schema_optional=True)


def schema_response(document: dict) -> pb.GetProviderSchema.Response:
    def schema(entry: dict) -> pb.Schema:
        return pb.Schema(version=entry.get("version", 0), block=block_from_json(entry["block"]))

    return pb.GetProviderSchema.Response(
        server_capabilities=CAPABILITIES,
        provider=schema(document["provider"]),
        provider_meta=pb.Schema(block=pb.Schema.Block()),
        resource_schemas={name: schema(entry) for name, entry in document["resource_schemas"].items()},
        data_source_schemas={name: schema(entry) for name, entry in document["data_source_schemas"].items()},
    )


def mark_computed_unknown(block: dict, value: Any) -> Any:
    """`value` (an object of `block`) with each computed attribute that is null made unknown."""
    if not isinstance(value, dict):
        return value
    planned = dict(value)
    for name, spec in block.get("attributes", {}).items():
        if spec.get("computed") and planned.get(name) is None:
            planned[name] = Unknown
    for name, nested in block.get("block_types", {}).items():
        inner = planned.get(name)
        if isinstance(inner, list):
            planned[name] = [mark_computed_unknown(nested["block"], item) for item in inner]
        elif isinstance(inner, dict) and nested["nesting_mode"] == "map":
            planned[name] = {key: mark_computed_unknown(nested["block"], item) for key, item in inner.items()}
        elif isinstance(inner, dict):
            planned[name] = mark_computed_unknown(nested["block"], inner)
    return planned


def block_count_errors(block: dict, value: Any, path: tuple = ()) -> list[pb.Diagnostic]:
    """The nested-block counts outside the schema's min/max items, as the provider's SDK reports them
    (Terraform core leaves these to the provider). Unknown values are not counted."""
    errors: list[pb.Diagnostic] = []
    if not isinstance(value, dict):
        return errors
    for name, nested in block.get("block_types", {}).items():
        items = value.get(name)
        if not isinstance(items, list):
            continue
        limit = nested.get("max_items", 0)
        if limit and len(items) > limit:
            errors.append(
                _error(f"Too many {name} blocks", f'No more than {limit} "{name}" blocks are allowed', (*path, name))
            )
        if len(items) < nested.get("min_items", 0):
            errors.append(
                _error(
                    f"Insufficient {name} blocks",
                    f'At least {nested["min_items"]} "{name}" blocks are required.',
                    (*path, name),
                )
            )
        for index, item in enumerate(items):
            errors.extend(block_count_errors(nested["block"], item, (*path, name, index)))
    return errors


def _error(summary: str, detail: str, path: tuple) -> pb.Diagnostic:
    steps = [
        pb.AttributePath.Step(element_key_int=step)
        if isinstance(step, int)
        else pb.AttributePath.Step(attribute_name=step)
        for step in path
    ]
    return pb.Diagnostic(
        severity=pb.Diagnostic.ERROR, summary=summary, detail=detail, attribute=pb.AttributePath(steps=steps)
    )


def derive_service_account(planned: dict) -> dict:
    """`email`, `member`, `name` and `id` of a google_service_account: <account_id>@<project>.iam.gserviceaccount.com."""
    account, project = planned.get("account_id"), planned.get("project")
    if isinstance(account, str) and isinstance(project, str):
        email = f"{account}@{project}.iam.gserviceaccount.com"
        name = f"projects/{project}/serviceAccounts/{email}"
        planned = {**planned, "email": email, "member": f"serviceAccount:{email}", "name": name, "id": name}
    return planned


#: Computed attributes the stand-in knows at plan time, by resource type.
DERIVED = {"google_service_account": derive_service_account}


def read_data(type_name: str, block: dict, config: dict) -> dict:
    """A data source's state: its configuration, with computed strings filled by a digest of it."""
    digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode())
    filled = dict(config)
    for name, spec in block.get("attributes", {}).items():
        if spec.get("computed") and filled.get(name) is None:
            filled[name] = {
                "string": base64.b64encode(digest.digest()).decode() if "base64" in name else digest.hexdigest(),
                "number": 0,
                "bool": False,
            }.get(spec["type"])
    filled["id"] = filled.get("id") or f"{type_name}-{digest.hexdigest()[:16]}"
    return filled


class StandinServicer(rpc.ProviderServicer):
    """The provider service of the plugin protocol, planning from the schema alone."""

    def __init__(self, schema_path: Path) -> None:
        self.schema_path = schema_path

    @functools.cached_property
    def response(self) -> pb.GetProviderSchema.Response:
        response = pb.GetProviderSchema.Response.FromString(self.schema_path.read_bytes())
        response.server_capabilities.CopyFrom(CAPABILITIES)
        return response

    @functools.cached_property
    def document(self) -> dict:
        return json.loads(self.schema_path.with_suffix(".json").read_text())["schema"]

    def GetMetadata(self, request, context):
        return pb.GetMetadata.Response(server_capabilities=CAPABILITIES)

    def GetProviderSchema(self, request, context):
        return self.response

    def ValidateProviderConfig(self, request, context):
        return pb.ValidateProviderConfig.Response()

    def ValidateResourceConfig(self, request, context):
        block = self.document["resource_schemas"][request.type_name]["block"]
        return pb.ValidateResourceConfig.Response(
            diagnostics=block_count_errors(block, read_dynamic_value(request.config))
        )

    def ValidateDataResourceConfig(self, request, context):
        return pb.ValidateDataResourceConfig.Response()

    def ConfigureProvider(self, request, context):
        return pb.ConfigureProvider.Response()

    def UpgradeResourceState(self, request, context):
        return pb.UpgradeResourceState.Response(upgraded_state=pb.DynamicValue(json=request.raw_state.json))

    def ReadResource(self, request, context):
        return pb.ReadResource.Response(new_state=request.current_state, private=request.private)

    def PlanResourceChange(self, request, context):
        proposed = read_dynamic_value(request.proposed_new_state)
        if proposed is None:  # destroy
            return pb.PlanResourceChange.Response(planned_state=request.proposed_new_state)
        block = self.document["resource_schemas"][request.type_name]["block"]
        planned = mark_computed_unknown(block, DERIVED.get(request.type_name, dict)(proposed))
        return pb.PlanResourceChange.Response(planned_state=to_dynamic_value(planned))

    def ApplyResourceChange(self, request, context):
        return pb.ApplyResourceChange.Response(
            diagnostics=[
                pb.Diagnostic(
                    severity=pb.Diagnostic.ERROR,
                    summary="schema-only stand-in provider",
                    detail="this provider serves the real provider's schema for validate and plan; it cannot apply",
                )
            ]
        )

    def ReadDataSource(self, request, context):
        block = self.document["data_source_schemas"][request.type_name]["block"]
        state = read_data(request.type_name, block, read_dynamic_value(request.config))
        return pb.ReadDataSource.Response(state=to_dynamic_value(state))

    def GetFunctions(self, request, context):
        return pb.GetFunctions.Response()

    def StopProvider(self, request, context):
        return pb.StopProvider.Response()


#: The key pair and certificate of the plugin's TLS, kept with its expiry so that a start reads them without
#: importing `cryptography` (a third of a start).
CERTIFICATE_CACHE = Path.home() / ".cache" / "tf-python-provider" / "standin_cert.json"
#: A certificate expiring sooner than this is made anew.
CERTIFICATE_MARGIN = 3600.0


def cached_certificate(make: Callable[[], tuple[bytes, Any]]) -> tuple[bytes, Any]:
    """`make()`'s (chain, server credentials) (tf's self-signed certificate), from CERTIFICATE_CACHE while it is
    valid."""
    import grpc

    try:
        cached = json.loads(CERTIFICATE_CACHE.read_text())
        if cached["not_after"] > time.time() + CERTIFICATE_MARGIN:
            pair = (cached["key_pem"].encode(), cached["cert_pem"].encode())
            credentials = grpc.ssl_server_credentials([pair], require_client_auth=False)
            return base64.b64decode(cached["cert_chain"]), credentials
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return renewed_certificate(make)


def renewed_certificate(make: Callable[[], tuple[bytes, Any]]) -> tuple[bytes, Any]:
    """tf's own certificate (made or read by `make`), written to CERTIFICATE_CACHE with its expiry."""
    import tf.runner
    from cryptography import x509

    made = make()
    cached = json.loads(tf.runner._get_cert_cache_path().read_text())
    certificate = x509.load_pem_x509_certificate(cached["cert_pem"].encode())
    cached["not_after"] = certificate.not_valid_after_utc.timestamp()
    partial = CERTIFICATE_CACHE.with_name(f"{CERTIFICATE_CACHE.name}.{os.getpid()}")
    partial.write_text(json.dumps(cached))
    partial.replace(CERTIFICATE_CACHE)  # whole or absent for a provider starting at the same time
    return made


def main(argv: list[str]) -> None:
    import tf.provider
    import tf.runner
    from tf.runner import run_provider

    make = tf.runner._self_signed_cert
    tf.runner._self_signed_cert = lambda: cached_certificate(make)

    schema_path = Path(argv[1])
    tf.provider.ProviderServicer = lambda _provider: StandinServicer(schema_path)  # run_provider's servicer
    run_provider(provider=None, argv=argv[:1])  # type: ignore[arg-type]


if __name__ == "__main__":
    main(sys.argv)
