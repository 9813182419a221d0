"""The MCP side of the bridge: one stdio MCP server, as a task that may fail alone.

Server starts the server named in the config, initializes the session, runs
the setup tools, then makes one tool call per request. A call that fails
while the server still answers a ping fails that request only; a server that
died or hangs is marked unusable, and the bridge starts a new one before the
next request. The MCP SDK (and anyio) is imported only here, and late, so the
rest of the bridge loads without it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, TextIO

from enginekit import brief
from mcpbridge_config import Config, ToolFailure
from mcpbridge_hits import result_text

PING_TIMEOUT = 5.0


class Server:
    """One MCP server connection, run in its own task so its failure stays contained."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.reason: str | None = None  # why it is not usable, once it is not
        self._send: Any = None
        self._scope: Any = None
        self._done: Any = None

    async def start(self, tg: Any) -> None:
        """Start, initialize and set up; raises ToolFailure when it cannot."""
        import anyio

        ready = anyio.Event()
        self._done = anyio.Event()
        self._send, receive = anyio.create_memory_object_stream(1)
        tg.start_soon(self._run, receive, ready)
        with anyio.move_on_after(self.config.start_timeout) as waited:
            await ready.wait()
        if waited.cancelled_caught:
            self.reason = f"server not ready within {self.config.start_timeout:g}s"
            await self.stop(polite=False)
        if self.reason is not None:
            raise ToolFailure(self.reason)

    async def _run(self, requests: Any, ready: Any) -> None:
        import anyio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        config = self.config
        params = StdioServerParameters(
            command=config.command, args=config.args, env={**os.environ, **config.env},
            cwd=config.cwd,
        )
        try:
            with anyio.CancelScope() as self._scope:
                async with (stdio_client(params, errlog=sys.stderr) as (read, write),
                            ClientSession(read, write) as session):
                    await session.initialize()
                    for name, arguments in config.setup:
                        reply = await session.call_tool(name, arguments)
                        data = as_dict(reply)
                        if data.get("isError"):
                            raise ToolFailure(f"setup tool {name!r} failed: "
                                              + brief(result_text(data)))
                    ready.set()
                    async for arguments, answer in requests:
                        with answer:  # closing it tells the caller when no reply comes
                            answer.send_nowait(await self._call(session, arguments))
        except Exception as exc:  # the server's failure is one request's failure, not ours
            self.reason = self.reason or f"MCP server failed: {describe(exc)}"
        finally:
            self.reason = self.reason or "MCP server connection closed"
            while True:  # requests still queued get their answer: no server
                try:
                    _, answer = requests.receive_nowait()
                except Exception:
                    break
                with answer:
                    answer.send_nowait(ToolFailure(self.reason))
            requests.close()
            ready.set()
            self._done.set()

    async def _call(self, session: Any, arguments: dict[str, Any]) -> Any:
        try:
            return as_dict(await session.call_tool(self.config.tool, arguments))
        except Exception as exc:
            problem = describe(exc)
        import anyio

        with anyio.move_on_after(PING_TIMEOUT):
            with contextlib.suppress(Exception):
                await session.send_ping()
                return ToolFailure(f"tool call failed: {problem}")  # only this call failed
        self.reason = failure = f"MCP server died: {problem}"
        if self._scope is not None:
            self._scope.cancel()
        return ToolFailure(failure)

    async def call(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call; raises ToolFailure (and leaves the server marked unusable if dead)."""
        import anyio

        answer_send, answer_receive = anyio.create_memory_object_stream(1)
        try:
            await self._send.send((arguments, answer_send))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise ToolFailure(self.reason or "MCP server connection closed") from None
        with anyio.move_on_after(self.config.timeout) as waited:
            try:
                reply = await answer_receive.receive()
            except anyio.EndOfStream:
                reply = ToolFailure(self.reason or "MCP server connection closed")
        if waited.cancelled_caught:
            self.reason = f"no answer within {self.config.timeout:g}s; server restarted"
            await self.stop(polite=False)
            raise ToolFailure(self.reason)
        if isinstance(reply, ToolFailure):
            raise reply
        return reply

    @property
    def usable(self) -> bool:
        return self.reason is None

    async def stop(self, *, polite: bool) -> None:
        """EOF to the server (polite) or cancel its task; wait until its task is over."""
        import anyio

        if self._send is not None:
            await self._send.aclose()
        if not polite and self._scope is not None:
            self._scope.cancel()
        if self._done is not None:
            with anyio.move_on_after(30):
                await self._done.wait()
        if self.reason is None:
            self.reason = "stopped"


def as_dict(result: Any) -> dict[str, Any]:
    """A CallToolResult as a JSON dict with the wire's camelCase keys (SDK 1.x and 2.x)."""
    if isinstance(result, dict):
        return result
    data = result.model_dump(mode="json", by_alias=True)
    for snake, camel in (("structured_content", "structuredContent"), ("is_error", "isError")):
        if snake in data and camel not in data:
            data[camel] = data.pop(snake)
    return data


def describe(exc: BaseException) -> str:
    """An exception (or a group of them) in one line."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        return "; ".join(describe(e) for e in inner)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {brief(text)}" if text else type(exc).__name__


async def list_tools(config: Config, out: TextIO) -> int:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=config.command, args=config.args,
                                   env={**os.environ, **config.env}, cwd=config.cwd)
    async with (stdio_client(params, errlog=sys.stderr) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        listed = await session.list_tools()
        tools = [tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                 for tool in listed.tools]
    out.write(json.dumps({"tools": tools}, indent=2) + "\n")
    out.flush()
    return 0
