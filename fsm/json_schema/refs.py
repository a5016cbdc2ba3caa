"""Local ``$ref`` resolution: JSON pointers, ``$id``/``id`` base URIs and anchors.

Every schema node is addressed by its JSON pointer from the root document; the
resolver maps a ``$ref`` (relative to the base URI in force where it appears) to the
pointer of its target. References that leave the document raise
``UnsupportedSchema("$ref")``.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote, urldefrag, urljoin

from fsm.errors import UnsupportedSchema

ROOT_URI = "https://seqstate.invalid/root.json"
"""Base URI of a root schema that declares none."""

DRAFTS = {
    "draft-03": 3,
    "draft-04": 4,
    "draft-06": 6,
    "draft-07": 7,
    "draft/2019-09": 2019,
    "draft/2020-12": 2020,
}

# Keywords whose value is a schema, a list of schemas, or a map of schemas.
_SCHEMA_KEYWORDS = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP_KEYWORDS = (
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
    "dependencies",
)


def draft_of(schema: object) -> int:
    """The draft a root schema declares with ``$schema`` (2020 when it declares none)."""
    if isinstance(schema, dict) and isinstance(schema.get("$schema"), str):
        for marker, draft in DRAFTS.items():
            if marker in schema["$schema"]:
                return draft
    return 2020


def escape_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``; fragments also against non-hierarchical
    bases such as ``urn:uuid:...`` (which ``urljoin`` leaves alone)."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


class RefResolver:
    """Maps ``$ref`` strings to the JSON pointers of their targets in one document."""

    def __init__(self, root: object, draft: int) -> None:
        self.root = root
        self._id_keyword = "id" if draft <= 4 else "$id"
        self._resources: dict[str, str] = {}  # absolute URI (no fragment) -> pointer
        self._anchors: dict[str, str] = {}  # absolute URI with fragment -> pointer
        self._bases: dict[str, str] = {}  # pointer -> base URI in force there
        self._nodes: dict[str, object] = {"": root}  # pointer -> node, as found
        self._targets: dict[tuple[str, str], str] = {}  # (base, $ref) -> its target
        self._indexed = False

    def _index(self) -> None:
        """Walks the document for its base URIs and anchors, once, when the first
        ``$ref`` is resolved: most schemas have none, and the walk was about a
        twentieth of their compile (``docs/design.md``)."""
        for pointer, node, base in self._walk(self.root, "", ROOT_URI):
            self._bases[pointer] = base
            self._resources.setdefault(base, pointer) if self._declares_id(node) else None
        self._resources.setdefault(ROOT_URI, "")
        self._indexed = True  # set last, not read off the tables: they fill during the walk

    def _declares_id(self, node: object) -> bool:
        value = node.get(self._id_keyword) if isinstance(node, dict) else None
        return isinstance(value, str) and not value.startswith("#")

    def _walk(self, node: object, pointer: str, base: str) -> Iterator[tuple[str, object, str]]:
        """Every subschema with its pointer and the base URI in force there, recording
        the anchors it declares on the way."""
        if not isinstance(node, dict):
            return
        base = self._enter(node, pointer, base)
        yield pointer, node, base
        for child, child_pointer in _subschemas(node, pointer):
            yield from self._walk(child, child_pointer, base)

    def _enter(self, node: dict, pointer: str, base: str) -> str:
        """The base URI inside ``node`` (its ``$id`` may change it); records its anchors."""
        ident = node.get(self._id_keyword)
        if isinstance(ident, str):
            uri, fragment = urldefrag(_join(base, ident))
            if uri and not ident.startswith("#"):
                base = uri
            if fragment:  # draft 6/7 plain-name fragment: "$id": "#foo"
                self._anchors.setdefault(f"{base}#{fragment}", pointer)
        anchor = node.get("$anchor")
        if isinstance(anchor, str):
            self._anchors.setdefault(f"{base}#{anchor}", pointer)
        return base

    def base_of(self, pointer: str) -> str:
        """The base URI in force at ``pointer`` (its nearest walked ancestor's)."""
        if not self._indexed:
            self._index()
        while pointer not in self._bases:
            pointer = pointer.rsplit("/", 1)[0] if "/" in pointer else ""
            if pointer == "" and "" not in self._bases:
                return ROOT_URI
        return self._bases[pointer]

    def resolve(self, ref: str, pointer: str) -> str:
        """The pointer of the node that ``ref``, written at ``pointer``, designates
        (kept per base URI: a schema's ``$ref`` to a definition is written again at
        every use, and each is resolved when the compiler builds it)."""
        base = self.base_of(pointer)
        known = self._targets.get((base, ref))
        if known is None:
            known = self._targets[(base, ref)] = self._resolved(base, ref)
        return known

    def _resolved(self, base: str, ref: str) -> str:
        """``resolve`` computed: an anchor, or a pointer into a resource of the document."""
        target = _join(base, ref)
        uri, fragment = urldefrag(target)
        if target in self._anchors:
            return self._anchors[target]
        if uri not in self._resources:
            raise UnsupportedSchema(
                "$ref", f"{ref!r} is not in this document (remote references are not fetched)"
            )
        start = self._resources[uri]
        if fragment and not fragment.startswith("/"):
            raise UnsupportedSchema("$ref", f"unknown anchor in {ref!r}")
        path = start + unquote(fragment)
        self.node_at(path, ref)
        return path

    def node_at(self, pointer: str, ref: str = "") -> object:
        """The node at a JSON pointer of the document (its tokens start after the first
        ``/``). Each node found is kept: the compiler asks for every node it builds,
        and from its parent's pointer the walk takes one step, not one per level."""
        if not pointer.startswith("/"):
            pointer = pointer[pointer.find("/") :] if "/" in pointer else ""
        node = self._nodes.get(pointer)
        if node is not None:
            return node
        parent, _, token = pointer.rpartition("/")
        node = self.node_at(parent, ref or pointer)
        token = _unescape_token(token)
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise UnsupportedSchema("$ref", f"{ref or pointer!r} points to nothing")
        self._nodes[pointer] = node
        return node


def _subschemas(node: dict, pointer: str) -> Iterator[tuple[object, str]]:
    """The direct subschemas of a schema object, each with its JSON pointer."""
    for key in _SCHEMA_KEYWORDS:
        if isinstance(node.get(key), dict):
            yield node[key], f"{pointer}/{key}"
    for key in _LIST_KEYWORDS:
        if isinstance(node.get(key), list):
            for i, item in enumerate(node[key]):
                yield item, f"{pointer}/{key}/{i}"
    for key in _MAP_KEYWORDS:
        if isinstance(node.get(key), dict):
            for name, item in node[key].items():
                yield item, f"{pointer}/{key}/{escape_token(name)}"
