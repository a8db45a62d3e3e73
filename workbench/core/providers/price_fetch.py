"""HTTP for the public price lists (no account, no cloud SDK): JSON pages and streamed files.

The public price lists (AWS Price List offer files, the Azure Retail Prices API, …) are plain HTTPS
and need no credentials, so a user can compare clouds before having any account.  A :class:`Fetcher`
gives a plugin two things: :meth:`Fetcher.get_json` (one page, retried on 429 and 5xx) and
:meth:`Fetcher.open` (a streamed response to read chunk by chunk: the AWS files are gigabytes).
``base_url`` replaces a price list's host (a mirror, or a local test server).

Threading: a Fetcher holds no connection between calls; use one per worker.  Blocking, with a
connect/read timeout on every request.  Failure: TransientError naming the URL's host and the cause
(never a traceback); a cancelled fetch raises :class:`Cancelled`.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Callable, Mapping

from workbench import __version__
from workbench.core.domain.errors import TransientError, WorkbenchError

USER_AGENT = f"cloud-gpu-workbench/{__version__} (price catalog)"


class Cancelled(WorkbenchError):
    """The user stopped a price update."""

    kind = "cancelled"


class Fetcher:
    """Fetches public price data; ``base_url`` (scheme://host[:port][/prefix]) replaces the default host."""

    def __init__(self, base_url: str | None = None, timeout: float = 30.0, retries: int = 2,
                 progress: Callable[[str], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> None:
        self.base_url = base_url.rstrip("/") if base_url else None
        self.timeout = timeout
        self.retries = retries
        self.progress = progress or (lambda _text: None)
        self.cancelled = cancelled or (lambda: False)

    def url(self, default_base: str, path: str) -> str:
        """``path`` under ``base_url`` (or ``default_base``); absolute URLs in ``path`` keep their own host
        unless a ``base_url`` is set (a mirror serves every path of the list)."""
        if path.startswith(("http://", "https://")):
            if not self.base_url:
                return path
            parts = urllib.parse.urlsplit(path)
            path = urllib.parse.urlunsplit(("", "", parts.path, parts.query, ""))
        return (self.base_url or default_base.rstrip("/")) + (path if path.startswith("/") else "/" + path)

    def check(self) -> None:
        if self.cancelled():
            raise Cancelled("the price update was stopped")

    def open(self, url: str) -> IO[bytes]:
        """A streamed response (close it); TransientError when the server cannot be read."""
        self.check()
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept": "application/json"})
        for attempt in range(self.retries + 1):
            try:
                return urllib.request.urlopen(request, timeout=self.timeout)  # noqa: S310 - https or a test server
            except urllib.error.HTTPError as exc:
                if (exc.code == 429 or exc.code >= 500) and attempt < self.retries:
                    time.sleep(min(float(exc.headers.get("Retry-After") or 1), 5.0))
                    continue
                raise TransientError(f"the price list at {_host(url)} answered HTTP {exc.code}",
                                     hint="try again later; prices stay as they were") from None
            except (OSError, ValueError) as exc:
                if attempt < self.retries:
                    time.sleep(0.2 * (attempt + 1))
                    continue
                raise TransientError(f"cannot reach the price list at {_host(url)}: "
                                     f"{getattr(exc, 'reason', None) or type(exc).__name__}",
                                     hint="check the network connection (no account is needed)") from None
        raise TransientError(f"the price list at {_host(url)} kept failing")  # pragma: no cover

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """One JSON document (``params`` added to the query); TransientError when it is not JSON."""
        if params:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)
        with self.open(url) as answer:
            raw = answer.read()
        try:
            doc = json.loads(raw)
        except ValueError:
            raise TransientError(f"the price list at {_host(url)} answered with something that is not JSON",
                                 hint="try again later; a proxy may have answered instead") from None
        if not isinstance(doc, dict):
            raise TransientError(f"the price list at {_host(url)} answered with an unexpected document")
        return doc


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url
