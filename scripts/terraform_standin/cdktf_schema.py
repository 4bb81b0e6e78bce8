"""A Terraform provider's schema, rebuilt from the bindings CDK for Terraform generates for it.

A prebuilt `@cdktf/provider-<name>` npm package holds, for every resource and data source, the
code that turns a configuration into HCL (`synthesizeHclAttributes` and one `<struct>ToHclTerraform`
function per nested block: every argument with its Terraform name, whether it is a block, and
its storage type), the TypeScript interfaces of the configuration (an optional member ends in
`?`) and one getter per attribute (computed-only attributes have nothing else). From those this
module writes the schema in the shape of `terraform providers schema -json`.

What the bindings do not say: whether an optional argument is also computed (only `id` is
marked so), provider-side validators, defaults and plan modifiers.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_CLASS = re.compile(r"^class (\w+) extends ([\w.]+) \{\n(.*?)^\}", re.M | re.S)
_TO_HCL = re.compile(r"^function (\w+)ToHclTerraform\(struct\) \{\n(.*?)^\}", re.M | re.S)
_ENTRY = re.compile(
    r'(\w+): \{\s*value: (.*?),\s*isBlock: (true|false),\s*type: "(\w+)",\s*'
    r'storageClassType: "(\w+)",\s*\}',
    re.S,
)
_INTERFACE = re.compile(r"^export interface (\w+)(?: extends [\w.]+)? \{\n(.*?)^\}", re.M | re.S)
_MEMBER = re.compile(r"^\s*readonly (\w+)(\??):", re.M)
_TYPE_NAME = re.compile(r'^(\w+)\.tfResourceType = "(\w+)";', re.M)
_VERSION = re.compile(r"providerVersion: '([\d.]+)'")
_GETTER = re.compile(r"^    get (\w+)\(\) \{\n\s*return (.*?);\n    \}", re.M | re.S)
_FIELD = re.compile(r'this\._(\w+) = new (?:\w+\.)?(\w+)\(this, "(\w+)"(?:, (true|false))?\);')
_SIMPLE_GETTER = re.compile(r"this\.get(\w+)Attribute\('(\w+)'\)")
_MAP_GETTER = re.compile(r"new cdktf\.(\w+)Map\(this, '(\w+)'\)")

_PRIMITIVE_MAPS = {"StringMap": "string", "NumberMap": "number", "BooleanMap": "bool", "AnyMap": "dynamic"}
_PRIMITIVES = {"string": "string", "number": "number", "boolean": "bool", "any": "dynamic"}
_GETTER_TYPES = {
    "String": "string",
    "Number": "number",
    "Boolean": "bool",
    "List": ["list", "string"],
    "NumberList": ["list", "number"],
    "StringMap": ["map", "string"],
    "NumberMap": ["map", "number"],
    "BooleanMap": ["map", "bool"],
}


@dataclass
class Module:
    """One binding folder (its structs may be split over files): its classes, its `...ToHclTerraform` functions and its interfaces."""

    classes: dict[str, tuple[str, str]] = field(default_factory=dict)
    to_hcl: dict[str, str] = field(default_factory=dict)
    interfaces: dict[str, dict[str, bool]] = field(default_factory=dict)

    @classmethod
    def read(cls, directory: Path) -> Module:
        code = "\n".join(path.read_text() for path in sorted(directory.rglob("*.js")))
        types = "\n".join(path.read_text() for path in sorted(directory.rglob("*.d.ts")))
        return cls(
            {name: (base, body) for name, base, body in _CLASS.findall(code)},
            dict(_TO_HCL.findall(code)),
            {
                name: {member: optional == "?" for member, optional in _MEMBER.findall(body)}
                for name, body in _INTERFACE.findall(types)
            },
        )


def _storage_type(kind: str, storage: str) -> object:
    """The cty type of a non-block argument from its binding's (type, storageClassType)."""
    for suffix, collection in (("List", "list"), ("Map", "map")):
        if storage.endswith(suffix) and storage[: -len(suffix)] in _PRIMITIVES:
            element = _PRIMITIVES[storage[: -len(suffix)]]
            return ["set" if kind == "set" else collection, element]
    if storage in _PRIMITIVES:
        return _PRIMITIVES[storage]
    raise ValueError(f"unsupported storage type {storage!r}")


