"""Guards for text that comes from data: slugs for paths, links only to known https hosts.

GUIDE section 6: the site never executes scraped text. Templates autoescape; these helpers
keep data-built paths inside the output folder and data-built links on https to hosts the
project cites.
"""

import re
from urllib.parse import quote, urlsplit

_SLUG = re.compile(r"^[a-z0-9][a-z0-9._+-]{0,80}$")
# Hosts the bundled data cites (vendor datasheets, spec databases, retailers, code hosts).
KNOWN_HOSTS = (
    "nvidia.com",
    "nvidia.cn",
    "amd.com",
    "intel.com",
    "techpowerup.com",
    "amazon.com",
    "ebay.com",
    "ebay.co.uk",
    "newegg.com",
    "github.com",
    "mlcommons.org",
    "lambdalabs.com",
    "lambda.ai",
    "epoch.ai",
)
# "owner/repo path@commit": the citation format of the bundled benchmark and cloud files.
_GITHUB_CITATION = re.compile(
    r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+) (?P<path>[\w./+=,-]+)@(?P<commit>[0-9a-f]{7,40})$"
)


def slug(value: str) -> str:
    """`value` if it is a safe file-name slug (a catalog GPU id), else ValueError."""
    if not _SLUG.match(value) or ".." in value:
        raise ValueError(f"not a safe slug: {value!r}")
    return value


def safe_url(url: str | None) -> str | None:
    """`url` if it is https on a known host (or a subdomain of one), else None."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" or not host:
        return None
    if any(host == h or host.endswith("." + h) for h in KNOWN_HOSTS):
        return parts.geturl()
    return None


def citation_url(citation: str | None) -> str | None:
    """A GitHub link for an 'owner/repo path@commit' citation (None for other forms)."""
    if not citation:
        return None
    match = _GITHUB_CITATION.match(citation.strip())
    if not match:
        return None
    return safe_url(
        f"https://github.com/{match['repo']}/blob/{match['commit']}/{quote(match['path'])}"
    )
