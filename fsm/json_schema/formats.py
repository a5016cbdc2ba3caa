"""``format`` values as regular expressions over the decoded string (full match).

The data this library is checked against treats ``format`` as an assertion, so the
formats below are enforced; unknown formats are annotations and are ignored. Every
pattern is written for interegular (no anchors, no lookaround).
"""

from __future__ import annotations

_D = "[0-9]"
_YEAR = f"{_D}{{4}}"
_LEAP_YEAR = f"(?:{_D}{{2}}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_DAY_31 = "(?:0[1-9]|[12][0-9]|3[01])"
_DAY_30 = "(?:0[1-9]|[12][0-9]|30)"
_DATE = (
    f"(?:{_YEAR}-(?:0[13578]|1[02])-{_DAY_31}"
    f"|{_YEAR}-(?:0[469]|11)-{_DAY_30}"
    f"|{_YEAR}-02-(?:0[1-9]|1[0-9]|2[0-8])"
    f"|{_LEAP_YEAR}-02-29)"
)
_HOUR, _MINUTE = "(?:[01][0-9]|2[0-3])", "[0-5][0-9]"
_OFFSET = f"(?:[zZ]|[+-]{_HOUR}:{_MINUTE})"
_TIME = f"{_HOUR}:{_MINUTE}:(?:[0-5][0-9]|60)(?:\\.{_D}+)?{_OFFSET}"
_HEX = "[0-9a-fA-F]"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
_H16 = f"{_HEX}{{1,4}}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = (
    "(?:"
    f"(?:{_H16}:){{6}}{_LS32}"
    f"|::(?:{_H16}:){{5}}{_LS32}"
    f"|(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}"
    f"|(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}"
    f"|(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}"
    f"|(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}"
    f"|(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}"
    f"|(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}"
    f"|(?:(?:{_H16}:){{0,6}}{_H16})?::"
    ")"
)
_LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_HOSTNAME = f"{_LABEL}(?:\\.{_LABEL})*\\.?"
# RFC 3986, with characters outside ASCII refused (those make an IRI, not a URI).
_PCT = f"%{_HEX}{{2}}"
_UNRESERVED_SUB = "[a-zA-Z0-9._~!$&'()*+,;=-]"
_PCHAR = f"(?:{_UNRESERVED_SUB}|{_PCT}|[:@])"
_SCHEME = "[a-zA-Z][a-zA-Z0-9+.-]*"
_AUTHORITY = f"(?:(?:{_UNRESERVED_SUB}|{_PCT}|:)*@)?(?:\\[[0-9a-fA-F:.]+\\]|(?:{_UNRESERVED_SUB}|{_PCT})*)(?::{_D}*)?"
_PATH_ABEMPTY = f"(?:/{_PCHAR}*)*"
_HIER = f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"
_QUERY = f"(?:\\?(?:{_PCHAR}|[/?])*)?"
_FRAGMENT = f"(?:#(?:{_PCHAR}|[/?])*)?"
_URI = f"{_SCHEME}:{_HIER}{_QUERY}{_FRAGMENT}"
_RELATIVE_PART = f"(?://{_AUTHORITY}{_PATH_ABEMPTY}|/?(?:(?:{_UNRESERVED_SUB}|{_PCT}|@)(?:{_PCHAR})*(?:/{_PCHAR}*)*)?)"
_URI_REFERENCE = f"(?:{_URI}|{_RELATIVE_PART}{_QUERY}{_FRAGMENT})"
_EMAIL_LOCAL = "[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*"
_EMAIL = f"{_EMAIL_LOCAL}@(?:{_HOSTNAME}|\\[{_IPV4}\\])"
_DURATION_TIME = f"T(?:{_D}+H(?:{_D}+M(?:{_D}+S)?)?|{_D}+M(?:{_D}+S)?|{_D}+S)"
_DURATION = (
    f"P(?:(?:{_D}+D|{_D}+M(?:{_D}+D)?|{_D}+Y(?:{_D}+M(?:{_D}+D)?)?)(?:{_DURATION_TIME})?"
    f"|{_DURATION_TIME}|{_D}+W)"
)
_JSON_POINTER = "(?:/(?:[^/~]|~[01])*)*"

FORMATS: dict[str, str] = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}[tT]{_TIME}",
    "email": _EMAIL,
    "idn-email": "[^@\\s]+@[^@\\s]+",
    "uuid": f"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}",
    "uri": _URI,
    "uri-reference": _URI_REFERENCE,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "hostname": _HOSTNAME,
    "duration": _DURATION,
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})",
}
"""Enforced formats: name -> pattern that the whole decoded string must match."""


def format_pattern(name: str) -> str | None:
    """The pattern enforcing ``name``, or None for formats that are annotations only."""
    return FORMATS.get(name)