class SchemaBuilder:
    """Schemas of the blocks of one module."""

    def __init__(self, module: Module) -> None:
        self.module = module

    def block(self, entries_body: str, interface: str, getters_class: str | None) -> dict:
        optional_members = self.module.interfaces.get(interface, {})
        attributes: dict[str, dict] = {}
        block_types: dict[str, dict] = {}
        for name, value, is_block, kind, storage in _ENTRY.findall(entries_body):
            member = re.search(r"(?:struct|this)\.?_?(\w+)", value.split("(")[-1])
            camel = member.group(1) if member else ""
            required = optional_members.get(camel) is False
            nested = re.search(r"(\w+)ToHclTerraform", value.replace("cdktf.", "cdktf_"))
            if is_block == "true":
                block_types[name] = self._nested_block(nested.group(1), kind, "listMapperHcl" in value, required)
            elif nested and not nested.group(1).startswith("cdktf_"):
                attributes[name] = {"type": self._object_type(nested.group(1), kind), **_flags(required)}
            else:
                attributes[name] = {"type": _storage_type(kind, storage), **_flags(required)}
        if getters_class:
            self._add_computed(getters_class, attributes, block_types)
        return {"attributes": attributes, "block_types": block_types}

    def _nested_block(self, struct: str, kind: str, many: bool, required: bool) -> dict:
        struct_name = struct[0].upper() + struct[1:]
        block = self.block(self.module.to_hcl[struct], struct_name, struct_name + "OutputReference")
        if kind == "struct":  # one object, not a list of at most one (SDKv2 `timeouts`)
            return {"nesting_mode": "single", "block": block}
        nested = {"nesting_mode": "set" if kind == "set" else "list", "block": block}
        if not many:
            nested["max_items"] = 1
        if required:
            nested["min_items"] = 1
        return nested

    def _object_type(self, struct: str, kind: str) -> list:
        inner = self.block(self.module.to_hcl[struct], "", None)
        shape = ["object", {name: spec["type"] for name, spec in inner["attributes"].items()}]
        if kind == "simple" or kind == "struct":
            return shape
        return ["set" if kind == "set" else kind, shape]

    def _add_computed(self, class_name: str, attributes: dict, block_types: dict) -> None:
        """Computed-only attributes: getters of `class_name` that are not arguments."""
        if class_name not in self.module.classes:
            return
        body = self.module.classes[class_name][1]
        fields = {member: (cls, name, wraps_set) for member, cls, name, wraps_set in _FIELD.findall(body)}
        for _, returned in _GETTER.findall(body):
            name, cty = self._getter_type(returned, fields)
            if name and name not in attributes and name not in block_types:
                attributes[name] = {"type": cty, "computed": True}

    def _getter_type(self, returned: str, fields: dict) -> tuple[str | None, object]:
        if match := _SIMPLE_GETTER.search(returned):
            cty = _GETTER_TYPES.get(match.group(1), "dynamic")
            if "Fn.tolist" in returned and isinstance(cty, list):
                cty = ["set", cty[1]]
            return match.group(2), cty
        if match := _MAP_GETTER.search(returned):
            return match.group(2), ["map", _PRIMITIVE_MAPS.get(match.group(1) + "Map", "dynamic")]
        if (match := re.fullmatch(r"this\._(\w+)", returned)) and match.group(1) in fields:
            cls, name, wraps_set = fields[match.group(1)]
            if cls in _PRIMITIVE_MAPS:
                return name, ["map", _PRIMITIVE_MAPS[cls]]
            return name, self._computed_object(cls, wraps_set)
        return None, None

    def _computed_object(self, cls: str, wraps_set: str) -> list:
        base = re.sub(r"(OutputReference|List|Map)$", "", cls)
        shape = self.block("", "", base + "OutputReference")
        element = ["object", {name: spec["type"] for name, spec in shape["attributes"].items()}]
        if cls.endswith("Map"):
            return ["map", element]
        return ["set" if wraps_set == "true" else "list", element]


def _flags(required: bool) -> dict:
    return {"required": True} if required else {"optional": True}


def schema_of(directory: Path) -> tuple[str, str, dict] | None:
    """("resource" | "data_source" | "provider", Terraform type name, schema) of one binding folder."""
    module = Module.read(directory)
    code = (directory / "index.js").read_text()
    for class_name, (base, body) in module.classes.items():
        kind = {
            "cdktf.TerraformResource": "resource",
            "cdktf.TerraformDataSource": "data_source",
            "cdktf.TerraformProvider": "provider",
        }.get(base)
        if kind is None:
            continue
        synthesized = re.search(r"synthesizeHclAttributes\(\) \{\n(.*?)^    \}", body, re.M | re.S).group(1)
        block = SchemaBuilder(module).block(synthesized, class_name + "Config", class_name)
        if kind == "provider":
            block["attributes"].pop("alias", None)
        elif block["attributes"].get("id", {}).get("optional"):  # SDKv2: an optional `id` is also computed
            block["attributes"]["id"]["computed"] = True
        type_name = dict(_TYPE_NAME.findall(code)).get(class_name, "")
        return kind, type_name, {"version": 0, "block": block}
    return None


def provider_schema(package: Path) -> tuple[str, dict]:
    """(provider version, schema document) of an unpacked `@cdktf/provider-*` package."""
    version = _VERSION.search((package / "lib" / "provider" / "index.js").read_text()).group(1)
    document: dict = {"provider": None, "resource_schemas": {}, "data_source_schemas": {}}
    for directory in sorted(p for p in (package / "lib").iterdir() if (p / "index.js").is_file()):
        found = schema_of(directory)
        if found is None:
            continue
        kind, type_name, schema = found
        if kind == "provider":
            document["provider"] = schema
        else:
            document[f"{kind}_schemas"][type_name] = schema
    return version, document


def main(argv: list[str]) -> int:
    package, output = Path(argv[1]), Path(argv[2])
    version, document = provider_schema(package)
    output.write_text(json.dumps({"version": version, "schema": document}, sort_keys=True))
    print(
        f"{output.name}: provider {version}, {len(document['resource_schemas'])} resources, "
        f"{len(document['data_source_schemas'])} data sources"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
