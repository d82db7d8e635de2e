"""The HTTP client of the SDK clients: a cap on how many bytes one response may bring.

The SDKs read a whole response body into memory before parsing it, so a hostile or broken
endpoint answering 2 GB costs 2 GB (and more while it is parsed). The transport here counts
the bytes as they arrive and stops at ``BUILDBENCH_LIMIT_MODEL_RESPONSE_BYTES`` (a length
header over it is refused before reading); it asks for an uncompressed body, and refuses a
compressed one, since a small gzip body can inflate past any cap after the count.

The SDKs bring their own copy of httpx (``httpx2`` in current releases, ``httpx`` before),
so the transport is built on whichever module the given SDK's client class comes from.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import AsyncIterator
from typing import Any

from buildbench.limits import limit

__all__ = ["ResponseTooLarge", "capped_http_client"]


class ResponseTooLarge(Exception):
    """A model endpoint's answer over the byte cap (or compressed, so not countable)."""


def _over(cap: int) -> ResponseTooLarge:
    return ResponseTooLarge(f"the response is over the {cap}-byte limit (BUILDBENCH_LIMIT_MODEL_RESPONSE_BYTES)")


def capped_http_client(sdk: Any) -> Any:
    """``sdk.DefaultAsyncHttpxClient`` (the SDK's defaults) on the capped transport."""
    client_class = sdk.DefaultAsyncHttpxClient
    httpx = importlib.import_module(client_class.__mro__[1].__module__.partition(".")[0])
    return client_class(transport=_transport_class(httpx)())


@functools.cache
def _transport_class(httpx: Any) -> Any:
    class CountedStream(httpx.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, cap: int) -> None:
            self.inner, self.cap = inner, cap

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self.inner:
                seen += len(chunk)
                if seen > self.cap:
                    raise _over(self.cap)
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    class CappedTransport(httpx.AsyncBaseTransport):  # type: ignore[misc]
        """The SDK's transport whose responses stop at the byte cap (read per request, so a
        changed limit applies to the next call)."""

        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["Accept-Encoding"] = "identity"
            response = await self.inner.handle_async_request(request)
            cap = limit("model_response_bytes")
            length = response.headers.get("Content-Length", "")
            encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                await response.aclose()
                raise ResponseTooLarge(f"the response is compressed ({encoding}) although an uncompressed one "
                                       "was asked for; its size cannot be bounded")
            if length.isdigit() and int(length) > cap:
                await response.aclose()
                raise _over(cap)
            return httpx.Response(response.status_code, headers=response.headers,
                                  stream=CountedStream(response.stream, cap), extensions=response.extensions)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return CappedTransport
