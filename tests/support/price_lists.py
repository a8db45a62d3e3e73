"""A local server for the public price lists (real HTTP on 127.0.0.1, no internet needed).

Serves, from ``tests/fixtures/price_lists/synthetic`` (or a folder given):

- the AWS Price List bulk files at their real paths (``/offers/v1.0/aws/AmazonEC2/current/<region>/index.json``,
  the Savings Plans ``region_index.json`` and region files), streamed in small chunks so a client
  must read them piece by piece;
- the Azure Retail Prices API at ``/api/retail/prices``: the ``$filter`` of the real API is honoured
  for ``armRegionName eq '…'`` and ``armSkuName eq '…'`` (or-ed), ``currencyCode`` is echoed, items
  are paged ``page_size`` at a time with an absolute ``NextPageLink`` (``$skip``), and
  ``savingsPlan`` is only sent when ``api-version=2023-01-01-preview`` is asked for, as the real
  API does.

``fail[path_prefix] = status`` answers that status (``"garbage"``: 200 with a non-JSON body).
``hits`` records every path asked.  Start/stop with the context manager.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SYNTHETIC = Path(__file__).resolve().parents[1] / "fixtures" / "price_lists" / "synthetic"


class PriceListServer:
    def __init__(self, root: Path = SYNTHETIC, page_size: int = 5, chunk: int = 4096) -> None:
        self.root = root
        self.page_size = page_size
        self.chunk = chunk
        self.fail: dict[str, object] = {}
        self.hits: list[str] = []
        self.items = json.loads((root / "azure-retail-items.json").read_text())["Items"]
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                server.hits.append(self.path)
                parsed = urllib.parse.urlsplit(self.path)
                for prefix, status in server.fail.items():
                    if parsed.path.startswith(prefix):
                        if status == "garbage":
                            return self._send(200, b"<html>not json", "text/html")
                        return self._send(int(status), b"{}")  # type: ignore[arg-type]
                if parsed.path == "/api/retail/prices":
                    return self._send(200, json.dumps(server.retail(parsed.query, self.headers.get("Host"))).encode())
                path = (server.root / "aws-offers" / parsed.path.lstrip("/")).resolve()
                if server.root not in path.parents or not path.is_file():
                    return self._send(404, b'{"message": "not found"}')
                return self._stream(path.read_bytes())

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i in range(0, len(body), server.chunk):
                    part = body[i:i + server.chunk]
                    self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def retail(self, query: str, host: str | None) -> dict:
        q = urllib.parse.parse_qs(query)
        flt = (q.get("$filter") or [""])[0]
        regions = set(re.findall(r"armRegionName eq '([^']+)'", flt))
        skus = set(re.findall(r"armSkuName eq '([^']+)'", flt))
        preview = (q.get("api-version") or [""])[0] == "2023-01-01-preview"
        items = [dict(i) for i in self.items if (not regions or i["armRegionName"] in regions)
                 and (not skus or i["armSkuName"] in skus)]
        if not preview:
            for i in items:
                i.pop("savingsPlan", None)
        skip = int((q.get("$skip") or ["0"])[0])
        page = items[skip:skip + self.page_size]
        nxt = None
        if skip + self.page_size < len(items):
            args = {k: v[0] for k, v in q.items()}
            args["$skip"] = str(skip + self.page_size)
            nxt = f"http://{host}/api/retail/prices?" + urllib.parse.urlencode(args, quote_via=urllib.parse.quote)
        return {"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
                "Items": page, "NextPageLink": nxt, "Count": len(page)}

    def __enter__(self) -> "PriceListServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
